"""The pure rules of the browser test (tests/paper/test_book_browser.py), checked without a browser:
sentences of a page's prose and the share two pages have in common."""

from __future__ import annotations

from test_book_browser import MAX_OVERLAP, overlap, sentences, words


def test_sentences_are_normalised_and_short_ones_dropped():
    text = (
        "The Result  Holds on these vectors. Too short here.\n"
        "Noise raises RankMe and sends retrieval to chance! Does the offset move it? Yes it does, clearly so.\n"
        "A heading with no full stop at all\n"
        "the result holds on these vectors."
    )
    assert sentences(text) == {
        "the result holds on these vectors.",
        "noise raises rankme and sends retrieval to chance!",
        "does the offset move it?",
        "yes it does, clearly so.",
        "a heading with no full stop at all",
    }
    assert sentences("") == set() and sentences("one two three four") == set()


def test_decimals_and_abbreviated_numbers_do_not_split_a_sentence():
    assert sentences("P@10 falls from 0.79 to 0.33 under noise at s = 0.99 here.") == {
        "p@10 falls from 0.79 to 0.33 under noise at s = 0.99 here."
    }


def test_overlap_is_the_share_of_the_shorter_page():
    a = {f"sentence number {i} of page a" for i in range(10)}
    b = set(list(sorted(a))[:3]) | {"a sentence only page b says"}
    assert overlap(a, b) == 3 / 4
    assert overlap(b, a) == overlap(a, b)
    assert overlap(a, set()) == 0.0 and overlap(a, a) == 1.0
    assert overlap(a, {"x y z w v"}) == 0.0
    assert overlap(a, b) > MAX_OVERLAP  # a page repeating most of a short page fails the rule


def test_words_counts_whitespace_separated_tokens():
    assert words("Stress tests\n\nNoise  raises RankMe.") == 5 and words("") == 0

"""The WordNet 3.0 reader: every field on a small database in the real format, the counts on the installed one."""

import re
from collections import Counter
from pathlib import Path

import pytest

from embdiag.data.errors import DataFileNotFoundError, DataFormatError
from embdiag.data.wordnet import DEFAULT_DIR, FILES, LEXNAMES, Pointer, read_file, read_wordnet, split_gloss

LICENSE = [
    "  1 This software and database is being provided to you, the LICENSEE, by  ",
    "  2 Princeton University under the following license.  By obtaining, using  ",
]
# One file's synsets, "{}" where the 8-digit byte offset goes (wndb(5); lines from WordNet 3.0).
LINES = {
    "n": [
        "{} 05 n 03 dog 0 domestic_dog 0 Canis_familiaris 0 002 @ 02083346 n 0000 ~ 01322604 n 0000 | a member "
        'of the genus Canis (probably descended from the common wolf); occurs in many breeds; "the dog barked all '
        'night"  ',
        "{} 03 n 01 entity 0 000 | that which is perceived or known or inferred to have its own distinct existence  ",
    ],
    "v": [
        "{} 29 v 04 breathe 0 take_a_breath 0 respire 0 suspire 3 002 + 03110323 a 0301 $ 00002325 v 0000 02 + 02 "
        '00 + 08 0a | draw air into, and expel out of, the lungs; "I can breathe better when the air is clean"; '
        '"The patient is respiring"  '
    ],
    "a": [
        "{} 00 a 01 able 0 001 ! 00002098 a 0101 | (usually followed by `to') having the necessary means or skill "
        'or know-how or authority to do something; "able to swim"; "she was able to program her computer"  ',
        "{} 00 s 0a w0 0 w1 1 w2 2 w3 3 w4 4 w5 5 w6 6 w7 7 w8 8 w9(p) b 001 & 00003356 a 0000 | coming into "
        'existence; "an emergent republic"  ',
    ],
    "r": ['{} 02 r 01 barely 0 000 | only a very short time before; "they could barely hear"  '],
}


def write_database(folder: Path, lines=LINES) -> dict[str, list[int]]:
    """Write the four data files with their license lines; return each file's synset offsets."""
    folder.mkdir(parents=True, exist_ok=True)
    offsets = {}
    for pos, name in FILES.items():
        text, offsets[pos] = "".join(f"{line}\n" for line in LICENSE), []
        for line in lines[pos]:
            offsets[pos].append(len(text.encode()))
            text += line.replace("{}", f"{len(text.encode()):08d}", 1) + "\n"
        (folder / name).write_bytes(text.encode())
    return offsets


@pytest.fixture
def database(tmp_path):
    return tmp_path / "wordnet", write_database(tmp_path / "wordnet")


def test_every_field_of_a_noun(database):
    folder, offsets = database
    dog, entity = read_file(folder / "data.noun", "n")
    assert dog.offset == offsets["n"][0] and dog.id == f"{offsets['n'][0]:08d}-n"
    assert (dog.pos, dog.ss_type, dog.lexname) == ("n", "n", "noun.animal")
    assert dog.words == ("dog", "domestic_dog", "Canis_familiaris") and dog.lex_ids == (0, 0, 0)
    assert dog.pointers == (Pointer("@", 2083346, "n", 0, 0), Pointer("~", 1322604, "n", 0, 0))
    assert dog.frames == ()
    assert dog.definition == (
        "a member of the genus Canis (probably descended from the common wolf); occurs in many breeds"
    )
    assert dog.examples == ("the dog barked all night",)
    assert entity.lexname == "noun.Tops" and entity.examples == () and entity.pointers == ()
    assert entity.definition.startswith("that which is perceived")


def test_verbs_carry_frames_and_pointers_their_word_numbers(database):
    [breathe] = read_file(database[0] / "data.verb", "v")
    assert breathe.lexname == "verb.body" and breathe.lex_ids == (0, 0, 0, 3)
    assert breathe.pointers[0] == Pointer("+", 3110323, "a", 3, 1)
    assert breathe.frames == ((2, 0), (8, 10))  # w_num is hexadecimal
    assert breathe.examples == ("I can breathe better when the air is clean", "The patient is respiring")
    assert breathe.definition == "draw air into, and expel out of, the lungs"


def test_satellites_are_adjectives_that_keep_their_type(database):
    folder, offsets = database
    able, satellite = read_file(folder / "data.adj", "a")
    assert (able.pos, able.ss_type, able.lexname) == ("a", "a", "adj.all")
    assert (satellite.pos, satellite.ss_type) == ("a", "s") and satellite.id == f"{offsets['a'][1]:08d}-a"
    assert len(satellite.words) == 10 and satellite.words[-1] == "w9(p)"  # w_cnt 0a is hexadecimal
    assert satellite.lex_ids[-1] == 11  # lex_id b is hexadecimal
    assert able.definition.startswith("(usually followed by `to') having") and len(able.examples) == 2


def test_the_whole_database_in_file_order(database):
    synsets = read_wordnet(database[0])
    assert [s.pos for s in synsets] == ["n", "n", "v", "a", "a", "r"]
    assert synsets[-1].lexname == "adv.all" and synsets[-1].examples == ("they could barely hear",)


def test_glosses_split_into_definition_and_quoted_examples():
    assert split_gloss('complete change; "the permutations..."- Henry Miller') == (
        "complete change",
        ("the permutations...",),
    )
    assert split_gloss('act of assembling: "mobilization of the troops"') == (
        "act of assembling",
        ("mobilization of the troops",),
    )
    assert split_gloss("no example at all") == ("no example at all", ())


def _broken(pos: str, index: int, old: str, new: str) -> dict:
    lines = {k: list(v) for k, v in LINES.items()}
    lines[pos][index] = lines[pos][index].replace(old, new, 1)
    return lines


@pytest.mark.parametrize(
    "pos, index, old, new, message",
    [
        ("n", 1, " | ", " ", "no gloss"),
        ("n", 1, "{} 03", "{} 46", "lex_filenum 46 is not in lexnames(5)"),
        ("n", 0, " 03 dog", " 0x dog", "w_cnt '0x' is not a hexadecimal number"),
        ("n", 0, " 002 @", " 003 @", "the line ends before its fields do"),
        ("n", 0, " 002 @", " 001 @", "4 unexpected field(s) before the gloss: '~ 01322604 n 0000'"),
        ("v", 0, "02 + 02", "02 - 02", "verb frame without '+'"),
        ("a", 1, " 00 s ", " 00 n ", "ss_type 'n' does not belong in the data.adj file"),
        ("n", 0, " 0000 ~", " 000 ~", "malformed pointer"),
    ],
)
def test_parse_errors_name_the_file_and_line(tmp_path, pos, index, old, new, message):
    write_database(tmp_path, _broken(pos, index, old, new))
    line = len(LICENSE) + index + 1
    where = re.escape(f"{tmp_path / FILES[pos]}:{line}: ")
    with pytest.raises(DataFormatError, match=where + ".*" + re.escape(message)):
        read_wordnet(tmp_path)


def test_an_offset_that_is_not_the_byte_offset_is_refused(tmp_path):
    write_database(tmp_path)
    path = tmp_path / "data.noun"
    path.write_bytes(path.read_bytes().replace(b"  2 Princeton", b"  2  Princeton"))  # every synset 1 byte later
    with pytest.raises(
        DataFormatError, match=re.escape(f"{path}:3: offset field 00000153 differs from the line's byte offset 154")
    ):
        read_wordnet(tmp_path)


def test_missing_files_say_how_to_install_them(tmp_path):
    with pytest.raises(DataFileNotFoundError, match="apt-get install wordnet-base"):
        read_wordnet(tmp_path / "nowhere")
    write_database(tmp_path)
    (tmp_path / "data.adv").unlink()
    with pytest.raises(DataFileNotFoundError, match="data.adv: WordNet data file not found"):
        read_wordnet(tmp_path)


installed = pytest.mark.skipif(
    not (DEFAULT_DIR / "data.noun").is_file(), reason="Debian's wordnet-base is not installed (make test installs it)"
)


@installed
def test_the_installed_database_is_wordnet_3_0():
    synsets = read_wordnet()
    assert len(synsets) == 117_659 and len({s.id for s in synsets}) == 117_659
    assert Counter(s.pos for s in synsets) == {"n": 82_115, "v": 13_767, "a": 18_156, "r": 3_621}
    assert Counter(s.ss_type for s in synsets)["s"] == 10_693
    assert {s.lexname for s in synsets} == set(LEXNAMES) and len(LEXNAMES) == 45
    assert sum(len(s.examples) for s in synsets) == 48_339 and sum(bool(s.examples) for s in synsets) == 32_923
    assert all(s.definition for s in synsets)
    dog = next(s for s in synsets if s.id == "02084071-n")
    assert dog.lexname == "noun.animal" and dog.words[0] == "dog" and dog.examples == ("the dog barked all night",)

"""On a real encoder: the design-B findings on the reference encoders and on WordLlama/WordNet.

The four fixed-encoder chapters (stress tests, compression, neighbour stability, caption
retrieval) run again on a real pretrained *text* encoder, WordLlama ``l2_supercat``, over a
real lexical database, a committed sample of WordNet 3.0 (declared in ``notebooks/variants.yml``).
:func:`variant_note` is what a chapter run on WordNet says first about that mapping (empty for
every other dataset, so the default chapters are unchanged); :func:`encoder_findings` computes every
design-B verdict per encoder of :data:`ENCODERS` with
:func:`~embdiag.paper.conclusions.fixed_encoder_findings`, each section at the parameters its
page on that encoder was executed with (:func:`section_parameters`: the chapters' defaults and
the declared variants of ``notebooks/variants.yml``, declared once there), so it reads the
pages' own measurements; :func:`comparison` puts them side by side and
:func:`comparison_summary` says in two sentences how many hold on each and which differ.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping

import pandas as pd

from . import conclusions
from .conclusions import FIXED_ENCODER as SECTIONS
from ..metrics.inference import CONTRADICTED, HOLDS, INCONCLUSIVE, NOT_TESTABLE
from ..study.findings import NOT_MEASURED, STUDY
from ..view.result import Result, box
from .findings import in_words
from .scoreboard import BREAK

WORDNET = "WordLlama / WordNet"
#: Encoders compared, ``{label: (encoder, dataset)}``: the chapters' ``encoder`` and ``dataset``
#: parameters of each; its other settings are its pages' (:func:`section_parameters`).
ENCODERS: dict[str, tuple[str, str]] = {
    "reference-cnn": ("reference-cnn", "procedural"),
    "reference-vit": ("reference-vit", "procedural"),
    WORDNET: ("wordllama:l2_supercat", "wordnet"),
}

#: What a WordNet page says first, plainly (Markdown).
_PLAINLY = (
    "**On a real encoder.** This page is the chapter run unchanged on a real pretrained *text* encoder, "
    "WordLlama `l2_supercat` (256-dimensional, trained with Matryoshka prefixes 128 and 64), over a real "
    "lexical database, a fixed sample of WordNet 3.0: not images, and neither BDD100K nor COCO. Items are "
    "glosses; their attributes are part of speech (`pos`) and lexicographer category (`lexname`)."
)
#: How the chapter's words map onto WordNet, and what the mapping cannot say (HTML, shown on demand).
_MAPPING = (
    "Each item is a synset's gloss (its definition); its attributes are its part of speech (<code>pos</code>) "
    "and its lexicographer category (<code>lexname</code>, e.g. noun.animal), in place of weather, scene and "
    "time of day. Where the text below speaks of images, scenes or driving attributes, read glosses and these "
    "two labels; the study's numbers beside this run's remain EmbeddingGemma's on images. What the mapping "
    "cannot say: whether the study's findings hold for images or for its encoder; only whether the same "
    "instruments respond the same way on a real encoder's vectors of real text, labelled by lexicographers "
    "rather than by the study's annotations."
)
_CHAPTER = {
    "stress tests": (
        "The headline attribute is `lexname`, not `pos` (the first label): like the study's weather it says what "
        "an item is about, with many classes and a low random floor, whereas the part of speech is a grammatical "
        "class of four, most glosses nouns, which a random neighbour shares more often than not."
    ),
    "compression": (
        "The dimensions kept are 128 and 64, the prefixes WordLlama was trained with, in place of the study's 512, "
        "256 and 128 of 768. The findings are checked at the dimensions they name: those at 512 or 256 are not "
        "measured here, those at 128 are checked at half the native width (not a sixth); the criteria's *six "
        "columns* are the four of the two WordNet attributes (BA and P@10 of `pos` and `lexname`), and `lexname` "
        "takes weather's place."
    ),
    "neighbour stability": "The queries are the evaluation glosses, each searching the others.",
    "caption retrieval": (
        'The study\'s "images" are the retrieval glosses and their "captions" each gloss\'s example sentences '
        "(WordNet's usage examples, an unequal number per gloss where COCO has five per image): text→image is "
        "example→gloss (which definition does this example illustrate?), image→text gloss→examples. Both sides "
        "are text embedded by one model without prompts, so the query and document roles are the same vectors, "
        "and nothing here is cross-modal; category P@10 uses `lexname`. The prefixes are 128 and 64 (the "
        "study's 256 and 128 of 768), so *256-d costs little* is not measured and the 128-d findings are "
        "checked at half the native width, not a sixth."
    ),
}


def _html(markdown: str) -> str:
    """The inline Markdown of :data:`_CHAPTER` (``code``, *emphasis*) as HTML."""
    text = html.escape(markdown, quote=False)
    return re.sub(r"\*([^*]+)\*", r"<em>\1</em>", re.sub(r"`([^`]+)`", r"<code>\1</code>", text))


def variant_note(dataset: str, section: str) -> str:
    """What a design-B page says first on ``dataset`` ``"wordnet"`` (Markdown, ending in a blank
    line): which encoder and data, plainly, then how the chapter maps onto them, collapsed;
    ``""`` for every other dataset, so the chapters' default outputs do not change."""
    if section not in _CHAPTER:
        raise ValueError(f"section: expected one of {list(_CHAPTER)}, got {section!r}")
    if dataset != "wordnet":
        return ""
    detail = f"{_MAPPING} {_html(_CHAPTER[section])}"
    return (
        f"{_PLAINLY}\n\n"
        '<details class="embdiag-more"><summary>How this chapter reads on WordNet, and what the mapping cannot say'
        f"</summary><p>{detail}</p></details>\n\n"
    )


def load_vectors(encoder: str, dataset: str) -> tuple:
    """The labelled and the caption vectors of ``encoder`` on ``dataset``."""
    from ..encoders.vectors import caption_vectors, driving_vectors

    return driving_vectors(encoder, dataset), caption_vectors(encoder, dataset)


def section_parameters(encoder: str, dataset: str, layout=None) -> dict[str, dict]:
    """``{section: parameters}`` of each design-B section: the parameters with which the section's
    chapter runs on ``encoder`` and ``dataset`` (the book's page, or a declared variant of
    ``notebooks/variants.yml``), or the chapter's defaults with that encoder and dataset where
    neither does."""
    from . import pipeline

    layout = pipeline.DEFAULT if layout is None else layout
    declared = [(spec["chapter"], spec["parameters"]) for spec in pipeline.variants(layout).values()]
    chapters, pages = dict(conclusions.SECTIONS), [*pipeline.executed(layout).values(), *declared]
    out = {}
    for section in SECTIONS:
        defaults = pipeline.parameters(chapters[section], layout)
        runs = [{**defaults, **given} for source, given in pages if source == chapters[section]]
        mine = [p for p in runs if (p["encoder"], p["dataset"]) == (encoder, dataset)]
        out[section] = mine[0] if mine else {**defaults, "encoder": encoder, "dataset": dataset}
    return out


def encoder_findings(
    encoders: Mapping[str, tuple[str, str]] = ENCODERS,
    *,
    load: Callable[[str, str], tuple] = load_vectors,
    pages: Callable[[str, str], Mapping] = section_parameters,
    **common,
) -> dict[str, pd.DataFrame]:
    """``{label: verdicts}``: the design-B verdicts of each encoder (:func:`conclusions.stack` of
    :func:`conclusions.fixed_encoder_findings`), each section at ``pages(encoder, dataset)``'s
    parameters (default :func:`section_parameters`) with ``common`` (e.g. ``k``, ``seed``,
    ``n_draws``) on top; ``load(encoder, dataset)`` gives the labelled and caption vectors
    (default :func:`load_vectors`)."""
    out = {}
    for label, (encoder, dataset) in encoders.items():
        vectors, captions = load(encoder, dataset)
        given = {section: {**p, **common} for section, p in pages(encoder, dataset).items()}
        out[label] = conclusions.stack(conclusions.fixed_encoder_findings(vectors, captions, given))
    return out


def comparison(verdicts: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per design-B finding (index: section, finding; with its kind, criterion and
    margin), and per encoder of ``verdicts`` (``{label: stacked verdicts}``) two columns:
    ``verdict`` (holds, contradicted, inconclusive, not testable, not measured) and ``numbers``
    (the deciding numbers and the interval against the margin, in words).

    Raises:
        ValueError: no encoders, or the encoders' tables do not list the same findings.
    """
    if not verdicts:
        raise ValueError("verdicts: no encoders to compare")
    frames = {label: v[v["section"].isin(SECTIONS)].set_index(["section", "finding"]) for label, v in verdicts.items()}
    first = next(iter(frames.values()))
    for label, f in frames.items():
        if list(f.index) != list(first.index):
            raise ValueError(f"verdicts: {label!r} lists other findings than {next(iter(frames))!r}")
    columns = {("", "kind"): first["kind"], ("", "criterion"): first["criterion"], ("", "margin"): first["margin"]}
    for label, f in frames.items():
        words = in_words(f.reset_index())["verdict"].to_numpy()
        columns[(label, "verdict")] = pd.Series(words, index=f.index)
        columns[(label, "numbers")] = f["this run"] + "; " + f["reason"]
    out = pd.DataFrame(columns)
    out.columns = pd.MultiIndex.from_tuples(out.columns)
    return out


def _labels(table: pd.DataFrame) -> list[str]:
    return [c for c in table.columns.get_level_values(0).unique() if c]


def verdict_table(table: pd.DataFrame) -> pd.DataFrame:
    """The page's first table from a :func:`comparison`: per finding, one column per encoder,
    its verdict, after its kind (the study's, this project's addition, or a scope statement);
    the criteria are in each chapter's own table."""
    out = table[[("", "kind")] + [(label, "verdict") for label in _labels(table)]]
    out.columns = ["kind", *_labels(table)]
    return out


def numbers_table(table: pd.DataFrame) -> pd.DataFrame:
    """The page's second table from a :func:`comparison`: the deciding numbers of every finding
    on each encoder, one row per finding and encoder (index: section, finding, encoder)."""
    rows = [
        {
            "section": section,
            "finding": finding,
            "encoder": label,
            "verdict": table.loc[(section, finding), (label, "verdict")],
            "numbers": table.loc[(section, finding), (label, "numbers")],
        }
        for section, finding in table.index
        for label in _labels(table)
    ]
    return pd.DataFrame(rows).set_index(["section", "finding", "encoder"])


def tallies(table: pd.DataFrame) -> pd.DataFrame:
    """Per encoder of a :func:`comparison`, the study's findings only: how many have each verdict."""
    labels = _labels(table)
    study = table[table[("", "kind")] == STUDY]
    verdicts = (HOLDS, CONTRADICTED, INCONCLUSIVE, NOT_TESTABLE, NOT_MEASURED)
    return pd.DataFrame(
        {label: {v: int((study[(label, "verdict")] == v).sum()) for v in verdicts} for label in labels}
    ).T


def differing(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of a :func:`comparison` whose verdicts are not the same on every encoder."""
    labels = _labels(table)
    verdicts = table[[(label, "verdict") for label in labels]]
    return table[verdicts.nunique(axis=1) > 1]


def tally_sentence(table: pd.DataFrame) -> str:
    """How many of the study's design-B findings of a :func:`comparison` hold on each encoder, with
    how many are contradicted, inconclusive, not testable and not measured (Markdown)."""
    t = tallies(table)

    def counted(label, r) -> str:
        rest = [f"{r[v]} {v}" for v in (CONTRADICTED, INCONCLUSIVE, NOT_TESTABLE, NOT_MEASURED) if r[v]]
        return f"{r[HOLDS]} on {label}" + (f" ({', '.join(rest)})" if rest else "")

    parts = [counted(label, r) for label, r in t.iterrows()]
    n_study = int(t.iloc[0].sum())
    listed = ", ".join(parts[:-1]) + f" and {parts[-1]}" if len(parts) > 1 else parts[0]
    return (
        f"Of the {n_study} design-B findings of the study, each decided by an interval against its declared "
        f"margin, {listed} hold."
    )


def comparison_summary(table: pd.DataFrame) -> str:
    """The result in Markdown: how many of the study's findings hold on each encoder of a
    :func:`comparison` (and how many are contradicted, inconclusive, not testable, not
    measured); where the last encoder's verdict differs from every other's (with both
    verdicts); and where the others already disagree among themselves."""
    labels = _labels(table)
    real, others = labels[-1], labels[:-1]
    text = tally_sentence(table)
    diff = differing(table)
    if diff.empty:
        return text + " Every finding has the same verdict on every encoder."

    def verdict(row, label):
        return diff.loc[row, (label, "verdict")]

    apart = [r for r in diff.index if all(verdict(r, o) != verdict(r, real) for o in others)]
    agreeing = [r for r in apart if len({verdict(r, o) for o in others}) == 1]
    if agreeing:
        text += (
            f" On {real} the verdict differs from {' and '.join(others)}'s on {len(agreeing)}: "
            + "; ".join(
                f"*{f}* ({verdict((s, f), real)} here, {verdict((s, f), others[0])} there)" for s, f in agreeing
            )
            + "."
        )
    mixed = [r for r in diff.index if r not in agreeing]
    if mixed:
        text += (
            f" On {len(mixed)} more the verdicts are split: "
            + "; ".join(
                f"*{f}* (" + ", ".join(f"{verdict((s, f), label)} on {label}" for label in labels) + ")"
                for s, f in mixed
            )
            + "."
        )
    return text


def matrix_frame(table: pd.DataFrame) -> pd.DataFrame:
    """The study's findings of a :func:`comparison` in long form for a verdict matrix
    (:func:`embdiag.paper.scoreboard.matrix`): ``finding`` (section, :data:`~.scoreboard.BREAK`, finding), ``encoder``,
    ``verdict`` and the deciding ``numbers``."""
    study = table[table[("", "kind")] == STUDY]
    return pd.DataFrame(
        [
            {
                "finding": f"{section}{BREAK}{finding}",
                "encoder": label,
                "verdict": study.loc[(section, finding), (label, "verdict")],
                "numbers": study.loc[(section, finding), (label, "numbers")],
            }
            for section, finding in study.index
            for label in _labels(table)
        ]
    )


def not_measured(table: pd.DataFrame, label: str) -> list[str]:
    """The study's findings of a :func:`comparison` that ``label``'s run could not measure."""
    study = table[table[("", "kind")] == STUDY]
    return [finding for (_, finding), v in study[(label, "verdict")].items() if v == NOT_MEASURED]


def result(table: pd.DataFrame, *, figure=None) -> Result:
    """The page's result box: :func:`tally_sentence` of ``table`` and how many findings' verdicts
    differ between encoders, then ``figure``."""
    n = len(differing(table)[lambda t: t[("", "kind")] == STUDY])
    text = tally_sentence(table) + (
        f" The verdicts differ between encoders on {n} of them."
        if n
        else " Every verdict is the same on every encoder."
    )
    return box(html.escape(text, quote=False), figure=figure)

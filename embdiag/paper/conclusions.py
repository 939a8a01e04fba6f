"""Every declared finding of the study, checked on this run: the conclusions chapter's table.

Each section of the study is measured and decided in its home (:mod:`embdiag.study`):
:func:`fixed_encoder_findings` runs the four fixed-encoder sections' homes on one encoder's
vectors at their settings (the chapters' defaults, with what the caller gives), so that a
finding reads the same here as in its chapter and the measurement is the chapter's (kept on
disk by the home); the training section's verdicts come from :func:`embdiag.study.training.run`.
:func:`stack` puts the verdicts into one table; :func:`tally` counts the study's findings
alone, by verdict, and :func:`of_kind` gives this project's additions and the scope statements
their own tables.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Mapping

import pandas as pd

from .. import study
from ..metrics.inference import CONTRADICTED, HOLDS, INCONCLUSIVE, NOT_TESTABLE
from ..study.findings import ADDITION, KINDS, NOT_MEASURED, SCOPE, STUDY
from ..view.result import Result, box
from .findings import in_words

#: Sections in the study's order: (section, chapter that shows it in full).
SECTIONS = tuple((section, chapter) for section, (_, chapter) in study.SECTIONS.items())
#: The sections measured on a fixed encoder's vectors (design B); caption retrieval reads the
#: caption vectors, the others the labelled vectors.
FIXED_ENCODER = ("stress tests", "compression", "neighbour stability", "caption retrieval")
COLUMNS = [
    "section",
    "chapter",
    "finding",
    "kind",
    "criterion",
    "margin",
    "why this margin",
    "study",
    "this run",
    "verdict",
    "reason",
    "low",
    "high",
]


def settings(section: str, given: Mapping | None = None):
    """The ``Settings`` of ``section``'s home: its chapter's defaults, with the values of ``given``
    whose names are its fields (other names are ignored: one mapping serves every section)."""
    home = study.home(section)
    names = {f.name for f in dataclasses.fields(home.Settings)}
    return home.Settings(**{name: value for name, value in (given or {}).items() if name in names})


def fixed_encoder_findings(vectors, captions, given: Mapping | None = None, **common) -> dict:
    """The verdicts of the four fixed-encoder sections, ``{section: table}``, each its home's
    ``findings(run(inputs, settings))``: ``vectors`` is a
    :class:`~embdiag.encoders.vectors.LabelledVectors` (stress tests, compression, neighbour
    stability), ``captions`` a :class:`~embdiag.encoders.vectors.CaptionVectors`. The settings of
    a section are :func:`settings` of ``given[section]`` (that section's own parameters, e.g.
    ``dims``) with ``common`` (e.g. ``k``, ``seed``) on top."""
    out = {}
    for section in FIXED_ENCODER:
        home = study.home(section)
        inputs = captions if section == "caption retrieval" else vectors
        values = {**(given or {}).get(section, {}), **common}
        out[section] = home.findings(home.run(inputs, settings(section, values)))
    return out


@dataclasses.dataclass(frozen=True)
class Run:
    """The study's findings decided on one run's data: ``verdicts`` (:func:`stack` of every
    section), the training measurement ``trained`` and the design-B inputs."""

    verdicts: pd.DataFrame
    trained: object
    vectors: object
    captions: object


def run(
    *,
    profile: str,
    attribute: str,
    encoder: str,
    driving_dataset: str,
    driving_dir=None,
    caption_dataset: str,
    caption_dir=None,
    k: int,
    seed: int,
) -> Run:
    """Every declared finding of the study on one run (the landing page's and the conclusions'
    parameters): the training records of ``profile`` (findings on ``attribute``), and the four
    fixed-encoder sections on ``encoder``'s vectors of the driving and caption data."""
    from ..encoders.vectors import caption_vectors, driving_vectors
    from ..study import training

    vectors = driving_vectors(encoder, driving_dataset, data_dir=driving_dir, seed=seed)
    captions = caption_vectors(encoder, caption_dataset, data_dir=caption_dir, seed=seed)
    trained = training.run(training.Settings(profile=profile, attribute=attribute))
    tables = {"training": training.findings(trained), **fixed_encoder_findings(vectors, captions, k=k, seed=seed)}
    return Run(stack(tables), trained, vectors, captions)


def stack(tables: dict) -> pd.DataFrame:
    """One table of ``{section: verdicts}`` in the study's section order, with the chapter of
    each section (:data:`COLUMNS`)."""
    chapters = dict(SECTIONS)
    unknown = set(tables) - set(chapters)
    if unknown:
        raise ValueError(f"tables: unknown sections {sorted(unknown)}; expected some of {list(chapters)}")
    parts = [tables[s].assign(section=s, chapter=chapters[s]) for s, _ in SECTIONS if s in tables]
    return pd.concat(parts, ignore_index=True)[COLUMNS]


def of_kind(verdicts: pd.DataFrame, kind: str) -> pd.DataFrame:
    """The rows of ``verdicts`` of one kind (:data:`~embdiag.study.findings.KINDS`)."""
    if kind not in KINDS:
        raise ValueError(f"kind: expected one of {KINDS}, got {kind!r}")
    return verdicts[verdicts["kind"] == kind]


def tally(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Per section, the study's findings only (this project's additions and scope statements
    are not counted against the study): declared, and how many hold, are contradicted, are
    inconclusive, are not testable here, and are not measured by this run."""
    counted = of_kind(verdicts, STUDY)
    columns = {
        "hold": HOLDS,
        "contradicted": CONTRADICTED,
        "inconclusive": INCONCLUSIVE,
        "not testable": NOT_TESTABLE,
        "not measured": NOT_MEASURED,
    }
    out = pd.DataFrame({"section": counted["section"], "declared": 1})
    for name, verdict in columns.items():
        out[name] = counted["verdict"].eq(verdict).astype(int)
    order = [s for s, _ in SECTIONS if s in set(counted["section"])]
    return out.groupby("section", sort=False).sum().reindex(order)


def verdict_words(verdicts: pd.DataFrame) -> pd.DataFrame:
    """``verdicts`` for display, indexed by section and finding: kind, criterion, margin, the
    study's and this run's numbers, the verdict and the interval against the margin that decided it."""
    return in_words(verdicts.drop(columns=["chapter", "low", "high"])).set_index(["section", "finding"])


def _named(rows: pd.DataFrame) -> str:
    return "; ".join(f"<em>{html.escape(r['finding'])}</em> ({r['section']})" for _, r in rows.iterrows())


def result(verdicts: pd.DataFrame, headline: str | None = None) -> Result:
    """The page's result box: ``headline`` (HTML, e.g. the training headline) first, then the
    study's findings counted by verdict, naming those contradicted and inconclusive; this
    project's additions and scope statements are counted apart."""
    t = tally(verdicts)
    counted = of_kind(verdicts, STUDY)
    total = t.sum()

    def are(n) -> str:
        return f"{int(n)} {'is' if int(n) == 1 else 'are'}"

    text = (
        f"Of the study's {int(total['declared'])} declared findings, {int(total['hold'])} hold here, "
        f"{are(total['contradicted'])} contradicted, {are(total['inconclusive'])} inconclusive and "
        f"{are(total['not testable'])} not testable here"
        + (f"; {are(total['not measured'])} not measured" if total["not measured"] else "")
        + ", each decided by an interval against its declared margin."
    )
    for verdict, words in ((CONTRADICTED, "Contradicted"), (INCONCLUSIVE, "Inconclusive")):
        rows = counted[counted["verdict"] == verdict]
        if len(rows):
            text += f" {words}: {_named(rows)}."
    additions, scope = of_kind(verdicts, ADDITION), of_kind(verdicts, SCOPE)
    if len(additions) or len(scope):
        text += (
            f" Counted apart: {len(additions)} of this project's additions"
            f" ({int(additions['verdict'].eq(HOLDS).sum())} holding) and {len(scope)} scope"
            f" {'statement' if len(scope) == 1 else 'statements'}."
        )
    return box((f"{headline}</p><p>" if headline else "") + text)

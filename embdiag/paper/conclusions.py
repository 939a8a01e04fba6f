"""Every declared finding of the study, checked on this run: the conclusions chapter's table.

Each section of the study declares its findings and checks them by the protocol of
:mod:`embdiag.paper.findings` (its ``findings`` function in :mod:`embdiag.paper.chapters`).
:func:`training_findings` and :func:`fixed_encoder_findings` run the measurements those
functions need, at the settings the findings are declared on (the stress chapter's severity
grid, the study's compression dimensions, its storage conditions, its caption prefixes), with
the chapters' own defaults, so that a finding reads the same here as in its chapter;
:func:`stack` puts the verdicts into one table; :func:`tally` counts the study's findings
alone, by verdict, and :func:`of_kind` gives this project's additions and the scope statements
their own tables.
"""

from __future__ import annotations

import html

import pandas as pd

from ..metrics.inference import CONTRADICTED, HOLDS, INCONCLUSIVE, NOT_TESTABLE
from ..study.findings import ADDITION, KINDS, NOT_MEASURED, SCOPE, STUDY
from .findings import Result, box, in_words

#: Sections in the study's order: (section, chapter that shows it in full).
SECTIONS = (
    ("training", "03_training"),
    ("stress tests", "05_stress_tests"),
    ("compression", "06_compression"),
    ("neighbour stability", "07_neighbour_stability"),
    ("caption retrieval", "08_caption_retrieval"),
)
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


def training_findings(profile: str = "cpu", attribute: str = "timeofday") -> pd.DataFrame:
    """The training section's verdicts, from the committed records of ``profile``."""
    from ..training import sweep
    from .chapters import training as findings

    records = sweep.load_records(profile)
    if records.empty:
        raise ValueError(f"profile: no training records for {profile!r} (run: embdiag train --profile {profile})")
    return findings.findings(records, attribute)


def fixed_encoder_findings(
    vectors,
    captions,
    *,
    k: int = 10,
    seed: int = 0,
    n_draws: int = 5000,
    attribute: str | None = None,
    dims=None,
    caption_dims=None,
) -> dict:
    """The verdicts of the four fixed-encoder sections, ``{section: table}``: ``vectors`` is a
    :class:`~embdiag.encoders.vectors.LabelledVectors` (stress tests, compression, neighbour
    stability), ``captions`` a :class:`~embdiag.encoders.vectors.CaptionVectors`. ``attribute``
    (the stress tests' headline, and weather's place in the compression findings), ``dims``
    (compression) and ``caption_dims`` (caption prefixes) default to the chapters' defaults, as
    the chapter parameters of the same names."""
    from ..interventions import caption_retrieval, compression
    from .chapters import caption_retrieval as caption_figures, compression as compression_figures
    from .chapters import neighbour_stability as stability_figures, stress_tests as stress_figures
    from ..interventions.precision import compare_study_conditions

    args = (vectors.train, vectors.train_labels, vectors.val, vectors.val_labels)
    severe = stress_figures.measure(*args, k=k, seed=seed, attribute=attribute)  # the stress chapter's grid
    at_dims = {} if dims is None else {"dims": dims}
    grid = compression.compression_grid(*args, k=k, **at_dims)
    items = compression.compression_items(*args, k=k, **at_dims)  # per image: the compression intervals
    centring = compression.centring_effect(vectors.train, vectors.val, vectors.val_labels, k=k)
    storage = compare_study_conditions(vectors.train, vectors.val, k=k)
    result = caption_retrieval.evaluate(
        captions.images,
        captions.queries,
        captions.documents,
        captions.group,
        captions.categories,
        k=k,
        **({} if caption_dims is None else {"dims": caption_dims}),
    )
    changes = caption_retrieval.bootstrap_changes(result, n_draws=n_draws, seed=seed)
    control = caption_retrieval.shuffled_control(result, seed=seed)
    contrasts = caption_retrieval.bootstrap_contrasts(result, caption_figures.FAR_MORE, n_draws=n_draws, seed=seed)
    return {
        "stress tests": stress_figures.findings(severe),
        "compression": compression_figures.findings(
            grid, centring, k=k, attribute=severe.attribute, items=items, n_draws=n_draws, seed=seed
        ),
        "neighbour stability": stability_figures.findings(storage, vectors.val_labels, n_draws=n_draws, seed=seed),
        "caption retrieval": caption_figures.findings(changes, control, contrasts=contrasts),
    }


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
    study = of_kind(verdicts, STUDY)
    columns = {
        "hold": HOLDS,
        "contradicted": CONTRADICTED,
        "inconclusive": INCONCLUSIVE,
        "not testable": NOT_TESTABLE,
        "not measured": NOT_MEASURED,
    }
    out = pd.DataFrame({"section": study["section"], "declared": 1})
    for name, verdict in columns.items():
        out[name] = study["verdict"].eq(verdict).astype(int)
    order = [s for s, _ in SECTIONS if s in set(study["section"])]
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
    study = of_kind(verdicts, STUDY)
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
        rows = study[study["verdict"] == verdict]
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

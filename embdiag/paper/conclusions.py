"""Every declared finding of the study, checked on this run: the conclusions chapter's table.

Each section of the study declares its findings and checks them by the protocol of
:mod:`embdiag.paper.findings` (its ``findings`` function in :mod:`embdiag.paper.chapters`).
:func:`training_findings` and :func:`fixed_encoder_findings` run the measurements those
functions need, at the settings the findings are declared on (the stress chapter's severity
grid, the study's compression dimensions, its storage conditions, its caption prefixes), with
the chapters' own defaults, so that a finding reads the same here as in its chapter;
:func:`stack` puts the verdicts into one table.
"""

from __future__ import annotations

import html

import pandas as pd

from .findings import Result, box, in_words

#: Sections in the study's order: (section, chapter that shows it in full).
SECTIONS = (
    ("training", "03_training"),
    ("stress tests", "05_stress_tests"),
    ("compression", "06_compression"),
    ("neighbour stability", "07_neighbour_stability"),
    ("caption retrieval", "08_caption_retrieval"),
)
COLUMNS = ["section", "chapter", "finding", "criterion", "study", "this run", "reproduces"]


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
    grid = compression.compression_grid(*args, k=k, **({} if dims is None else {"dims": dims}))
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
    return {
        "stress tests": stress_figures.findings(severe),
        "compression": compression_figures.findings(grid, centring, k=k, attribute=severe.attribute),
        "neighbour stability": stability_figures.findings(storage, vectors.val_labels),
        "caption retrieval": caption_figures.findings(changes, control),
    }


def stack(tables: dict) -> pd.DataFrame:
    """One table of ``{section: verdicts}`` in the study's section order, with the chapter of
    each section; ``reproduces`` is True, False, or None (not measured by this run)."""
    chapters = dict(SECTIONS)
    unknown = set(tables) - set(chapters)
    if unknown:
        raise ValueError(f"tables: unknown sections {sorted(unknown)}; expected some of {list(chapters)}")
    parts = [tables[s].assign(section=s, chapter=chapters[s]) for s, _ in SECTIONS if s in tables]
    out = pd.concat(parts, ignore_index=True)[COLUMNS]
    out["reproduces"] = out["reproduces"].map(lambda v: None if pd.isna(v) else bool(v)).astype(object)
    return out


def tally(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Per section: findings declared, measured here, and holding here."""
    measured = verdicts["reproduces"].notna()
    holds = verdicts["reproduces"].eq(True)
    out = pd.DataFrame(
        {
            "section": verdicts["section"],
            "declared": 1,
            "measured here": measured.astype(int),
            "hold here": holds.astype(int),
        }
    )
    order = [s for s, _ in SECTIONS if s in set(verdicts["section"])]
    return out.groupby("section", sort=False).sum().reindex(order)


def verdict_words(verdicts: pd.DataFrame) -> pd.DataFrame:
    """``verdicts`` with ``reproduces`` as yes / no / not measured, indexed by section and finding."""
    return in_words(verdicts.drop(columns="chapter")).set_index(["section", "finding"])


def result(verdicts: pd.DataFrame) -> Result:
    """The page's result box: the tally in one sentence, then the findings that do not hold here."""
    t = tally(verdicts)
    failed = verdicts[verdicts["reproduces"].eq(False)]
    parts = ", ".join(f"{r['hold here']} of {r['measured here']} in {s}" for s, r in t.iterrows())
    text = (
        f"Of the {int(t['declared'].sum())} declared findings, this run measures "
        f"{int(t['measured here'].sum())} and {int(t['hold here'].sum())} hold ({parts})."
    )
    if len(failed):
        text += (
            " Not holding here: "
            + "; ".join(f"<em>{html.escape(r['finding'])}</em> ({r['section']})" for _, r in failed.iterrows())
            + "."
        )
    return box(text)

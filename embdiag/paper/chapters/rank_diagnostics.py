"""Tables and figures of the technical note on rank diagnostics (``notebooks/20_rank_diagnostics.py``).

The note compares the participation ratio (centred covariance eigenvalues) with RankMe (raw
singular values) on one matrix and on three changes of it that keep the vectors' relative
arrangement: positive scaling, a common offset and centring (:func:`variants`). Every number
comes from :mod:`embdiag.metrics.geometry`; each chart is drawn from the frame function beside
it (:func:`spectra_frame`, :func:`offset_sweep_frame`), which is also its CSV.
"""

from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd

from ...view import theme
from ... import synthetic
from ..._validate import as_matrix
from ...metrics.geometry import covariance_eigenvalues, participation_ratio, rankme, singular_values, summary
from ...view.result import Result, box

__all__ = [
    "WORKED_SINGULAR_VALUES",
    "SPECTRA",
    "worked_example",
    "offset_direction",
    "variants",
    "summary_table",
    "result",
    "spectra_frame",
    "spectra_chart",
    "offset_sweep_frame",
    "offset_sweep_chart",
]

#: Singular values of the worked example's centred matrix.
WORKED_SINGULAR_VALUES = (3.0, 1.0, 0.0, 0.0)
#: Spectrum name -> the function of :mod:`embdiag.metrics.geometry` that computes it.
SPECTRA = {"raw singular values (RankMe)": singular_values, "centred eigenvalues (PR)": covariance_eigenvalues}
_LABELS = {
    "total_variance": "total variance",
    "mean_cosine": "mean cosine",
    "rankme": "RankMe",
    "participation_ratio": "participation ratio",
}


def worked_example(seed: int = 0, n: int = 8) -> pd.DataFrame:
    """PR and RankMe of a centred ``n x 4`` matrix with singular values (3, 1, 0, 0): the closed
    forms ``1 / (0.9² + 0.1²)`` and ``exp(-(0.75 ln 0.75 + 0.25 ln 0.25))`` beside
    :mod:`embdiag.metrics.geometry` on an actual matrix, and their difference (rounded to 1e-12,
    below which it is rounding noise)."""
    W = synthetic.matrix_with_singular_values(list(WORKED_SINGULAR_VALUES), n=n, seed=seed)
    table = pd.DataFrame(
        {
            "closed form": [1 / (0.9**2 + 0.1**2), np.exp(-(0.75 * np.log(0.75) + 0.25 * np.log(0.25)))],
            "embdiag": [participation_ratio(W), rankme(W)],
        },
        index=pd.Index(["participation ratio", "RankMe"], name="metric"),
    )
    table["difference"] = (table["embdiag"] - table["closed form"]).round(12)
    return table


def offset_direction(d: int, seed: int = 0) -> np.ndarray:
    """The unit direction of the common offset: a standard normal draw of stream ``seed + 1``, normalised."""
    direction = np.random.default_rng(seed + 1).standard_normal(d)
    return direction / np.linalg.norm(direction)


def variants(Z, scale: float, offset_norm: float, seed: int = 0) -> dict[str, np.ndarray]:
    """``Z`` and three changes that keep the vectors' relative arrangement: scaled by ``scale``
    (> 0), moved by a common offset of norm ``offset_norm`` along :func:`offset_direction`, and
    centred. Keys name each matrix (with its parameter)."""
    Z = as_matrix(Z, "Z", dtype=np.float64)
    if not scale > 0:
        raise ValueError(f"scale: expected a positive factor, got {scale!r}")
    offset = offset_norm * offset_direction(Z.shape[1], seed)
    return {
        "original": Z,
        f"scaled by c = {scale:g}": scale * Z,
        f"common offset (norm {offset_norm:g})": Z + offset,
        "centred": Z - Z.mean(axis=0),
    }


def summary_table(matrices: dict[str, np.ndarray]) -> pd.DataFrame:
    """Total variance, mean cosine, RankMe and participation ratio of each matrix (rows)."""
    table = pd.DataFrame({name: summary(V) for name, V in matrices.items()}).T.rename(columns=_LABELS)
    return table[list(_LABELS.values())].rename_axis("matrix")


def _moves(before: float, after: float) -> str:
    """``unchanged at x`` where ``after`` equals ``before`` to a relative 1e-9, else ``x → y``."""
    if math.isclose(before, after, rel_tol=1e-9, abs_tol=1e-12):
        return f"unchanged at {before:.2f}"
    return f"{before:.2f} → {after:.2f}"


def _measure_moves(name: str, original: float, after: pd.Series) -> str:
    """How measure ``name`` moves under each change (``after``: its value per change)."""
    if all(math.isclose(original, v, rel_tol=1e-9, abs_tol=1e-12) for v in after):
        return f"{name} stays at {original:.2f} under all {len(after)}"
    return f"{name}: " + ", ".join(f"{change} {_moves(original, v)}" for change, v in after.items())


def result(table: pd.DataFrame, what: str = "these vectors") -> Result:
    """The note's result box, read from :func:`summary_table` of :func:`variants` (the original
    first): on how many of the three changes RankMe and the participation ratio disagree (one
    moves, the other does not, to a relative 1e-9), then how each moves under each change."""
    original, changes = table.iloc[0], table.iloc[1:]
    moved = {
        m: [not math.isclose(original[m], v, rel_tol=1e-9, abs_tol=1e-12) for v in changes[m]]
        for m in ("RankMe", "participation ratio")
    }
    disagree = sum(a != b for a, b in zip(moved["RankMe"], moved["participation ratio"]))
    return box(
        f"On {what}, RankMe and the participation ratio (PR) disagree on {disagree} of the {len(changes)} changes "
        f"that keep the vectors' relative arrangement. "
        f"{_measure_moves('RankMe', original['RankMe'], changes['RankMe'])}; "
        f"{_measure_moves('PR', original['participation ratio'], changes['participation ratio'])}."
    )


def spectra_frame(matrices: dict[str, np.ndarray]) -> pd.DataFrame:
    """Each matrix's spectrum shares: ``matrix``, ``spectrum`` (:data:`SPECTRA`), ``index`` (1 =
    largest) and ``share`` (value over the spectrum's sum, 6 significant digits); shares at or
    below 1e-12 are left out (a log axis cannot show zero)."""
    rows = []
    for name, V in matrices.items():
        for spectrum, values_of in SPECTRA.items():
            values = values_of(V)
            shares = values / values.sum() if values.sum() > 0 else values
            rows += [
                {"matrix": name, "spectrum": spectrum, "index": i, "share": float(f"{share:.6g}")}
                for i, share in enumerate(shares, start=1)
                if share > 1e-12
            ]
    return pd.DataFrame(rows, columns=["matrix", "spectrum", "index", "share"])


def spectra_chart(matrices: dict[str, np.ndarray]) -> alt.Chart:
    """:func:`spectra_frame` on log-log axes: one colour per matrix, raw singular-value shares as
    circles and centred eigenvalue shares as squares; click a legend entry to isolate
    a matrix."""
    pick = alt.selection_point(fields=["matrix"], bind="legend")
    return (
        alt.Chart(spectra_frame(matrices))
        .mark_line(point=alt.OverlayMarkDef(size=45, filled=True))
        .encode(
            x=alt.X("index:Q", title="direction (sorted)", scale=alt.Scale(type="log")),
            y=alt.Y("share:Q", title="share of the spectrum", scale=alt.Scale(type="log")),
            color=alt.Color("matrix:N", title="matrix", sort=list(matrices), scale=theme.scale(matrices)),
            detail="spectrum:N",
            shape=alt.Shape(
                "spectrum:N", title="spectrum", scale=alt.Scale(domain=list(SPECTRA), range=["circle", "square"])
            ),
            opacity=alt.condition(pick, alt.value(1), alt.value(0.12)),
            tooltip=["matrix", "spectrum", "index", alt.Tooltip("share:Q", format=".3e")],
        )
        .add_params(pick)
        .properties(width=theme.panel_width(1, gap=120), height=320, title="Spectra read by RankMe and by PR")
        .configure_legend(orient="bottom", columns=1, labelLimit=260)
    )


def offset_sweep_frame(Z, seed: int = 0, ratios=None) -> pd.DataFrame:
    """RankMe and PR of ``Z`` moved by a common offset along :func:`offset_direction`, whose norm
    is each of ``ratios`` (default: 17 values from 0.01 to 100, geometric) times the root-mean-square
    norm of the centred rows: ``offset / rms norm``, ``metric``, ``value`` (6 decimals)."""
    Z = as_matrix(Z, "Z", dtype=np.float64)
    ratios = np.geomspace(0.01, 100, 17) if ratios is None else np.asarray(ratios, dtype=float)
    rms = np.sqrt((np.linalg.norm(Z - Z.mean(axis=0), axis=1) ** 2).mean())
    direction = offset_direction(Z.shape[1], seed)
    metrics = (("RankMe", rankme), ("participation ratio", participation_ratio))
    frame = pd.DataFrame(
        [{"offset / rms norm": r, "metric": m, "value": f(Z + r * rms * direction)} for r in ratios for m, f in metrics]
    )
    frame["value"] = frame["value"].round(6)
    return frame


def offset_sweep_chart(Z, seed: int = 0, ratios=None) -> alt.Chart:
    """:func:`offset_sweep_frame` as lines: the offset ratio on a log axis, RankMe and PR."""
    return (
        alt.Chart(offset_sweep_frame(Z, seed, ratios))
        .mark_line(point=True)
        .encode(
            x=alt.X("offset / rms norm:Q", scale=alt.Scale(type="log")),
            y=alt.Y("value:Q", title="effective number of directions"),
            color=alt.Color("metric:N", scale=theme.scale(["RankMe", "participation ratio"])),
            tooltip=["metric", alt.Tooltip("offset / rms norm:Q", format=".3g"), alt.Tooltip("value:Q", format=".2f")],
        )
        .properties(width=theme.panel_width(1, gap=120), height=280, title="RankMe and PR under a common offset")
        .configure_legend(orient="bottom")
    )

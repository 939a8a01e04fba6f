"""Neighbour identity: whether each condition keeps the exact top-k of each query, and which
queries provably cannot change (the certificates).

Measured (:func:`measure`): per condition, overlap@k with the exact reference top-k, the share
of changed queries, reference boundary margins, for storage conditions searched by cosine the
float certificate of :func:`~embdiag.interventions.precision.compare_conditions` and for
truncations that of :func:`~embdiag.interventions.truncation.compare_truncation` (each on the
certificates' sample, :func:`cert_sample`; :func:`certificate`), and the bytes one vector takes
in the condition's representation (``bytes_per_vector``). Shown: the identity figure and table;
:func:`certificates` puts proof beside measurement."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import altair as alt
import numpy as np
import pandas as pd

from ..._mapped import take_rows
from ...metrics.retrieval import overlap_at_k, topk
from ...view import exhibits as exhibit
from .. import streams
from ..conditions import ReportCondition, _sample_rows
from .measured import Section, median, record
from .presentation import NO_CONDITION, for_reading, kind_colour, section

if TYPE_CHECKING:
    from ..measurement import Plan, Report

NAME = "identity"
TITLE = "Neighbour identity: does the exact top-k survive?"
INTRO = (
    "Whether each query keeps its exact top-k. Queries whose k-th and (k+1)-th scores lie close change "
    "first; for storage formats a certificate proves which cannot."
)
#: Why the section can be missing.
MISSING = NO_CONDITION
#: What the section establishes and what not (the report's ``scope``).
SCOPE = (
    "Whether each condition returns the same top-k neighbours as exact search on the reference "
    "vectors (and, for storage and truncation, which queries provably cannot change); a change of "
    "identity is not by itself a loss of relevance."
)


def exhibits(report: Report, *, timings: bool = False) -> list:
    """The scope sentence, the identity figure and table, or why there are none."""
    return section(report, NAME, MISSING, _draw)


#: Certificate: at most this many of the searched queries, against the searched gallery when it has
#: at most CERT_GALLERY rows, else against a seeded sample of that many rows (quick: a fifth of each).
CERT_QUERIES, CERT_GALLERY = 1_000, 100_000


@dataclass(frozen=True)
class CertSample:
    """The certificates' sample, shared by every certified condition: float64 query and gallery
    rows, the k the certified set has, and the float64 reference ranking (top k + 1)."""

    Q: np.ndarray
    G: np.ndarray
    k: int
    reference: tuple[np.ndarray, np.ndarray]


def cert_sample(plan: Plan) -> CertSample:
    """At most CERT_QUERIES searched queries, against the searched gallery when it has at most
    CERT_GALLERY rows (else a seeded sample of that many, or of the k + 2 rows a large k ranks,
    containing the queries' own rows). When the queries are gallery rows they stay in the search,
    so the certified set is the top-(k + 1) including the query itself (its k nearest other rows)."""
    Q, G, div = plan.Q, plan.G, 5 if plan.quick else 1
    cq = _sample_rows(len(Q), CERT_QUERIES // div, plan.seed, streams.CERT)
    size = max(CERT_GALLERY // div, plan.k + 2)
    if len(G) <= size:
        cg = np.arange(len(G))
    else:
        need = plan.self_pos[cq] if plan.self_search else np.empty(0, np.int64)
        rest = np.setdiff1d(np.arange(len(G)), need)
        pick = np.random.default_rng([plan.seed, streams.CERT + 100]).choice(len(rest), size - len(need), replace=False)
        cg = np.sort(np.concatenate([need, rest[pick]]))
    Qc = np.asarray(Q[cq], dtype=np.float64)
    Gc = np.asarray(take_rows(G, cg), dtype=np.float64)
    k = plan.k + plan.self_search
    return CertSample(Qc, Gc, k, topk(Qc, Gc, k + 1, dtype=np.float64))


def certificate(cert: CertSample, c: ReportCondition, fit) -> dict:
    """A certified condition's certificate (:meth:`~embdiag.report.conditions.ReportCondition.certify`:
    storage's float certificate, or truncation's) on the certificates' sample."""
    res = c.certify(cert.Q, cert.G, cert.k, fit, reference=cert.reference)
    return {
        "cert_coverage": res.coverage,
        "cert_violations": res.violations,
        "cert_queries": len(cert.Q),
        "cert_gallery": len(cert.G),
    }


def measure(plan: Plan, neighbours: dict[str, np.ndarray], margins: np.ndarray, certs: dict[str, dict]) -> Section:
    """Per condition: overlap@k with the reference's neighbours, changed queries, the reference's
    boundary margins of changed and unchanged queries, a certified condition's certificate
    (``certs``, from :func:`certificate`), and the bytes per vector of each representation."""
    k, rows, table = plan.k, [], []
    for c in plan.conds:
        ov = overlap_at_k(neighbours["reference"], neighbours[c.name], per_query=True)
        changed = ov < 1
        row = {
            "condition": c.name,
            "kind": c.kind,
            f"overlap@{k}": float(ov.mean()),
            "changed_queries": float(changed.mean()),
            "n_queries": len(ov),
            "median_margin_changed": median(margins[changed]),
            "median_margin_unchanged": median(margins[~changed]),
        }
        if c.certified:
            row.update(certs[c.name])
        size = c.bytes_per_vector(plan.V.shape[1])
        row["bytes_per_vector"] = np.nan if size is None else size
        keys = (
            f"overlap@{k}",
            "changed_queries",
            "median_margin_changed",
            "median_margin_unchanged",
            "cert_coverage",
            "cert_violations",
            "bytes_per_vector",
        )
        rows += [record("identity", key, c.name, row[key]) for key in keys if key in row]
        table.append(row)
    return Section(bool(plan.conds), rows, {"identity": pd.DataFrame(table)} if plan.conds else {})


def _certified_on(table: pd.DataFrame) -> str:
    """Which queries and gallery rows the certificates were computed on (a clause, or '')."""
    if "cert_queries" not in table or table["cert_queries"].isna().all():
        return ""
    row = table.dropna(subset=["cert_queries"]).iloc[0]
    return f" (on {int(row['cert_queries']):,} queries against {int(row['cert_gallery']):,} gallery rows)"


def _draw(report: Report, table: pd.DataFrame, mark: dict) -> list:
    k = report.inputs["k"]
    n_queries = int(table["n_queries"].iloc[0])
    shown = table.drop(columns=[c for c in ("n_queries", "cert_queries", "cert_gallery") if c in table])
    shown = for_reading(shown).set_index("condition")
    return [
        exhibit.figure(
            chart(table, k),
            name="report-identity",
            **mark,
            caption=(
                f"Mean overlap@{k} of each condition's top {k} with exact search on the reference vectors (bar, "
                f"coloured by kind) and the share of queries whose top-{k} set changed (dot). Exact counts over "
                f"{n_queries:,} queries, no interval."
            ),
        ),
        exhibit.table(
            shown,
            name="report-identity-table",
            collapsed="Identity per condition: every number",
            **mark,
            extremes=[f"overlap@{k} (%)", "changed queries (%)"],
            caption=(
                f"Identity per condition over {n_queries:,} searched queries. overlap@{k}: mean percent of the "
                f"reference's top {k} still returned; changed queries: percent of queries whose top-{k} set changed; "
                f"median margin, changed / unchanged: median boundary margin (rank-{k} minus rank-{k + 1} cosine of "
                "the reference) of the changed and of the unchanged queries, small margins being the ones that flip; "
                "storage conditions searched by cosine (not sign bits) and truncations (PCA, prefixes) only: "
                "certified: percent of the certificate's queries proven unchanged, whose boundary margin is wider "
                "than twice the largest score change the stored format's rounding, or the dropped dimensions, can "
                "cause (a proof, not a measurement: those queries cannot change); certified but changed: certified "
                f"queries that changed all the same (0 unless the bound is wrong){_certified_on(table)}; bytes per "
                "vector: what one vector takes in the condition's representation (codes and any per-row scale; a "
                "shared calibration table, PCA basis or index codebook not counted; an index: its codes, links and "
                "ids)."
            ),
        ),
    ]


def chart(identity: pd.DataFrame, k: int = 10) -> alt.LayerChart:
    """Mean overlap@k per condition (bars, coloured by kind) and the share of changed queries (dots)."""
    order = list(identity["condition"])
    data = identity[["condition", "kind", f"overlap@{k}", "changed_queries"]].rename(
        columns={f"overlap@{k}": "overlap"}
    )
    y = alt.Y("condition:N", sort=order, title=None)
    bars = (
        alt.Chart(data)
        .mark_bar(opacity=0.6)
        .encode(
            x=alt.X(
                "overlap:Q", title=f"overlap@{k} (bar) and changed queries (dot), share", scale=alt.Scale(domain=[0, 1])
            ),
            y=y,
            color=kind_colour(),
            tooltip=[
                "condition",
                "kind",
                alt.Tooltip("overlap:Q", format=".4f"),
                alt.Tooltip("changed_queries:Q", format=".4f"),
            ],
        )
    )
    dots = alt.Chart(data).mark_point(filled=True, color="black", size=50).encode(x="changed_queries:Q", y=y)
    return alt.layer(bars, dots).properties(width=360, height=22 * len(order))


def certificates(report: Report) -> exhibit.Exhibit:
    """Each certified condition's share of queries proven unchanged beside the share that changed."""
    k = report.inputs["k"]
    identity = report.tables["identity"].dropna(subset=["cert_coverage"])
    shown = identity[["condition", "kind", "bytes_per_vector", "changed_queries", "cert_coverage", "cert_violations"]]
    return exhibit.table(
        for_reading(shown).set_index("condition"),
        name="report-certificates",
        extremes=False,
        caption=(
            f"changed queries: percent of searched queries whose top-{k} set changed; certified: percent of the "
            f"certificate's queries proven unchanged{_certified_on(report.tables['identity'])}; certified but "
            "changed must be 0."
        ),
    )

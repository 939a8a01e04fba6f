"""The four instruments, as pure functions on arrays: one module per property.

``geometry`` (distribution, no labels), ``labels`` (which rows carry a label, their classes,
balanced accuracy), ``probe`` (recoverable labels: the linear probe), ``retrieval``
(neighbour identity and relevance), ``graded`` (graded relevance: nDCG, MRR, MAP, recall, as
trec_eval defines them), ``stats`` (paired intervals), ``inference`` (verdicts from an
interval and a declared margin), and ``suite``, which runs them together for one
representation. Imports only the shared helpers of :mod:`embdiag`.

Importing the package loads numpy and no model library: ``labels`` (pandas), ``probe``
(scikit-learn, scipy.linalg) and ``suite`` (which fits probes) load on first use of one of their names
(``benchmarks/bench_import.py``).
"""

from importlib import import_module

from .graded import average_precision_at_k, graded_recall_at_k, mrr_at_k, ndcg_at_k
from .geometry import mean_cosine, participation_ratio, rankme, summary, total_variance
from .retrieval import boundary_margin, hit_at_k, overlap_at_k, precision_at_k, random_floor, recall_at_k, topk
from .stats import paired_bootstrap, paired_t_interval

#: The names loaded on first use, and their modules.
_LAZY = {
    **dict.fromkeys(["balanced_accuracy", "eligible_classes"], "labels"),
    **dict.fromkeys(["LinearProbe", "fit_probes", "majority_floor"], "probe"),
    **dict.fromkeys(["evaluate", "frozen_classes"], "suite"),
}

__all__ = [
    "LinearProbe",
    "average_precision_at_k",
    "balanced_accuracy",
    "boundary_margin",
    "eligible_classes",
    "evaluate",
    "fit_probes",
    "frozen_classes",
    "graded_recall_at_k",
    "hit_at_k",
    "majority_floor",
    "mean_cosine",
    "mrr_at_k",
    "ndcg_at_k",
    "overlap_at_k",
    "paired_bootstrap",
    "paired_t_interval",
    "participation_ratio",
    "precision_at_k",
    "random_floor",
    "rankme",
    "recall_at_k",
    "summary",
    "topk",
    "total_variance",
]


def __getattr__(name: str):
    """A name of :data:`_LAZY`, imported from its module on first use."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_LAZY[name]}", __name__), name)


def __dir__() -> list[str]:
    """The module's names with the ones loaded on first use."""
    return sorted({*globals(), *__all__})

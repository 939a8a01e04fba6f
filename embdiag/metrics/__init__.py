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

from .._lazy import exports

from .graded import average_precision_at_k, graded_recall_at_k, mrr_at_k, ndcg_at_k
from .geometry import mean_cosine, participation_ratio, rankme, summary, total_variance
from .retrieval import boundary_margin, hit_at_k, overlap_at_k, precision_at_k, random_floor, recall_at_k, topk
from .stats import paired_bootstrap, paired_t_interval

#: The names loaded on first use (:mod:`embdiag._lazy`), with the module's ``__getattr__`` and ``__dir__``.
_lazy, __getattr__, __dir__ = exports(
    __name__,
    {
        "labels": ("balanced_accuracy", "eligible_classes"),
        "probe": ("LinearProbe", "fit_probes", "majority_floor"),
        "suite": ("evaluate", "frozen_classes"),
    },
)

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

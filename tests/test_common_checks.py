"""Common checks (issue #30), in the manner of scikit-learn's ``parametrize_with_checks``: every
public function of ``embdiag.metrics`` and ``embdiag.interventions`` that takes a matrix is
registered here with how to call it. Every public name is registered or exempt with its reason, so
a new function fails the suite until it is. The checks:

- each bad matrix (NaN, +-inf, 1-D, 3-D, no rows, object, complex and string arrays) is refused
  with a ``ValueError`` that names the argument;
- each edge matrix (1 row, d = 1, constant rows, a zero row, all zeros, exact ties, int and bool)
  gives an answer without a numpy warning (a silent NaN or overflow) or is refused naming the
  argument, and where the answer is known it is that answer;
- every function whose answer does not depend on a positive common factor gives, at float32 x
  1e+-30 and float64 x 1e+-200, its float64 answer on the unscaled rows (float64 at 1e+-200, whose
  squares leave float64, may instead be refused naming the argument);
- every parameter of the wrong type or out of range (``PARAMETERS``) is refused naming it."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import embdiag.interventions as I
import embdiag.metrics as M

_rng = np.random.default_rng(0)
GOOD = _rng.normal(size=(30, 6))
Y = np.tile(["a", "b"], 15)
_PREFIX = I.MatryoshkaPrefix(3).fit(GOOD)
_PCA = I.PCACompression(3).fit(GOOD)

#: Public functions that take a matrix: (the argument checked, how to call it with that argument).
MATRIX = {
    "mean_cosine": ("Z", lambda A: M.mean_cosine(A)),
    "participation_ratio": ("Z", lambda A: M.participation_ratio(A)),
    "rankme": ("Z", lambda A: M.rankme(A)),
    "total_variance": ("Z", lambda A: M.total_variance(A)),
    "summary": ("Z", lambda A: M.summary(A)),
    "topk": ("queries", lambda A: M.topk(A, GOOD, 3)),
    "topk (gallery)": ("gallery", lambda A: M.topk(GOOD, A, 3)),
    "fit_probes": ("X", lambda A: M.fit_probes(A, {"a": Y})),
    "evaluate": ("train", lambda A: M.evaluate(A, {"a": Y}, GOOD, {"a": Y}, k=3)),
    "evaluate (val)": ("val", lambda A: M.evaluate(GOOD, {"a": Y}, A, {"a": Y}, k=3)),
    "boundary_margin": ("scores", lambda A: M.boundary_margin(-np.sort(-A, axis=-1) if A.dtype == float else A, 3)),
    "store": ("X", lambda A: I.store(A)),
    "store (int4)": ("X", lambda A: I.store(A, "int4")),
    "store (fp8)": ("X", lambda A: I.store(A, "fp8")),
    "store (binary)": ("X", lambda A: I.store(A, "binary")),
    "calibration_ranges": ("X", lambda A: I.calibration_ranges(A)),
    "sign_topk": ("queries", lambda A: I.sign_topk(A, GOOD, 3)),
    "compare_truncation": ("queries", lambda A: I.compare_truncation(A, _PREFIX, k=3)),
    "compare_truncation (gallery)": ("gallery", lambda A: I.compare_truncation(GOOD, _PREFIX, A, k=3)),
    "compare_truncation (PCA)": ("queries", lambda A: I.compare_truncation(A, _PCA, k=3)),
    "sign_topk (gallery)": ("gallery", lambda A: I.sign_topk(GOOD, A, 3)),
    "AnnIndex": ("gallery", lambda A: I.AnnIndex("Flat").fit(A)),
    "AnnIndex (queries)": ("queries", lambda A: I.AnnIndex("Flat").fit(GOOD).search(A, 3)),
    "sign_topk (rescored)": ("queries", lambda A: I.sign_topk(A, GOOD, 3, rescore=2)),
    "compare_conditions": ("queries", lambda A: I.compare_conditions(A, k=3)),
    "compare_storage": ("queries", lambda A: I.compare_storage(A, I.StorageCondition("fp16", gallery="float16"), k=3)),
    "measure_grid": ("train", lambda A: list(I.measure_grid(A, {"a": Y}, GOOD, {"a": Y}, k=3))),  # a generator
    "stress_grid": ("train", lambda A: I.stress_grid(A, {"a": Y}, GOOD, {"a": Y}, k=3)),
}
#: Public names that take no matrix, each with where its inputs are checked instead.
EXEMPT = {
    "balanced_accuracy": "labels, checked in tests/metrics/test_probe.py",
    "eligible_classes": "labels, checked in tests/metrics/test_probe.py",
    "majority_floor": "labels, checked in tests/metrics/test_probe.py",
    "random_floor": "labels, checked in tests/metrics/test_retrieval.py",
    "frozen_classes": "a mapping of labels, checked in tests/metrics/test_suite.py",
    "hit_at_k": "neighbour indices, checked in tests/metrics/test_retrieval.py",
    "recall_at_k": "neighbour indices, checked in tests/metrics/test_retrieval.py",
    "overlap_at_k": "neighbour indices, checked in tests/metrics/test_retrieval.py",
    "precision_at_k": "neighbour indices, checked in tests/metrics/test_retrieval.py",
    "paired_bootstrap": "per-query values, checked in tests/metrics/test_stats.py",
    "ndcg_at_k": "neighbour indices and qrels, checked in tests/metrics/test_graded.py",
    "mrr_at_k": "neighbour indices and qrels, checked in tests/metrics/test_graded.py",
    "average_precision_at_k": "neighbour indices and qrels, checked in tests/metrics/test_graded.py",
    "graded_recall_at_k": "neighbour indices and qrels, checked in tests/metrics/test_graded.py",
    "paired_t_interval": "per-seed values, checked in tests/metrics/test_stats.py",
    "grid": "names and severities, checked in tests/interventions/test_stress.py",
    "make_intervention": "a name and a severity, checked in tests/interventions/test_stress.py",
    "LinearProbe": "an estimator: scikit-learn's own common checks, tests/metrics/test_probe.py",
    "CommonOffset": "an estimator: scikit-learn's common checks, tests/interventions/test_compression.py",
    "Contraction": "an estimator: scikit-learn's common checks, tests/interventions/test_compression.py",
    "MatryoshkaPrefix": "an estimator: scikit-learn's common checks, tests/interventions/test_compression.py",
    "Noise": "an estimator: scikit-learn's common checks, tests/interventions/test_compression.py",
    "PCACompression": "an estimator: scikit-learn's common checks, tests/interventions/test_compression.py",
    "RankRestriction": "an estimator: scikit-learn's common checks, tests/interventions/test_compression.py",
    "bytes_per_vector": "a format's name and a width, checked in tests/interventions/test_precision.py",
    "TruncationResult": "a result (a dataclass), made by compare_truncation",
    "truncation_bound": "cosines, checked in tests/interventions/test_truncation.py",
    "StorageCondition": "a declared condition (a dataclass), checked in tests/interventions/test_precision.py",
    "INTERVENTIONS": "a constant",
    "SEVERITIES": "a constant",
    "STUDY_CONDITIONS": "a constant",
}


def _bad() -> dict[str, np.ndarray]:
    nan, inf = GOOD.copy(), GOOD.copy()
    nan[3, 2] = np.nan
    inf[4, 1] = np.inf
    return {
        "NaN": nan,
        "inf": inf,
        "-inf": -inf,
        "1-D": GOOD[:, 0].copy(),
        "3-D": GOOD.reshape(30, 2, 3),
        "no rows": GOOD[:0],
        "object": GOOD.astype(object),
        "complex": GOOD + 1j,
        "strings": np.full((30, 6), "x"),
    }


def test_every_public_name_is_registered_or_exempt_with_its_reason():
    public = set(M.__all__) | set(I.__all__)
    registered = {name.split(" ")[0] for name in MATRIX} | set(EXEMPT)
    assert public - registered == set(), "register these with the common checks (or exempt them, with a reason)"
    assert registered - public == set(), "registered names that are no longer public"
    assert all(reason.strip() for reason in EXEMPT.values())


def test_the_good_matrix_is_accepted_by_every_registered_function():
    for name, (_, call) in MATRIX.items():
        call(GOOD)  # the checks below test the refusal, not a function that refuses everything


@pytest.mark.parametrize("bad", sorted(_bad()))
@pytest.mark.parametrize("name", sorted(MATRIX))
def test_a_bad_matrix_is_refused_naming_the_argument(name, bad):
    argument, call = MATRIX[name]
    with pytest.raises(ValueError) as refused:
        call(_bad()[bad])
    assert str(refused.value).startswith(f"{argument}:"), f"{name} on a {bad} matrix: {refused.value}"


def _names_the_argument(message: str, argument: str) -> bool:
    """``"argument: ..."``, or a refusal of two arguments (``"length mismatch: a has n, b has
    m"``, ``"b: has n columns but a has m"``, ``"k: ... (1 gallery rows)"``) naming it as a word."""
    return message.startswith(f"{argument}:") or bool(
        re.match(r"[\w\[\]' ]+: ", message) and re.search(rf"(?<![\w\['.]){re.escape(argument)}(?![\w\['])", message)
    )


def _answer_or_refusal(call, A, argument: str):
    """The answer on ``A`` (with numpy warnings as errors), or None when refused naming ``argument``."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        try:
            return call(A)
        except ValueError as refused:
            assert _names_the_argument(str(refused), argument), str(refused)
            return None


def _edges() -> dict[str, np.ndarray]:
    zero, ties = GOOD.copy(), GOOD.copy()
    zero[5] = 0.0
    ties[7] = ties[3]
    return {
        "1 row": GOOD[:1],
        "d = 1": GOOD[:, :1],
        "constant rows": np.ones((30, 6)),
        "a zero row": zero,
        "all zeros": np.zeros((30, 6)),
        "exact ties": ties,
        "int": np.rint(3 * GOOD).astype(np.int64),
        "bool": GOOD > 0,
    }


@pytest.mark.parametrize("edge", sorted(_edges()))
@pytest.mark.parametrize("name", sorted(MATRIX))
def test_an_edge_matrix_is_answered_or_refused_naming_the_argument(name, edge):
    argument, call = MATRIX[name]
    _answer_or_refusal(call, _edges()[edge], argument)


def test_the_known_answers_at_the_edges():
    E = _edges()
    ones = E["constant rows"]
    assert M.total_variance(ones) == 0.0 and M.participation_ratio(ones) == 1.0  # documented: no spectrum
    assert M.mean_cosine(ones) == pytest.approx(1.0, abs=1e-15)
    assert M.rankme(E["1 row"]) == pytest.approx(1.0)  # one nonzero singular value
    x = E["d = 1"][:, 0]
    assert M.total_variance(E["d = 1"]) == pytest.approx(np.var(x, ddof=1), rel=1e-12)
    signs = np.sign(x)
    assert M.mean_cosine(E["d = 1"]) == pytest.approx(  # in one dimension a cosine is a product of signs
        (signs.sum() ** 2 - len(x)) / (len(x) * (len(x) - 1)), abs=1e-12
    )
    ties = E["exact ties"]
    scores, idx = M.topk(ties, ties, 2, exclude_self=True, dtype=np.float64)
    assert idx[3, 0] == 7 and idx[7, 0] == 3 and scores[3, 0] == scores[7, 0] == pytest.approx(1.0, abs=1e-15)
    assert M.boundary_margin(np.array([[0.9, 0.5, 0.5, 0.1]]), 2) == 0.0  # ranks 2 and 3 tie exactly
    I8 = E["int"]
    assert M.participation_ratio(I8) == pytest.approx(M.participation_ratio(I8.astype(np.float64)), rel=1e-6)
    assert I.store(E["bool"], "int8").reconstruct().max() == pytest.approx(1.0, rel=1e-7)  # a float32 scale


def _values(result) -> np.ndarray:
    """Every number of a result (a float, a dict of them, a table's numeric columns, arrays)."""
    if isinstance(result, dict):
        return np.concatenate([_values(v) for v in result.values()])
    if hasattr(result, "select_dtypes"):
        return result.select_dtypes("number").to_numpy(np.float64).ravel()
    if isinstance(result, tuple):
        return np.concatenate([_values(v) for v in result])
    return np.asarray(result, dtype=np.float64).ravel()


def _without(result: dict, s: float, key: str = "total_variance") -> dict:
    """``result`` with its variance read at unit scale (a variance scales by the factor squared)."""
    return {**result, key: result[key] / s**2}


#: Functions whose answer a positive factor ``s`` on every matrix leaves unchanged, once read at
#: unit scale: (how to call it with the one matrix, how its answer reads at unit scale).
SCALE_FREE = {
    "mean_cosine": (M.mean_cosine, lambda r, s: r),
    "participation_ratio": (M.participation_ratio, lambda r, s: r),
    "rankme": (M.rankme, lambda r, s: r),
    "total_variance": (M.total_variance, lambda r, s: r / s**2),
    "summary": (M.summary, _without),
    "topk": (lambda A: M.topk(A, A, 3, exclude_self=True), lambda r, s: r),
    "topk (float64)": (lambda A: M.topk(A, A, 3, exclude_self=True, dtype=np.float64), lambda r, s: r),
    "sign_topk": (lambda A: I.sign_topk(A, A, 3, exclude_self=True), lambda r, s: r),
    "sign_topk (rescored)": (lambda A: I.sign_topk(A, A, 3, exclude_self=True, rescore=2), lambda r, s: r),
    "calibration_ranges": (I.calibration_ranges, lambda r, s: r / s),
    "AnnIndex": (lambda A: I.AnnIndex("HNSW8").fit(A).search(A, 3)[1], lambda r, s: r),
    "fit_probes": (lambda A: M.fit_probes(A, {"a": Y})["a"].predict(A) == "a", lambda r, s: r),
    "evaluate": (lambda A: M.evaluate(A, {"a": Y}, A, {"a": Y}, k=3), _without),
    "boundary_margin": (lambda A: M.boundary_margin(-np.sort(-A, axis=1), 3), lambda r, s: r / s),
    "stress_grid": (
        # not noise: its draw is seeded by the rows' bytes, so a factor changes the draw (not its law)
        lambda A: I.stress_grid(
            A,
            {"a": Y},
            A,
            {"a": Y},
            names=["contraction", "common_offset", "rank_restriction"],
            severities=[0.0, 0.5],
            k=3,
        ),
        lambda r, s: r.assign(total_variance=r["total_variance"] / s**2),
    ),
}
#: Registered functions outside SCALE_FREE, each with why its answer depends on the scale.
SCALED = {
    "store": "a storage format has a range: float16 overflows beyond 65504 and underflows below 2^-24",
    "compare_conditions": "stores the vectors (see store)",
    "compare_storage": "stores the vectors (see store)",
    "compare_truncation": "PCA subtracts a mean in the rows' units, and the certificate's underflow terms grow below "
    "1e-150 (a prefix alone is scale-free: tests/interventions/test_truncation.py)",
    "measure_grid": "the generator behind stress_grid, checked there",
}
SCALES = {
    "float32 x 1e30": (np.float32, 1e30),
    "float32 x 1e-30": (np.float32, 1e-30),
    "float64 x 1e200": (np.float64, 1e200),
    "float64 x 1e-200": (np.float64, 1e-200),
}


def test_every_registered_function_declares_its_scale_behaviour():
    assert {n.split(" ")[0] for n in MATRIX} == {n.split(" ")[0] for n in SCALE_FREE} | set(SCALED)


@pytest.mark.parametrize("scale", sorted(SCALES))
@pytest.mark.parametrize("name", sorted(SCALE_FREE))
def test_a_common_factor_changes_no_answer(name, scale):
    call, read = SCALE_FREE[name]
    dtype, s = SCALES[scale]
    A = (GOOD * s).astype(dtype)
    reference = _values(read(call(A.astype(np.float64) / s), 1.0))  # the float64 answer at unit scale
    argument = MATRIX.get(name, MATRIX.get(name.split(" ")[0], ("Z",)))[0]
    answer = _answer_or_refusal(call, A, "train" if name in ("evaluate", "stress_grid") else argument)
    if answer is None:
        assert dtype == np.float64, "float32 rows at 1e+-30 have float64 squares: they must be answered"
        return
    np.testing.assert_allclose(_values(read(answer, s)), reference, rtol=2e-5, atol=1e-6)


#: Parameters of the wrong type or out of range: (the parameter named, the call).
_S = -np.sort(-GOOD, axis=1)
_N = M.topk(GOOD, GOOD, 3, exclude_self=True)[1]
_P = [np.array([i]) for i in range(30)]
PARAMETERS = {
    "topk k=0": ("k", lambda: M.topk(GOOD, GOOD, 0)),
    "topk k=2.5": ("k", lambda: M.topk(GOOD, GOOD, 2.5)),
    "topk k=True": ("k", lambda: M.topk(GOOD, GOOD, True)),
    "topk k=n": ("k", lambda: M.topk(GOOD, GOOD, 30, exclude_self=True)),
    "topk exclude_self='yes'": ("exclude_self", lambda: M.topk(GOOD, GOOD, 3, exclude_self="yes")),
    "topk chunk_size=0": ("chunk_size", lambda: M.topk(GOOD, GOOD, 3, chunk_size=0)),
    "topk dtype=int8": ("dtype", lambda: M.topk(GOOD, GOOD, 3, dtype=np.int8)),
    "topk dtype='x'": ("dtype", lambda: M.topk(GOOD, GOOD, 3, dtype="x")),
    "rankme eps=-1": ("eps", lambda: M.rankme(GOOD, eps=-1)),
    "rankme eps=nan": ("eps", lambda: M.rankme(GOOD, eps=np.nan)),
    "rankme eps='a'": ("eps", lambda: M.rankme(GOOD, eps="a")),
    "summary block_rows=0": ("block_rows", lambda: M.summary(GOOD, block_rows=0)),
    "boundary_margin k=0": ("k", lambda: M.boundary_margin(_S, 0)),
    "boundary_margin k=d": ("k", lambda: M.boundary_margin(_S, 6)),
    "store fmt='int2'": ("fmt", lambda: I.store(GOOD, "int2")),
    "store fmt=3": ("fmt", lambda: I.store(GOOD, 3)),
    "store ranges of another width": ("ranges", lambda: I.store(GOOD, "int8cal", ranges=np.ones((2, 3)))),
    "store ranges for float16": ("ranges", lambda: I.store(GOOD, "float16", ranges=I.calibration_ranges(GOOD))),
    "bytes_per_vector fmt='native'": ("fmt", lambda: I.bytes_per_vector("native", 8)),
    "bytes_per_vector d=0": ("d", lambda: I.bytes_per_vector("int4", 0)),
    "sign_topk k=n": ("k", lambda: I.sign_topk(GOOD, GOOD, 30, exclude_self=True)),
    "sign_topk rescore=-1": ("rescore", lambda: I.sign_topk(GOOD, GOOD, 3, rescore=-1)),
    "AnnIndex k=0": ("k", lambda: I.AnnIndex("Flat").fit(GOOD).search(GOOD, 0)),
    "AnnIndex k=31": ("k", lambda: I.AnnIndex("Flat").fit(GOOD).search(GOOD, 31)),
    "AnnIndex nprobe=0": ("nprobe", lambda: I.AnnIndex("IVF2,Flat").fit(np.vstack([GOOD] * 3)).search(GOOD, 3, 0)),
    "sign_topk chunk_size=0": ("chunk_size", lambda: I.sign_topk(GOOD, GOOD, 3, chunk_size=0)),
    "calibration_ranges 1-D": ("X", lambda: I.calibration_ranges(GOOD[:, 0])),
    "compare_truncation k=0": ("k", lambda: I.compare_truncation(GOOD, _PREFIX, k=0)),
    "compare_truncation k=n-2": ("k", lambda: I.compare_truncation(GOOD, _PREFIX, k=28)),
    "compare_truncation model='x'": ("model", lambda: I.compare_truncation(GOOD, "x", k=3)),
    "compare_truncation model unfitted": ("model", lambda: I.compare_truncation(GOOD, I.MatryoshkaPrefix(3), k=3)),
    "truncation_bound cos_q=nan": ("cos_q", lambda: I.truncation_bound(np.nan, 0.5)),
    "compare_conditions k=0": ("k", lambda: I.compare_conditions(GOOD, k=0)),
    "compare_conditions k=n-2": ("k", lambda: I.compare_conditions(GOOD, k=28)),
    "compare_conditions chunk_size=0": ("chunk_size", lambda: I.compare_conditions(GOOD, k=3, chunk_size=0)),
    "compare_conditions conditions=['x']": ("conditions", lambda: I.compare_conditions(GOOD, ["x"], k=3)),
    "compare_storage condition='x'": ("condition", lambda: I.compare_storage(GOOD, "x", k=3)),
    "StorageCondition gallery='int2'": ("gallery", lambda: I.StorageCondition("a", gallery="int2")),
    "StorageCondition arithmetic='float16'": ("arithmetic", lambda: I.StorageCondition("a", arithmetic="float16")),
    "evaluate k=0": ("k", lambda: M.evaluate(GOOD, {"a": Y}, GOOD, {"a": Y}, k=0)),
    "evaluate standardize='yes'": ("standardize", lambda: M.evaluate(GOOD, {"a": Y}, GOOD, {"a": Y}, standardize="y")),
    "evaluate probes='no'": ("probes", lambda: M.evaluate(GOOD, {"a": Y}, GOOD, {"a": Y}, k=3, probes="no")),
    "evaluate train_labels=[...]": ("train_labels", lambda: M.evaluate(GOOD, [Y], GOOD, {"a": Y}, k=3)),
    "evaluate val_labels=[...]": ("val_labels", lambda: M.evaluate(GOOD, {"a": Y}, GOOD, [Y], k=3)),
    "evaluate train_labels without 'a'": ("train_labels", lambda: M.evaluate(GOOD, {}, GOOD, {"a": Y}, k=3)),
    "evaluate short val_labels": ("val_labels['a']", lambda: M.evaluate(GOOD, {"a": Y}, GOOD, {"a": Y[:5]}, k=3)),
    "evaluate classes without 'a'": ("classes", lambda: M.evaluate(GOOD, {"a": Y}, GOOD, {"a": Y}, k=3, classes={})),
    "evaluate neighbors of floats": (
        "neighbors",
        lambda: M.evaluate(GOOD, {"a": Y}, GOOD, {"a": Y}, k=3, neighbors=np.zeros((30, 3))),
    ),
    "evaluate neighbors of another shape": (
        "neighbors",
        lambda: M.evaluate(GOOD, {"a": Y}, GOOD, {"a": Y}, k=3, neighbors=_N[:, :2]),
    ),
    "fit_probes labels=[...]": ("labels", lambda: M.fit_probes(GOOD, [Y])),
    "fit_probes one class": ("labels['a']", lambda: M.fit_probes(GOOD, {"a": np.zeros(30)})),
    "fit_probes Cs=[-1]": ("Cs", lambda: M.fit_probes(GOOD, {"a": Y}, Cs=[-1])),
    "fit_probes val_size=2": ("val_size", lambda: M.fit_probes(GOOD, {"a": Y}, val_size=2)),
    "fit_probes max_iter=0": ("max_iter", lambda: M.fit_probes(GOOD, {"a": Y}, max_iter=0)),
    "fit_probes tol=-1": ("tol", lambda: M.fit_probes(GOOD, {"a": Y}, tol=-1)),
    "measure_grid names=['bogus']": (
        "name",
        lambda: list(I.measure_grid(GOOD, {"a": Y}, GOOD, {"a": Y}, names=["bogus"], k=3)),
    ),
    "measure_grid severities=[2]": (
        "severity",
        lambda: list(I.measure_grid(GOOD, {"a": Y}, GOOD, {"a": Y}, severities=[2.0], k=3)),
    ),
    "stress_grid seed='x'": ("seed", lambda: I.stress_grid(GOOD, {"a": Y}, GOOD, {"a": Y}, seed="x", k=3)),
    "make_intervention 'bogus'": ("name", lambda: I.make_intervention("bogus", 0.5)),
    "MatryoshkaPrefix k=d+1": ("k", lambda: I.MatryoshkaPrefix(7).fit(GOOD)),
    "PCACompression k=0": ("k", lambda: I.PCACompression(0).fit(GOOD)),
    "PCACompression center='yes'": ("center", lambda: I.PCACompression(2, center="yes").fit(GOOD)),
    "Noise severity=1": ("severity", lambda: I.Noise(1.0).fit(GOOD)),
    "Noise severity='a'": ("severity", lambda: I.Noise("a").fit(GOOD)),
    "Contraction severity=nan": ("severity", lambda: I.Contraction(np.nan).fit(GOOD)),
    "CommonOffset direction of another length": (
        "direction",
        lambda: I.CommonOffset(0.5, direction=np.ones(3)).fit(GOOD),
    ),
    "CommonOffset direction zero": ("direction", lambda: I.CommonOffset(0.5, direction=np.zeros(6)).fit(GOOD)),
    "RankRestriction seed=1.5": ("seed", lambda: I.RankRestriction(0.5, seed=1.5).fit(GOOD)),
    "hit_at_k k=0": ("k", lambda: M.hit_at_k(_N, _P, k=0)),
    "hit_at_k k>len": ("k", lambda: M.hit_at_k(_N, _P, k=9)),
    "hit_at_k per_query='yes'": ("per_query", lambda: M.hit_at_k(_N, _P, per_query="yes")),
    "hit_at_k neighbors of floats": ("neighbors", lambda: M.hit_at_k(_N + 0.5, _P)),
    "hit_at_k negative neighbors": ("neighbors", lambda: M.hit_at_k(_N - 100, _P)),
    "hit_at_k negative positives": ("positives", lambda: M.hit_at_k(_N, [np.array([-5])] * 30)),
    "hit_at_k too few positives": ("positives", lambda: M.hit_at_k(_N, _P[:3])),
    "recall_at_k no positives": ("positives", lambda: M.recall_at_k(_N, [np.array([], int)] * 30)),
    "overlap_at_k shapes differ": ("neighbors_a and neighbors_b", lambda: M.overlap_at_k(_N, _N[:, :2])),
    "overlap_at_k 1-D": ("neighbors_a", lambda: M.overlap_at_k(_N[:, 0], _N[:, 0])),
    "overlap_at_k per_query='yes'": ("per_query", lambda: M.overlap_at_k(_N, _N, per_query="yes")),
    "precision_at_k out of range": ("neighbors", lambda: M.precision_at_k(_N + 100, Y)),
    "precision_at_k per_query='yes'": ("per_query", lambda: M.precision_at_k(_N, Y, per_query="yes")),
    "precision_at_k short query_labels": ("query_labels", lambda: M.precision_at_k(_N, Y, Y[:4])),
    "precision_at_k short labels": ("labels", lambda: M.precision_at_k(_N, Y[:4])),
    "precision_at_k short labels (gallery)": ("labels", lambda: M.precision_at_k(_N, Y[:4], Y)),
    "paired_bootstrap n_draws=0": ("n_draws", lambda: M.paired_bootstrap(GOOD[:, 0], GOOD[:, 1], n_draws=0)),
    "paired_bootstrap level=1.5": ("level", lambda: M.paired_bootstrap(GOOD[:, 0], GOOD[:, 1], level=1.5)),
    "paired_bootstrap NaN": ("a", lambda: M.paired_bootstrap(GOOD[:, 0] + np.nan, GOOD[:, 1])),
    "paired_bootstrap statistic='median'": (
        "statistic",
        lambda: M.paired_bootstrap(GOOD[:, 0], GOOD[:, 1], statistic="median"),
    ),
    "paired_bootstrap groups too short": ("groups", lambda: M.paired_bootstrap(GOOD[:, 0], GOOD[:, 1], groups=[0, 1])),
    "paired_bootstrap one pair": ("a", lambda: M.paired_bootstrap(GOOD[:1, 0], GOOD[:1, 1])),
    "paired_bootstrap one group": ("groups", lambda: M.paired_bootstrap(GOOD[:, 0], GOOD[:, 1], groups=[0] * 30)),
    "paired_t_interval level=0": ("level", lambda: M.paired_t_interval(GOOD[:, 0], GOOD[:, 1], level=0)),
    "paired_t_interval one pair": ("a", lambda: M.paired_t_interval(GOOD[:1, 0], GOOD[:1, 1])),
    "paired_t_interval 2-D": ("a", lambda: M.paired_t_interval(GOOD, GOOD)),
    "balanced_accuracy lengths differ": ("y_pred", lambda: M.balanced_accuracy(Y, Y[:3], ["a", "b"])),
    "balanced_accuracy no classes": ("classes", lambda: M.balanced_accuracy(Y, Y, [])),
    "eligible_classes min_support=-1": ("min_support", lambda: M.eligible_classes(Y, -1)),
    "eligible_classes 2-D": ("y", lambda: M.eligible_classes(GOOD)),
    "frozen_classes of an array": ("labels", lambda: M.frozen_classes(Y)),
    "majority_floor empty": ("y", lambda: M.majority_floor([])),
    "random_floor 2-D": ("labels", lambda: M.random_floor(GOOD)),
    "ndcg_at_k k=0": ("k", lambda: M.ndcg_at_k(_N, [{0: 1}] * 30, k=0)),
    "mrr_at_k fractional grades": ("qrels", lambda: M.mrr_at_k(_N, [{0: 0.5}] * 30)),
    "average_precision_at_k short qrels": ("qrels", lambda: M.average_precision_at_k(_N, [{0: 1}] * 3)),
    "graded_recall_at_k per_query='yes'": ("per_query", lambda: M.graded_recall_at_k(_N, [{0: 1}] * 30, per_query="y")),
}


@pytest.mark.parametrize("case", sorted(PARAMETERS))
def test_a_bad_parameter_is_refused_naming_it(case):
    parameter, call = PARAMETERS[case]
    with pytest.raises(ValueError) as refused:
        call()
    assert _names_the_argument(str(refused.value), parameter), f"{case}: {refused.value}"


def test_every_public_function_has_a_bad_parameter_case():
    checked = {case.split(" ")[0] for case in PARAMETERS}
    takes_parameters = set(M.__all__) | set(I.__all__)
    without = {
        "mean_cosine",
        "participation_ratio",
        "total_variance",  # a matrix only: MATRIX checks it
        "grid",  # names and severities are checked when an intervention is fitted (scikit-learn's rule)
        "INTERVENTIONS",
        "SEVERITIES",
        "STUDY_CONDITIONS",
        "LinearProbe",
        "TruncationResult",
    }  # constants; LinearProbe: fit_probes'; TruncationResult: compare_truncation's
    assert takes_parameters - without - checked == set()

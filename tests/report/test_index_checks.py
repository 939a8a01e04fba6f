"""``--index`` refused before the kernel starts (issue #42): an index file is checked against the
vectors it claims to index (its shape, then a seeded sample of its rows), and a FAISS factory
string against the rows it would be trained and filled on. Each refusal is an ``InputError``
``--index ITEM: why``, which ``embdiag report`` turns into exit 2 with no chapter run (the chapter
run is replaced here by a function that fails the test)."""

from __future__ import annotations

import numpy as np
import pytest

from embdiag import exits
from embdiag.data.files import InputError
from embdiag.interventions.ann import AnnIndex
from embdiag.report import cli
from embdiag.report.conditions import parse_conditions, parse_index

faiss = pytest.importorskip("faiss")
RNG = np.random.default_rng(0)
N, D = 200, 16
X = RNG.standard_normal((N, D)).astype(np.float32)
OTHER = RNG.standard_normal((N, D)).astype(np.float32)  # other vectors of the same n and d


def _must_not_run(*args, **kwargs):
    raise AssertionError("refused before anything runs: no chapter may execute")


def _write(index, path) -> str:
    faiss.write_index(index, str(path))
    return str(path)


def _file(factory: str, rows, path) -> str:
    """A file of the index ``factory`` built over ``rows`` (unit float32 rows, as the report builds)."""
    return _write(AnnIndex(factory).fit(rows).index_, path)


def _report(tmp_path, monkeypatch, capsys, index: str) -> tuple[int, str]:
    """``embdiag report`` on X with ``--index index`` (no chapter may run): its status and stderr."""
    monkeypatch.setattr(cli, "write_report", _must_not_run)
    np.save(tmp_path / "vectors.npy", X)
    status = cli.main([str(tmp_path / "vectors.npy"), "--index", index, "--out", str(tmp_path / "out")], progress=False)
    return status, capsys.readouterr().err


# -- an index file holds the rows it claims to index -------------------------------------------------


def test_an_index_file_of_other_vectors_is_refused_before_the_kernel(tmp_path, monkeypatch, capsys):
    """The issue's case: a flat index of other vectors of the same n and d ran, reporting overlap =
    recall = 0.05 for an index that is not of these vectors."""
    path = _file("Flat", OTHER, tmp_path / "other.index")
    status, err = _report(tmp_path, monkeypatch, capsys, f"hnsw;file:{path}")
    assert status == exits.BAD_INPUT
    assert f"--index file:{path}: row i of the index is not row i of VECTORS: " in err
    assert "rows sampled with seed 0 are among the nearest eighth" in err and "fewer than half" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "factory",
    [
        "Flat",
        "HNSW16",
        "IVF8,Flat",
        "IVF8,PQ4x4",
        "PQ1x4",  # 4 bits a row: a very coarse reconstruction still lies nearest its own row
        "PCA8,IVF8,SQ8",
        "IVF8,PQ4x4,RFlat",
        "IVF8,PQ4x4fs",  # cannot reconstruct: searched, own id among the top results
    ],
)
def test_an_index_file_matches_its_own_rows_lossy_or_not_and_no_others(tmp_path, factory):
    own = _file(factory, X, tmp_path / "own.index")
    (cond,) = parse_conditions("", f"file:{own}", n=N, d=D, vectors=X)
    assert cond.name == "own" and cond.path == own
    other = _file(factory, OTHER, tmp_path / "other.index")
    with pytest.raises(InputError, match=rf"^--index file:{other}: row i of the index is not row i of VECTORS: "):
        parse_conditions("", f"file:{other}", n=N, d=D, vectors=X)
    shuffled = _file(factory, X[RNG.permutation(N)], tmp_path / "shuffled.index")  # these rows, another order
    with pytest.raises(InputError, match=r"fewer than half"):
        parse_conditions("", f"file:{shuffled}", n=N, d=D, vectors=X)


def test_the_check_leaves_an_ivf_file_as_it_was_read(tmp_path):
    """An IVF reconstructs a row by id only through a direct map: made for the check, removed after."""
    read = AnnIndex.read(_file("IVF8,PQ4x4", X, tmp_path / "ivf.index"))
    assert read.mismatch(X) is None and read.mismatch(OTHER) is not None
    assert faiss.extract_index_ivf(read.index_).direct_map.type == faiss.DirectMap.NoMap
    np.testing.assert_array_equal(read.search(X[:5], 3)[1][:, 0], np.arange(5))


def test_rows_that_are_zero_or_not_finite_are_left_to_the_chapters_scan(tmp_path):
    path = _file("Flat", X, tmp_path / "flat.index")
    V = X.copy()
    V[::3] = 0.0  # the sample's zero rows are left out; the rest still match
    V[1] = np.nan
    assert parse_conditions("", f"file:{path}", n=N, d=D, vectors=V)[0].name == "flat"


@pytest.mark.parametrize(
    "make, message",
    [
        (
            lambda: AnnIndex("Flat").fit(X[:150]).index_,
            r"the index holds 150 rows, VECTORS has 200 \(row i of the index",
        ),
        (lambda: AnnIndex("Flat").fit(X[:, :8]).index_, r"the index has d = 8, the vectors d = 16$"),
        (lambda: faiss.IndexFlat(D, faiss.METRIC_L1), r"the index's metric is 2; inner product or L2 is needed$"),
    ],
    ids=["150-rows", "d-8", "metric-L1"],
)
def test_an_index_file_of_another_shape_or_metric_is_exit_2(tmp_path, monkeypatch, capsys, make, message):
    """Before: the row count was checked only in the chapter's cell 3 (exit 3)."""
    path = _write(make(), tmp_path / "flat150.index")
    status, err = _report(tmp_path, monkeypatch, capsys, f"file:{path}")
    assert status == exits.BAD_INPUT
    assert err.startswith(f"embdiag report: --index file:{path}: ")
    with pytest.raises(InputError, match=rf"^--index file:{path}: {message}"):
        parse_index(f"file:{path}", N, D)


# -- a factory string's parameters fit the rows ------------------------------------------------------


def test_an_ivf_of_more_lists_than_rows_is_exit_2_before_the_kernel(tmp_path, monkeypatch, capsys):
    """The issue's case: FAISS's "Number of training points (200) should be at least as large as
    number of clusters (4096)" came as a traceback from the chapter's cell 3 (exit 3)."""
    status, err = _report(tmp_path, monkeypatch, capsys, "hnsw;faiss:IVF4096,Flat")
    assert status == exits.BAD_INPUT
    assert err == (
        "embdiag report: --index faiss:IVF4096,Flat: k-means of 4,096 inverted lists needs at least 4,096 "
        "training rows (one per centroid), got 200\n"
    )


@pytest.mark.parametrize(
    "spec, message",
    [
        (
            "IVF201,Flat",
            r"k-means of 201 inverted lists needs at least 201 training rows \(one per centroid\), got 200$",
        ),
        ("IVF0,Flat", r"an IVF of 0 inverted lists; it needs at least 1$"),
        ("IVF8,PQ4x8", r"the product quantizer \(codebooks of 2\^8 = 256 centroids\) needs at least 256 training"),
        ("HNSW8_PQ4x8", r"the product quantizer \(codebooks of 2\^8 = 256 centroids\) needs at least 256"),
        ("RQ2x8", r"the additive quantizer \(codebooks of 2\^8 = 256 centroids\) needs at least 256"),
        ("OPQ4,IVF8,PQ4x4", r"OPQ's rotation \(trained with codebooks of 256 centroids\) needs at least 256"),
        ("IVF8,PQ4x0", r"the product quantizer with 0-bit codes; 1 to 16 bits per code are possible$"),
        ("PQ4x17", r"the product quantizer with 17-bit codes; 1 to 16 bits per code are possible$"),
        ("HNSW1", r"HNSW with M below 2 links per node; M must be at least 2$"),
        ("IVF8_HNSW0,Flat", r"HNSW with M below 2 links per node"),
        ("PCA32,Flat", r"PCA to 32 dimensions of 16; PCA cannot add dimensions$"),
        ("IDMap,Flat", r"IDMap takes rows only with ids \(add_with_ids\)"),
        ("IVF8,PQ5", r"FAISS cannot make this index \(.*multiple of the number of subquantizers"),  # FAISS's parser
    ],
)
def test_factory_parameters_the_rows_cannot_carry_are_refused_naming_the_item(spec, message):
    with pytest.raises(InputError, match=rf"^--index faiss:{spec}: {message}"):
        parse_index(f"hnsw;faiss:{spec}", N, D)


def test_the_rules_are_faiss_own_at_the_boundary():
    """One training row per centroid is what FAISS's k-means asks (it raises below); NSG's
    NNDescent needs more than 100 rows."""
    parse_index("faiss:IVF200,Flat;faiss:PQ4x7", N, D)  # 200 lists, 128 centroids on 200 rows: accepted
    AnnIndex("IVF200,Flat").fit(X)
    AnnIndex("PQ4x7").fit(X)
    with pytest.raises(RuntimeError, match="nx >= "):
        AnnIndex("IVF201,Flat").fit(X)
    parse_index("faiss:NSG16", 101, D)
    AnnIndex("NSG16").fit(X[:101])
    with pytest.raises(
        InputError, match=r"^--index faiss:NSG16: NSG's graph \(built by NNDescent\) needs more than 100 rows, got 100$"
    ):
        parse_index("faiss:NSG16", 100, D)
    with pytest.raises(RuntimeError, match="NNDescent"):
        AnnIndex("NSG16").fit(X[:100])


def test_codebooks_are_checked_against_the_training_sample_not_the_rows():
    """Training takes a sample of at most max(40 nlist, 10,000) rows."""
    with pytest.raises(
        InputError,
        match=r"^--index faiss:PQ4x16: the product quantizer \(codebooks of 2\^16 = 65,536 centroids\) needs at "
        r"least 65,536 training rows \(one per centroid\), got a training sample of 10,000 of the 1,000,000 rows$",
    ):
        parse_index("faiss:PQ4x16", 1_000_000, D)
    parse_index("faiss:IVF2048,PQ4x16", 1_000_000, D)  # 40 x 2,048 = 81,920 training rows


def test_fewer_than_39_training_rows_per_centroid_is_a_note_not_a_refusal():
    """FAISS warns below 39 training rows per centroid and trains: the description says so."""
    (ivf,) = parse_index("faiss:IVF16,Flat", N, D)
    assert ivf.description.endswith(
        " Note: FAISS advises 39 training rows per centroid: k-means of 16 inverted lists is trained on 200, "
        "fewer than 624 (FAISS warns, and trains)."
    )
    (few,) = parse_index("faiss:IVF4,Flat", N, D)  # 156 rows advised
    assert "Note:" not in few.description


def test_a_quick_run_refuses_a_prebuilt_index_it_would_search_on_a_sample(tmp_path):
    from embdiag.report import measurement

    n = measurement.QUICK_GALLERY_ROWS + 1
    vectors = np.random.default_rng(0).normal(size=(n, 4)).astype(np.float32)
    index = faiss.IndexFlatIP(4)
    index.add(vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    path = tmp_path / "all.index"
    faiss.write_index(index, str(path))
    conds = parse_conditions("", f"file:{path}", n=n, d=4)
    with pytest.raises(InputError, match=r"^--quick: a quick run searches a sample of 100,000 of the 100,001 rows"):
        measurement.check_quick_index(conds, n, quick=True)
    measurement.check_quick_index(conds, n, quick=False)
    measurement.check_quick_index(conds, measurement.QUICK_GALLERY_ROWS, quick=True)  # no sample: searched whole

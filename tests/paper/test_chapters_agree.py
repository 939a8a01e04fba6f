"""Executed chapters agree with the committed ones on another float path, within tolerance.

Five chapters (three of design B, the report and the compression frontier) and the training
chapter, with procedural scenes rendered afresh, are executed on an older x86-64 float path
(SSE4 kernels in numpy, ATen, oneDNN, OpenBLAS and MKL, FAISS without SIMD) and compared with the committed
notebooks by :func:`embdiag.paper.agreement.compare`: every word and verdict exactly, every
number within the declared tolerance. On a machine whose own float path is not the committed
one, every chapter is compared so (nbval's exact comparison is skipped there, see conftest).
"""

from __future__ import annotations


import nbformat
import pytest

from embdiag import floatpath
from embdiag.paper import agreement, pipeline

#: An x86-64 machine of 2009 (SSE4.2, no AVX), with the pin turned off.
OTHER_PATH = {
    "EMBDIAG_FLOAT_PATH": "native",
    "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR",
    "ATEN_CPU_CAPABILITY": "default",
    "ONEDNN_MAX_CPU_ISA": "SSE41",
    "OPENBLAS_CORETYPE": "Nehalem",
    "MKL_CBWR": "SSE4_2",
    "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
    "FAISS_SIMD_LEVEL": "NONE",
}
CROSS_PATH = ("05_stress_tests", "06_compression", "07_neighbour_stability", "21_report", "22_choosing_a_compression")


def _execute(name: str, tmp_path):
    source, parameters = pipeline.executed()[name]
    layout = pipeline.Layout(notebooks=pipeline.DEFAULT.notebooks, book=tmp_path)
    return pipeline.execute(source, parameters, layout, output=name)


def _check(name: str, fresh) -> None:
    committed = pipeline.DEFAULT.chapters / f"{name}.ipynb"
    differences = agreement.compare_files(committed, fresh)
    assert not differences, (
        f"{name} re-executed on {pipeline.float_path(fresh)} departs from the committed "
        "chapter:\n" + "\n".join(map(str, differences[:20]))
    )


@pytest.mark.slow
@pytest.mark.skipif(not floatpath.supported(), reason="simulates another x86-64 float path")
@pytest.mark.parametrize("name", CROSS_PATH)
def test_chapter_agrees_on_another_float_path(name, tmp_path, monkeypatch):
    for key in floatpath.PINNED:
        monkeypatch.delenv(key, raising=False)
    for key, value in OTHER_PATH.items():
        monkeypatch.setenv(key, value)
    fresh = _execute(name, tmp_path)
    meta = nbformat.read(fresh, as_version=4).metadata["embdiag"]
    assert meta["float_path"] != pipeline.float_path(pipeline.DEFAULT.chapters / f"{name}.ipynb")
    _check(name, fresh)


@pytest.mark.slow
@pytest.mark.skipif(not floatpath.supported(), reason="simulates another x86-64 float path")
def test_training_chapter_agrees_with_scenes_rendered_on_another_float_path(tmp_path, monkeypatch):
    """The committed training records against procedural scenes rendered afresh on the other path
    (a data root whose cache is empty; every committed artifact linked in), the chapter run first:
    the scenes it renders to check the records' staleness are not inputs of its page."""
    root = tmp_path / "data"
    root.mkdir()
    for entry in (pipeline.REPO / "data").iterdir():
        if entry.name != "cache":
            (root / entry.name).symlink_to(entry.resolve())
    for key in floatpath.PINNED:
        monkeypatch.delenv(key, raising=False)
    for key, value in {**OTHER_PATH, "EMBDIAG_DATA": str(root)}.items():
        monkeypatch.setenv(key, value)
    fresh = _execute("03_training", tmp_path / "book")  # the kernel renders the scenes: nothing cached
    assert len(list((root / "cache").glob("scenes-*"))) == 3
    _check("03_training", fresh)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(pipeline.executed()))
def test_chapter_agrees_within_tolerance(name, tmp_path):
    if pipeline.committed_float_paths() == {floatpath.current()}:
        pytest.skip("this machine runs the committed float path: nbval compares the chapter exactly")
    _check(name, _execute(name, tmp_path))

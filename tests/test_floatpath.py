"""The pinned float path: which variables, when they apply, and that commands re-execute on it."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from embdiag import floatpath

PROBE = (
    "import json, os, numpy, torch, faiss; from numpy._core._multiarray_umath import __cpu_features__ as f; "
    "print(json.dumps({'numpy_avx512': bool(numpy._core._multiarray_umath.__cpu_dispatch__) and "
    "'AVX512_ICL' in [k for k in numpy._core._multiarray_umath.__cpu_dispatch__ if f.get(k)] and "
    "os.environ.get('NPY_DISABLE_CPU_FEATURES') is None, 'aten': torch.backends.cpu.get_cpu_capability(), "
    "'threads': torch.get_num_threads(), 'faiss': faiss.SIMDConfig.get_level_name()}))"
)


def test_environment_adds_every_pinned_variable_and_leaves_the_rest():
    base = {"PATH": "/bin", "OMP_NUM_THREADS": "16"}
    env = floatpath.environment(base)
    assert base == {"PATH": "/bin", "OMP_NUM_THREADS": "16"}  # a copy
    if floatpath.supported():
        assert {k: env[k] for k in floatpath.PINNED} == floatpath.PINNED and env["PATH"] == "/bin"
        assert floatpath.current(env) == floatpath.LEVEL
    else:
        assert env == base and floatpath.current(env).startswith("native")
    assert floatpath.current(base).startswith("native")


def test_native_turns_the_pin_off_and_a_bad_value_is_named():
    off = {floatpath.SWITCH: "native"}
    assert floatpath.environment(off) == off and not floatpath.wanted(off)
    assert floatpath.wanted({}) and floatpath.wanted({floatpath.SWITCH: " Pinned "})
    with pytest.raises(ValueError, match=r"^EMBDIAG_FLOAT_PATH: expected one of \('pinned', 'native'\), got 'fast'$"):
        floatpath.wanted({floatpath.SWITCH: "fast"})


def test_the_level_is_avx2_in_every_library():
    assert floatpath.LEVEL == "x86-64-v3" and floatpath.PINNED["ATEN_CPU_CAPABILITY"] == "avx2"
    assert (
        floatpath.PINNED["ONEDNN_MAX_CPU_ISA"]
        == floatpath.PINNED["MKL_CBWR"]
        == floatpath.PINNED["FAISS_SIMD_LEVEL"]
        == "AVX2"
    )
    assert "X86_V4" in floatpath.PINNED["NPY_DISABLE_CPU_FEATURES"].split()
    threads = {floatpath.PINNED[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    assert threads == {str(floatpath.THREADS)}


def _clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in floatpath.PINNED and k != floatpath.SWITCH}
    return {**env, **extra}


@pytest.mark.skipif(not floatpath.supported(), reason="needs an x86-64 machine with AVX2")
def test_a_command_re_executes_itself_on_the_pinned_path(tmp_path):
    """A module run with ``python -m`` that calls ensure() from an unpinned shell runs again on the
    pinned path, with its arguments (as the ``embdiag`` command does)."""
    (tmp_path / "probe_command.py").write_text(
        "import os, sys\nfrom embdiag import floatpath\nfloatpath.ensure()\n"
        "print(floatpath.current(), os.environ.get('ATEN_CPU_CAPABILITY', '-'), *sys.argv[1:])\n"
    )
    env = _clean_env(PYTHONPATH=str(tmp_path))
    run = [sys.executable, "-m", "probe_command", "a b", "c"]
    done = subprocess.run(run, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [floatpath.LEVEL, "avx2", "a", "b", "c"]
    off = subprocess.run(run, env={**env, floatpath.SWITCH: "native"}, capture_output=True, text=True, timeout=60)
    assert off.stdout.split() == ["native", platform.machine().lower(), "-", "a", "b", "c"]
    bad = subprocess.run(
        [sys.executable, "-m", "embdiag.paper.cli", "sync"],
        env={**env, floatpath.SWITCH: "fast"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "EMBDIAG_FLOAT_PATH: expected one of" in bad.stderr


@pytest.mark.skipif(not floatpath.supported(), reason="needs an x86-64 machine with AVX2")
def test_the_launcher_runs_a_command_on_the_pinned_path():
    done = subprocess.run(
        [sys.executable, "-m", "embdiag.floatpath", sys.executable, "-c", PROBE],
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert '"aten": "AVX2"' in done.stdout and '"numpy_avx512": false' in done.stdout
    assert f'"threads": {floatpath.THREADS}' in done.stdout and '"faiss": "AVX2"' in done.stdout
    listing = subprocess.run(
        [sys.executable, "-m", "embdiag.floatpath"], env=_clean_env(), capture_output=True, text=True, timeout=60
    ).stdout.splitlines()
    assert listing[0] == floatpath.LEVEL and "ATEN_CPU_CAPABILITY=avx2" in listing
    missing = subprocess.run(
        [sys.executable, "-m", "embdiag.floatpath", "no-such-command-here"],
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 2 and "cannot run 'no-such-command-here'" in missing.stderr


@pytest.mark.skipif(not floatpath.supported(), reason="needs an x86-64 machine with AVX2")
def test_ray_workers_get_the_pinned_variables(monkeypatch):
    from embdiag import cluster

    monkeypatch.delenv(floatpath.SWITCH, raising=False)
    assert cluster._float_path_variables() == floatpath.PINNED
    monkeypatch.setenv(floatpath.SWITCH, "native")
    assert cluster._float_path_variables() == {}

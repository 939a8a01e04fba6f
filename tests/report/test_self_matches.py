"""Self-matches: without ``--queries`` the queries are VECTORS' rows and a query is never its own
neighbour, so a pair or judgment of a query with its own row is excluded (counted in report.json
and on the page), a query left with nothing is not scored, and a file of nothing else is refused;
with ``--queries`` query i and row i are different items and the pair stays."""

from __future__ import annotations

import json

import jsonschema
import numpy as np
import pandas as pd
import pytest

from embdiag.data.files import InputError, file_record
from embdiag.metrics.graded import ndcg_at_k
from embdiag.metrics.retrieval import hit_at_k, recall_at_k, topk
from embdiag.report import sections
from embdiag.report import measure
from embdiag.report import verify as V

N, D, K = 60, 8, 5
X = np.random.default_rng(0).standard_normal((N, D)).astype(np.float32)


def value(rep, metric, condition="reference"):
    m = rep.metrics
    row = m[(m.section == "relevance") & (m.metric == metric) & (m.condition == condition)]
    assert len(row) == 1, (metric, condition)
    return float(row.iloc[0].value)


def neighbours(Q=X, own=True):
    """Brute force: each query's K nearest rows of X, its own row left out when ``own``."""
    _, nb = topk(Q, X, K + own)
    if own:
        nb = np.array([[j for j in row if j != i][:K] for i, row in enumerate(nb)])
    return nb


def test_every_pair_a_self_pair_is_refused_naming_pairs():
    with pytest.raises(InputError, match=r"^--pairs: every pair is a self-pair \(60 of them.*never its own neighbour"):
        measure(X, pairs=[np.array([i]) for i in range(N)], compress="fp16", k=K, progress=False)


def test_self_pairs_are_excluded_counted_and_their_queries_left_unscored():
    """Half the queries have only their own row as positive, the others their own row and the next:
    Hit@k is that of the others over the next row alone (before: own rows counted as misses)."""
    pos = [np.array([i]) if i % 2 else np.array([i, (i + 1) % N]) for i in range(N)]
    rep = measure(X, pairs=pos, compress="fp16", k=K, progress=False)
    kept = np.arange(0, N, 2)
    truth = [np.array([(i + 1) % N]) for i in kept]
    nb = neighbours()[kept]
    assert value(rep, f"hit@{K}") == pytest.approx(hit_at_k(nb, truth), abs=1e-12)
    assert value(rep, f"recall@{K}") == pytest.approx(recall_at_k(nb, truth), abs=1e-12)
    assert value(rep, f"hit@{K}") > 0.0
    assert rep.inputs["self_matches"] == {"excluded": N, "queries_unscored": N // 2}
    assert rep.inputs["n_queries_with_positives"] == N // 2
    assert rep.tables["relevance"]["n_queries"].tolist() == [N // 2, N // 2]
    note = "--pairs: 60 self-pairs (a query paired with its own row) excluded"
    assert any(
        s.startswith(note) and "30 queries left with no positive are not scored" in s for s in rep.inputs["notes"]
    )
    page = sections.overview(rep, "test").data  # the note is visible on the page
    assert "- Note: " + note in page
    scored = sections.sampling(rep).text  # how the rows were sampled: folded under the data line
    assert "**Relevance:** Hit@5 and recall@5 over every one of the 30 queries with a positive." in scored
    shown = [p.data for p in sections.relevance.exhibits(rep) if hasattr(p, "data") and isinstance(p.data, str)]
    assert "*Queries:* Hit@5 and recall@5 over every one of the 30 queries with a positive." in shown


def test_no_self_pair_records_zero_excluded():
    rep = measure(X, pairs=[np.array([(i + 1) % N]) for i in range(N)], compress="fp16", k=K, progress=False)
    assert rep.inputs["self_matches"] == {"excluded": 0, "queries_unscored": 0}
    assert not any("self-pairs" in s for s in rep.inputs["notes"])


def test_with_separate_queries_a_pair_i_i_is_not_a_self_match():
    Q = X[:20] + 0.01
    pos = [np.array([i]) for i in range(20)]
    rep = measure(X, queries=Q, pairs=pos, compress="fp16", k=K, progress=False)
    assert "self_matches" not in rep.inputs
    assert value(rep, f"hit@{K}") == pytest.approx(hit_at_k(neighbours(Q, own=False), pos), abs=1e-12) == 1.0


def test_every_relevant_judgment_a_self_judgment_is_refused_naming_qrels():
    qrels = [{i: 2, (i + 1) % N: 0} for i in range(N)]
    with pytest.raises(InputError, match=r"^--qrels: every relevant judgment is a query judging its own row"):
        measure(X, qrels=qrels, compress="fp16", k=K, progress=False)


def test_self_judgments_are_excluded_and_the_rest_scored():
    """Every query judges itself relevant (before: nDCG, MRR, MAP and recall 0.0); a third also
    judge another row."""
    qrels = [{i: 2} for i in range(N)]
    for i in range(0, N, 3):
        qrels[i][(i + 2) % N] = 1
    rep = measure(X, qrels=qrels, compress="fp16", k=K, progress=False)
    scored = np.arange(0, N, 3)
    truth = [{(i + 2) % N: 1} for i in scored]
    nb = neighbours()[scored]
    assert value(rep, f"ndcg@{K}") == pytest.approx(ndcg_at_k(nb, truth, k=K), abs=1e-12)
    assert value(rep, f"ndcg@{K}") > 0.0
    assert rep.inputs["self_matches"] == {"excluded": N, "queries_unscored": N - len(scored)}
    assert rep.inputs["n_queries_judged"] == len(scored)
    assert any(
        s.startswith("--qrels: 60 self-judgments (a query judging its own row) excluded") for s in rep.inputs["notes"]
    )


def test_a_report_with_self_pairs_follows_the_schema_and_is_verified(tmp_path):
    """The exclusion is the measurement's: embdiag verify re-measures and agrees."""
    from embdiag.report.cli import read_inputs

    np.save(tmp_path / "v.npy", X)
    q = np.arange(N)
    t = np.where(q % 2, q, (q + 1) % N)
    pd.DataFrame({"query": np.r_[q, q[::4]], "target": np.r_[t, q[::4]]}).to_csv(tmp_path / "p.csv", index=False)
    given = {"VECTORS": tmp_path / "v.npy", "--pairs": tmp_path / "p.csv"}
    data = read_inputs(given["VECTORS"], pairs=given["--pairs"])
    rep = measure(**data, compress="int4", k=K, progress=False, sources={o: file_record(p) for o, p in given.items()})
    rep.save(tmp_path / "r")
    document = json.loads((tmp_path / "r" / "report.json").read_text())
    assert document["inputs"]["self_matches"] == {"excluded": N // 2 + len(q[::4]), "queries_unscored": N // 2}
    jsonschema.validate(document, json.loads(V.SCHEMA_FILE.read_text()))
    assert V.verify(tmp_path / "r") == ([], [])


@pytest.mark.parametrize("option", ["--pairs", "--qrels"])
def test_a_file_of_self_matches_is_refused_before_the_kernel(tmp_path, monkeypatch, capsys, option):
    from embdiag import exits
    from embdiag.report import cli

    def must_not_run(*args, **kwargs):
        raise AssertionError("the chapter ran")

    monkeypatch.setattr(cli, "write_report", must_not_run)
    np.save(tmp_path / "v.npy", X)
    rows = np.arange(N)
    table = {"query": rows, "target": rows} if option == "--pairs" else {"query": rows, "document": rows, "grade": 1}
    pd.DataFrame(table).to_csv(tmp_path / "j.csv", index=False)
    status = cli.main([str(tmp_path / "v.npy"), option, str(tmp_path / "j.csv"), "--out", str(tmp_path / "r")])
    assert status == exits.BAD_INPUT and not (tmp_path / "r").exists()
    assert f"{option}: every" in capsys.readouterr().err

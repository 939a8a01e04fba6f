"""Image–caption retrieval: hand-worked examples, brute-force cross-checks, the bootstrap's
grouping, the control's exact chance level and the error messages.

Equivalent mutants
------------------
Mutants of ``tools/mutate.py`` (mutmut names
``embdiag.interventions.caption_retrieval.x_<function>__mutmut_<k>``) that survive because
they change no result; each has a comment next to the code.

- ``category_precision`` 45, 47 (float ones for the query labels): ``True == 1.0``, so the
  boolean labels compare the same.
- ``image_positives`` 19, ``typical_image`` 10, 14, ``chance_levels`` 10, ``_shuffled_values``
  7 (``minlength`` dropped from ``np.bincount``): the group passed :func:`check_group`, so
  every image owns a caption and the counts already have ``n_images = max + 1`` entries.
- ``image_positives`` 14 (``kind="STABLE"``): numpy reads the sort kind case-insensitively.
- ``chance_levels`` 15, 32 (``_label("Hit@1", None)``): ``"Hit@1"`` has no ``@k`` to replace.
- ``evaluate`` 87 (``float("NAN")``): the same NaN.
- ``positive_ranks`` 1 (``block=1025``): the block size changes memory use only.
  ``positive_ranks`` 79 (blocks start at every row): overlapping blocks write the same ranks
  again; time only.
- ``summary_table`` 24 (``orient="INDEX"``): pandas lower-cases ``orient``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as st

from embdiag.interventions import caption_retrieval as cr
from embdiag.metrics import paired_bootstrap
from embdiag.metrics.retrieval import hit_at_k, topk

# Three images on the axes, two captions each (group 0, 0, 1, 1, 2, 2); every rank below is
# worked by hand from the cosines.
IMAGES = np.eye(3)
CAPTIONS = np.array(
    [
        [1.0, 0.1, 0.0],  # image 0 first                      -> parent rank 1
        [0.2, 1.0, 0.0],  # image 1 first, image 0 second      -> parent rank 2
        [0.0, 1.0, 0.5],  # image 1 first                      -> parent rank 1
        [0.0, 0.3, 1.0],  # image 2 first, image 1 second      -> parent rank 2
        [0.0, 0.0, 1.0],  # image 2 first                      -> parent rank 1
        [1.0, 0.6, 0.0],  # images 0, 1, then 2                -> parent rank 3
    ]
)
GROUP = np.array([0, 0, 1, 1, 2, 2])


def random_study(rng, n_images=40, per=3, d=8, noise=1.0):
    images = rng.standard_normal((n_images, d))
    group = np.repeat(np.arange(n_images), per)
    captions = images[group] + noise * rng.standard_normal((len(group), d))
    return images, captions, group


def brute_ranks(Q, G, positives_mask):
    """Rank of the best positive: sort every row by (-score, index) in full."""
    S = (Q / np.linalg.norm(Q, axis=1, keepdims=True)) @ (G / np.linalg.norm(G, axis=1, keepdims=True)).T
    out = []
    for row, mask in zip(S, positives_mask):
        order = np.lexsort((np.arange(len(row)), -row))
        out.append(1 + int(np.flatnonzero(mask[order])[0]))
    return np.array(out)


# ----------------------------------------------------------------------------- hand-worked


def test_text_to_image_by_hand():
    r = cr.text_to_image(CAPTIONS, IMAGES, GROUP, k=2)
    assert r.rank.tolist() == [1, 2, 1, 2, 1, 3]
    assert r.hit_1.tolist() == [1, 0, 1, 0, 1, 0]
    assert r.hit_k.tolist() == [1, 1, 1, 1, 1, 0]
    assert np.array_equal(r.recall_k, r.hit_k)  # one positive: recall@k is Hit@k
    assert r.neighbors[1].tolist() == [1, 0] and r.neighbors[5].tolist() == [0, 1]
    assert r.unit.tolist() == GROUP.tolist() and r.direction == cr.T2I and r.k == 2


def test_image_to_text_by_hand():
    # image 0 scores captions 0 (.995), 5 (.857), 1 (.196); image 1: 1 (.981), 2 (.894), 5 (.514);
    # image 2: 4 (1), 3 (.958), 2 (.447). Image 0 owns captions 0, 1; image 1: 2, 3; image 2: 4, 5.
    r = cr.image_to_text(IMAGES, CAPTIONS, GROUP, k=2)
    assert r.neighbors[0].tolist() == [0, 5]
    assert (r.hit_1[0], r.hit_k[0], r.recall_k[0]) == (1, 1, 0.5)
    assert r.neighbors[1].tolist() == [1, 2]  # caption 1 (image 0's) outranks image 1's own caption 2
    assert (r.hit_1[1], r.hit_k[1], r.recall_k[1], r.rank[1]) == (0, 1, 0.5, 2)
    assert r.neighbors[2].tolist() == [4, 3]  # own caption 4, then image 1's caption 3 (.958) before own 5
    assert (r.hit_1[2], r.recall_k[2], r.rank[2]) == (1, 0.5, 1)
    assert r.unit.tolist() == [0, 1, 2]


def test_image_positives_in_both_forms():
    assert cr.image_positives(GROUP, 3).tolist() == [[0, 1], [2, 3], [4, 5]]
    uneven = cr.image_positives(np.array([1, 0, 1, 2]), 3)
    assert [u.tolist() for u in uneven] == [[1], [0, 2], [3]]


def test_category_precision_by_hand():
    # images 0, 1 alike (both have category 0), images 2, 3 alike (category 1); k = 1
    X = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    C = np.array([[True, False], [True, True], [False, True], [False, False]])
    # category 0: image 0 -> neighbour 1 (has it), image 1 -> neighbour 0 (has it): 1.0
    # category 1: image 1 -> 0 (no), image 2 -> 3 (no): 0.0
    assert cr.category_precision(X, C, k=1, min_support=1, per_category=True).tolist() == [1.0, 0.0]
    assert cr.category_precision(X, C, k=1, min_support=1) == 0.5
    assert cr.category_floor(C, min_support=1) == pytest.approx(1 / 3)  # (2 - 1) / (4 - 1) for both


def test_eligible_categories_need_support_on_both_sides():
    C = np.zeros((30, 4), bool)
    C[:10, 0] = True  # 10 with, 20 without: eligible
    C[:9, 1] = True  # 9 with: not
    C[:21, 2] = True  # 21 with, 9 without: not
    C[:, 3] = True  # everywhere: not
    assert cr.eligible_categories(C, 10).tolist() == [0]
    with pytest.raises(ValueError, match="categories: no category"):
        cr.category_precision(np.random.default_rng(0).standard_normal((30, 3)), C[:, 1:], min_support=10)


# ----------------------------------------------------------------------------- brute force


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_both_directions_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    images, captions, group = random_study(rng)
    k = 5
    t = cr.text_to_image(captions, images, group, k)
    mask = group[:, None] == np.arange(len(images))[None, :]
    ranks = brute_ranks(captions, images, mask)
    assert np.array_equal(t.rank, ranks)
    assert np.array_equal(t.hit_1, (ranks == 1).astype(float))
    assert np.array_equal(t.hit_k, (ranks <= k).astype(float))
    i = cr.image_to_text(images, captions, group, k)
    assert np.array_equal(i.rank, brute_ranks(images, captions, mask.T))
    S = images @ captions.T / np.linalg.norm(images, axis=1)[:, None] / np.linalg.norm(captions, axis=1)[None]
    top = np.argsort(-S, axis=1, kind="stable")[:, :k]
    own = group[top] == np.arange(len(images))[:, None]
    assert np.allclose(i.recall_k, own.sum(axis=1) / 3)
    assert np.array_equal(i.hit_k, own.any(axis=1).astype(float))
    assert np.array_equal(i.hit_1, own[:, 0].astype(float))


def test_ranks_follow_topk_order_on_exact_ties():
    # dyadic vectors: many exactly equal scores, ordered by the lower gallery index
    rng = np.random.default_rng(3)
    images = rng.choice([-1.0, 0.0, 1.0], size=(30, 3))
    images[np.abs(images).sum(axis=1) == 0, 0] = 1.0
    group = np.repeat(np.arange(30), 2)
    captions = images[rng.permutation(group)]  # captions equal to some image: ties everywhere
    for k in (1, 3, 7):
        t = cr.text_to_image(captions, images, group, k)
        i = cr.image_to_text(images, captions, group, k)
        assert np.array_equal(t.hit_k, (t.rank <= k).astype(float))
        assert np.array_equal(i.hit_k, (i.rank <= k).astype(float))


def test_category_precision_matches_brute_force():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((60, 6))
    C = rng.random((60, 5)) < [0.5, 0.2, 0.9, 0.05, 0.3]
    k = 4
    S = X @ X.T / np.outer(np.linalg.norm(X, axis=1), np.linalg.norm(X, axis=1))
    np.fill_diagonal(S, -np.inf)
    nb = np.argsort(-S, axis=1, kind="stable")[:, :k]
    cats = cr.eligible_categories(C, 5)
    expected = [np.mean([C[nb[i], c].mean() for i in np.flatnonzero(C[:, c])]) for c in cats]
    assert np.allclose(cr.category_precision(X, C, k, min_support=5, per_category=True), expected)


def test_mrl_prefix_is_leading_coordinates_renormalized():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((10, 12))
    P = cr.mrl_prefix(X, 4)
    assert np.allclose(P, X[:, :4] / np.linalg.norm(X[:, :4], axis=1, keepdims=True))
    assert np.allclose(cr.mrl_prefix(X, 12), X / np.linalg.norm(X, axis=1, keepdims=True))


# ----------------------------------------------------------------------------- evaluate


@pytest.fixture(scope="module")
def study():
    rng = np.random.default_rng(6)
    images, captions, group = random_study(rng, n_images=60, per=5, d=16, noise=1.5)
    documents = captions + 0.1 * rng.standard_normal(captions.shape)
    categories = rng.random((60, 4)) < 0.4
    return cr.evaluate(images, captions, documents, group, categories, dims=(8, 4), k=5, min_support=5)


def test_evaluate_measures_native_first_then_prefixes(study):
    assert study.names == ["native 16", "MRL 8", "MRL 4"]
    assert [r.dim for r in study.representations] == [16, 8, 4]
    assert study.native is study["native 16"] and study.n_images == 60 and study.k == 5
    with pytest.raises(KeyError, match="MRL 2"):
        study["MRL 2"]
    t = cr.summary_table(study)
    assert list(t.columns) == [
        "T→I Hit@1",
        "T→I Hit@5",
        "I→T Hit@1",
        "I→T Hit@5",
        "I→T caption recall@5",
        "category P@5",
    ]
    assert t.loc["MRL 4", "I→T Hit@5"] == study["MRL 4"].i2t.hit_k.mean()
    assert ((t >= 0) & (t <= 1)).all().all()


def test_evaluate_without_categories_and_with_repeated_dims():
    images, captions, group = random_study(np.random.default_rng(7), n_images=20, d=6)
    res = cr.evaluate(images, captions, captions, group, dims=(6, 3, 3), k=2)
    assert res.names == ["native 6", "MRL 3"]
    assert np.isnan(res.native.category_p) and res.categories == ()


def test_overlap_is_one_when_the_prefix_keeps_every_coordinate_that_matters():
    rng = np.random.default_rng(8)
    images, captions, group = random_study(rng, n_images=30, d=4)
    pad = lambda X: np.hstack([X, np.zeros((len(X), 4))])  # noqa: E731
    res = cr.evaluate(pad(images), pad(captions), pad(captions), group, dims=(4,), k=3)
    assert (cr.overlap_table(res)["overlap"] == 1).all()
    changes = cr.bootstrap_changes(res, n_draws=50)
    assert (changes[["change", "low", "high"]] == 0).all().all()


def test_bootstrap_carries_captions_with_their_image(study):
    """The text→image intervals equal a bootstrap of per-image means with the same draws:
    a drawn image brings all five of its captions."""
    changes = cr.bootstrap_changes(study, n_draws=400, seed=3)
    row = changes[
        (changes["representation"] == "MRL 4") & (changes["direction"] == cr.T2I) & (changes["metric"] == "Hit@5")
    ].iloc[0]
    a, b = study["MRL 4"].t2i.hit_k, study.native.t2i.hit_k
    per_image = lambda v: v.reshape(60, 5).mean(axis=1)  # noqa: E731
    by_image = paired_bootstrap(per_image(a), per_image(b), n_draws=400, seed=3)
    assert (row["low"], row["high"]) == pytest.approx((by_image.low, by_image.high), abs=1e-12)
    assert row["n_queries"] == 300 and row["n_groups"] == 60
    by_caption = paired_bootstrap(a, b, n_draws=400, seed=3)  # captions as independent units: other draws
    assert by_caption.n_groups == 300


def test_bootstrap_uses_the_same_image_draws_in_both_directions(study):
    changes = cr.bootstrap_changes(study, n_draws=300, seed=1)
    assert len(changes) == 2 * len(cr.METRICS)
    # image→text rows are the per-image bootstrap with the same seed
    row = changes[
        (changes["representation"] == "MRL 8")
        & (changes["direction"] == cr.I2T)
        & (changes["metric"] == "caption recall@5")
    ].iloc[0]
    iv = paired_bootstrap(study["MRL 8"].i2t.recall_k, study.native.i2t.recall_k, n_draws=300, seed=1)
    assert (row["change"], row["low"], row["high"]) == pytest.approx((iv.mean, iv.low, iv.high))
    assert row["change"] == pytest.approx(row["compressed"] - row["native"])


# ----------------------------------------------------------------------------- control


def test_shuffle_moves_whole_groups():
    group = np.repeat(np.arange(50), 5)
    new = cr.shuffle_groups(group, seed=4)
    assert np.array_equal(np.bincount(new), np.bincount(group))
    assert all(len(set(new[group == g])) == 1 for g in range(50))  # a group stays together
    assert np.array_equal(new, cr.shuffle_groups(group, seed=4)) and not np.array_equal(new, group)


def test_chance_levels_are_exact_over_all_permutations():
    """Average every metric over all 4! permutations of four images: it equals the formula."""
    rng = np.random.default_rng(9)
    images, captions, group = random_study(rng, n_images=4, per=3, d=3, noise=2.0)
    res = cr.evaluate(images, captions, captions, group, dims=(), k=3)
    chance = cr.chance_levels(res)
    perms = np.array(list(itertools.permutations(range(4))))
    values = cr._shuffled_values(res.native, res.group, perms)
    for (direction, metric), v in values.items():
        assert v.mean() == pytest.approx(chance[direction, metric.replace("@k", "@3")], abs=1e-12)


def test_control_falls_to_chance_on_separated_vectors():
    rng = np.random.default_rng(10)
    images, captions, group = random_study(rng, n_images=200, per=5, d=32, noise=0.05)
    res = cr.evaluate(images, captions, captions, group, dims=(), k=10)
    control = cr.shuffled_control(res, seed=0, n_permutations=300).set_index(["direction", "metric"])
    assert control.loc[(cr.T2I, "Hit@10"), "real"] == 1.0
    assert control.loc[(cr.T2I, "Hit@10"), "chance"] == 10 / 200
    # own captions fill the first five places: the top ten come from 2 images at least
    assert 2 / 200 <= control.loc[(cr.I2T, "Hit@10"), "chance"] <= 10 / 200
    for _, row in control.iterrows():
        assert row["permutation low"] <= row["chance"] <= row["permutation high"]
        assert row["shuffled"] < row["real"]
        assert abs(row["shuffled"] - row["chance"]) < 0.04


def test_real_values_sit_at_chance_on_random_vectors():
    rng = np.random.default_rng(11)
    images, captions, group = random_study(rng, n_images=300, per=5, d=32, noise=1e3)  # captions ignore images
    res = cr.evaluate(images, captions, captions, group, dims=(), k=10)
    control = cr.shuffled_control(res, seed=2, n_permutations=500)
    for _, row in control.iterrows():
        assert row["permutation low"] - 0.01 <= row["real"] <= row["permutation high"] + 0.01


def test_random_hit_chance_is_hypergeometric():
    assert cr.random_hit_chance(1000, 5, 10) == pytest.approx(1 - math.comb(995, 10) / math.comb(1000, 10))
    assert cr.random_hit_chance(1000, 5, 10) == pytest.approx(0.0491, abs=1e-4)
    assert cr.random_hit_chance(5000, 5, 10) == pytest.approx(st.hypergeom.sf(0, 5000, 5, 10))
    assert cr.random_hit_chance(10, 0, 3) == 0 and cr.random_hit_chance(10, 8, 3) == 1
    with pytest.raises(ValueError, match="n_positives and k"):
        cr.random_hit_chance(10, 11, 3)


def test_typical_image_matches_the_overall_hit_rate(study):
    i = cr.typical_image(study)
    share = study.native.t2i.hit_k[study.group == i].mean()
    assert share == pytest.approx(np.round(study.native.t2i.hit_k.mean() * 5) / 5)


# ----------------------------------------------------------------------------- errors


def test_group_errors_name_the_problem():
    with pytest.raises(ValueError, match="length mismatch: captions have 6 rows, group has 5"):
        cr.text_to_image(CAPTIONS, IMAGES, GROUP[:5])
    with pytest.raises(ValueError, match=r"group: image indices must lie in \[0, 3\)"):
        cr.text_to_image(CAPTIONS, IMAGES, GROUP + 1, k=1)
    with pytest.raises(ValueError, match="group: 1 image\\(s\\) own no caption \\(first: image 2\\)"):
        cr.image_to_text(IMAGES, CAPTIONS, np.array([0, 0, 1, 1, 0, 1]), k=1)
    with pytest.raises(ValueError, match="group: expected integer image indices"):
        cr.text_to_image(CAPTIONS, IMAGES, GROUP.astype(float), k=1)
    with pytest.raises(ValueError, match="group: expected a 1-D array"):
        cr.text_to_image(CAPTIONS, IMAGES, GROUP[:, None], k=1)


def test_shape_errors_name_the_argument():
    with pytest.raises(ValueError, match="queries and documents: shapes differ"):
        cr.evaluate(IMAGES, CAPTIONS, CAPTIONS[:, :2], GROUP, k=1)
    with pytest.raises(ValueError, match="queries: have 2 columns but images have 3"):
        cr.evaluate(IMAGES, CAPTIONS[:, :2], CAPTIONS[:, :2], GROUP, k=1)
    with pytest.raises(ValueError, match="dims: each must be at most the dimension d = 3"):
        cr.evaluate(IMAGES, CAPTIONS, CAPTIONS, GROUP, dims=(4,), k=1)
    with pytest.raises(ValueError, match="length mismatch: images has 3, categories has 2"):
        cr.evaluate(IMAGES, CAPTIONS, CAPTIONS, GROUP, np.ones((2, 1), bool), dims=(), k=1)
    with pytest.raises(ValueError, match="k: must be smaller than the number of candidates \\(3\\)"):
        cr.text_to_image(CAPTIONS, IMAGES, GROUP, k=3)
    with pytest.raises(ValueError, match="categories: expected a boolean"):
        cr.eligible_categories(np.ones((3, 2)))
    with pytest.raises(ValueError, match="positives: expected one integer index per query"):
        cr.positive_ranks(CAPTIONS, IMAGES, GROUP[:4])
    with pytest.raises(ValueError, match="gallery: has 2 columns but queries have 3"):
        cr.positive_ranks(CAPTIONS, IMAGES[:, :2], GROUP)
    with pytest.raises(ValueError, match="n_permutations: must be at least 1"):
        cr.shuffled_control(cr.evaluate(IMAGES, CAPTIONS, CAPTIONS, GROUP, dims=(), k=1), n_permutations=0)


# ----------------------------------------------------------------------------- the encoder's vectors


@pytest.mark.slow
def test_reference_encoder_finds_captions_and_its_control_falls_to_chance():
    from embdiag.encoders.vectors import caption_vectors

    v = caption_vectors("reference-cnn")
    res = cr.evaluate(v.images, v.queries, v.documents, v.group, v.categories, dims=(256, 128))
    t = cr.summary_table(res)
    assert 0.5 <= t.loc["native 768", "T→I Hit@10"] < 1  # the bar for a meaningful subject
    assert t.loc["native 768", "I→T Hit@10"] > t.loc["native 768", "I→T Hit@1"]
    for r in res.representations:  # the brute-force ranks agree with the top-k search
        assert np.array_equal(r.t2i.hit_k, (r.t2i.rank <= 10).astype(float))
        assert np.array_equal(r.i2t.hit_k, (r.i2t.rank <= 10).astype(float))
    control = cr.shuffled_control(res, n_permutations=200)
    assert (abs(control["shuffled"] - control["chance"]) < 0.01).all()
    assert (control["real"] > 10 * control["chance"]).all()


@pytest.mark.parametrize("scale", [1e200, 1e-200])
def test_positive_ranks_at_extreme_finite_magnitudes(scale):
    rng = np.random.default_rng(0)
    Q, G = rng.normal(size=(30, 8)), rng.normal(size=(50, 8))
    positives = rng.integers(0, 50, size=30)
    np.testing.assert_array_equal(
        cr.positive_ranks(Q * scale, G * scale, positives), cr.positive_ranks(Q, G, positives)
    )


def test_positive_ranks_zero_row_is_named():
    Q = np.ones((3, 4))
    Q[1] = 0
    with pytest.raises(ValueError, match="queries: 1 zero-norm row"):
        cr.positive_ranks(Q, np.ones((5, 4)), np.zeros(3, int))


# ----------------------------------------------------------------------------- float64 scores


def test_rankings_keep_float64_scores_and_near_ties():
    """Scores are the float64 cosines; two images whose cosines with a caption differ by
    4e-10 (below float32 resolution, where they tie) are told apart, and hit@1 agrees
    with the brute-force rank."""
    images = np.array([[1.0, -3e-5], [1.0, 1e-5], [0.0, 1.0]])
    captions = np.array([[1.0, 0.0], [0.0, 1.0], [0.1, 1.0]])
    group = np.array([1, 2, 0])
    t = cr.text_to_image(captions, images, group, k=1)
    assert t.scores.dtype == np.float64 and t.neighbors[:, 0].tolist() == [1, 2, 2]
    assert t.rank.tolist() == [1, 1, 3] and t.hit_1.tolist() == [1, 1, 0]
    for r in (cr.text_to_image(captions, images, group, k=2), cr.image_to_text(images, captions, group, k=2)):
        Q, G = (captions, images) if r.direction == cr.T2I else (images, captions)
        S = (Q / np.linalg.norm(Q, axis=1)[:, None]) @ (G / np.linalg.norm(G, axis=1)[:, None]).T
        assert r.scores.dtype == np.float64
        assert np.allclose(r.scores, np.take_along_axis(S, r.neighbors, axis=1), rtol=0, atol=1e-15)
        assert np.allclose(r.scores, -np.sort(-S, axis=1)[:, :2], rtol=0, atol=1e-15)
    assert cr.image_to_text(images, captions, group, k=1).direction == cr.I2T


def test_category_precision_tells_near_ties_apart():
    # image 0's nearest other image is 2 (cosine 1 - 5e-11), not 1 (1 - 4.5e-10): float32 ties them
    X = np.array([[1.0, 0.0], [1.0, -3e-5], [1.0, 1e-5], [0.0, 1.0]])
    C = np.array([[True], [False], [True], [False]])
    assert cr.category_precision(X, C, k=1, min_support=1, per_category=True).tolist() == [1.0]


def test_positive_ranks_score_float32_and_integer_input_in_float64():
    # [16777000, 16777001] normalized in float32 has two equal coordinates; in float64 the
    # second is larger, so the positive (gallery row 0) ranks second
    near = np.array([[16777000, 16777001]])
    axes = np.eye(2)
    for Q in (near, near.astype(np.float32)):
        assert cr.positive_ranks(Q, axes.astype(np.float32), np.array([0])).tolist() == [2]
        assert cr.positive_ranks(axes[[0]], Q[:, ::-1].copy(), np.array([0])).tolist() == [1]
    gallery = np.vstack([near, near[:, ::-1]]).astype(np.float32)  # row 1 is the closer to axis 0
    assert cr.positive_ranks(axes[[0]], gallery, np.array([0])).tolist() == [2]
    assert cr.positive_ranks(axes[[0]], gallery.astype(np.int64), np.array([0])).tolist() == [2]


def test_positive_ranks_in_small_blocks_match_brute_force():
    rng = np.random.default_rng(12)
    Q, G = rng.standard_normal((11, 4)), rng.standard_normal((9, 4))
    mask = rng.random((11, 9)) < 0.3
    mask[np.arange(11), rng.integers(0, 9, 11)] = True
    expected = brute_ranks(Q, G, mask)
    for block in (1, 3, 4, 1024):
        ranks = cr.positive_ranks(Q, G, mask, block=block)
        assert ranks.dtype == np.int64 and np.array_equal(ranks, expected)
    assert np.array_equal(cr.positive_ranks(Q, G, mask), expected)


def test_positive_ranks_errors():
    Q, G = np.ones((3, 2)), np.eye(5, 2) + 0.5
    mask = np.ones((3, 5), bool)
    mask[1] = False
    with pytest.raises(ValueError, match=r"^positives: the mask must be \(3, 5\) with a positive in every row$"):
        cr.positive_ranks(Q, G, mask)
    with pytest.raises(ValueError, match=r"^positives: the mask must be \(3, 5\)"):
        cr.positive_ranks(Q, G, np.ones((3, 4), bool))
    G[2] = 0
    with pytest.raises(ValueError, match=r"^gallery: 1 zero-norm row\(s\) \(first at index 2\)"):
        cr.positive_ranks(Q, G, np.zeros(3, int))
    with pytest.raises(ValueError, match=r"^queries: expected a 2-D array"):
        cr.positive_ranks(np.ones(2), G, np.zeros(1, int))
    with pytest.raises(ValueError, match=r"^gallery: expected a 2-D array"):
        cr.positive_ranks(Q, np.ones(2), np.zeros(3, int))


def test_image_positives_of_one_image_and_in_caption_order():
    assert cr.image_positives(np.zeros(3, int), 1).tolist() == [[0, 1, 2]]
    group = np.random.default_rng(13).permutation(np.repeat(np.arange(40), 50))
    rows = cr.image_positives(group, 40)
    assert all(np.array_equal(rows[i], np.flatnonzero(group == i)) for i in range(40))


# ----------------------------------------------------------------------------- arguments


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: cr.text_to_image(np.ones(3), IMAGES, GROUP), "queries: expected a 2-D array"),
        (lambda: cr.text_to_image(CAPTIONS, np.ones(3), GROUP), "images: expected a 2-D array"),
        (lambda: cr.image_to_text(np.ones(3), CAPTIONS, GROUP), "images: expected a 2-D array"),
        (lambda: cr.image_to_text(IMAGES, np.ones(3), GROUP), "documents: expected a 2-D array"),
        (lambda: cr.evaluate(np.ones(3), CAPTIONS, CAPTIONS, GROUP), "images: expected a 2-D array"),
        (lambda: cr.evaluate(IMAGES, np.ones(3), CAPTIONS, GROUP), "queries: expected a 2-D array"),
        (lambda: cr.evaluate(IMAGES, CAPTIONS, np.ones(3), GROUP), "documents: expected a 2-D array"),
        (lambda: cr.evaluate(IMAGES, CAPTIONS, CAPTIONS, GROUP, dims=(0,), k=1), "dims: must be at least 1, got 0"),
        (lambda: cr.evaluate(IMAGES, CAPTIONS, CAPTIONS, GROUP, dims=(1.5,), k=1), "dims: expected an integer"),
        (lambda: cr.mrl_prefix(np.ones(3), 2), "vectors: expected a 2-D array"),
        (lambda: cr.category_precision(np.ones(4), np.eye(4, dtype=bool)), "images: expected a 2-D array"),
        (
            lambda: cr.category_precision(np.eye(4), np.eye(3, dtype=bool), min_support=1),
            r"length mismatch: images has 4, categories has 3",
        ),
        (lambda: cr.eligible_categories(np.eye(4, dtype=bool), 0), "min_support: must be at least 1, got 0"),
        (lambda: cr.eligible_categories(np.eye(4, dtype=bool), 1.0), "min_support: expected an integer"),
        (lambda: cr.shuffle_groups(GROUP, seed=-1), "seed: must be at least 0, got -1"),
        (lambda: cr.shuffle_groups(GROUP, seed=0.5), "seed: expected an integer"),
        (lambda: cr.random_hit_chance(0, 0, 0), "n_gallery: must be at least 1, got 0"),
        (lambda: cr.random_hit_chance(2.0, 0, 0), "n_gallery: expected an integer"),
        (lambda: cr.random_hit_chance(10, -1, 3), "n_positives: must be at least 0, got -1"),
        (lambda: cr.random_hit_chance(10, 1.0, 3), "n_positives: expected an integer"),
        (lambda: cr.random_hit_chance(10, 1, -1), "k: must be at least 0, got -1"),
        (lambda: cr.random_hit_chance(10, 1, 3.0), "k: expected an integer"),
        (lambda: cr.random_hit_chance(10, 1, 11), r"n_positives and k: must not exceed n_gallery = 10, got 1 and 11"),
    ],
)
def test_argument_errors_name_the_argument(call, message):
    with pytest.raises(ValueError, match="^" + message):
        call()


def test_shuffled_control_checks_its_seed():
    res = cr.evaluate(IMAGES, CAPTIONS, CAPTIONS, GROUP, dims=(), k=1)
    with pytest.raises(ValueError, match=r"^seed: must be at least 0, got -1"):
        cr.shuffled_control(res, seed=-1)
    with pytest.raises(ValueError, match=r"^seed: expected an integer"):
        cr.shuffled_control(res, seed=1.0)


def test_random_hit_chance_at_the_bounds():
    assert cr.random_hit_chance(1, 1, 1) == 1 and cr.random_hit_chance(1, 0, 0) == 0
    assert cr.random_hit_chance(10, 3, 0) == 0  # no draw: no hit
    assert cr.random_hit_chance(10, 10, 3) == 1 and cr.random_hit_chance(10, 2, 10) == 1
    assert cr.random_hit_chance(10, 2, 9) == 1 and cr.random_hit_chance(10, 9, 1) == pytest.approx(0.9)


def test_evaluate_accepts_a_one_coordinate_prefix():
    images, captions, group = random_study(np.random.default_rng(14), n_images=6, per=2, d=3)
    assert cr.evaluate(images, captions, captions, group, dims=(1,), k=1).names == ["native 3", "MRL 1"]


# ----------------------------------------------------------------------------- defaults and categories


@pytest.fixture(scope="module")
def categorized():
    """24 images, two captions each; category 0 in 10 images, 1 in 14 (10 without), 2 in 5."""
    rng = np.random.default_rng(15)
    images, captions, group = random_study(rng, n_images=24, per=2, d=6, noise=0.8)
    C = np.zeros((24, 3), bool)
    C[rng.permutation(24)[:10], 0] = True
    C[rng.permutation(24)[:14], 1] = True
    C[rng.permutation(24)[:5], 2] = True
    return images, captions, group, C


def test_defaults_are_the_documented_ones(categorized):
    images, captions, group, C = categorized
    assert cr.eligible_categories(C).tolist() == [0, 1]  # both need 10 with and 10 without
    assert cr.eligible_categories(C, 5).tolist() == [0, 1, 2]
    assert cr.category_floor(C) == pytest.approx((9 / 23 + 13 / 23) / 2)
    assert cr.category_precision(images, C) == cr.category_precision(images, C, 10, 10)
    assert cr.category_precision(images, C) != cr.category_precision(images, C, 11, 10)
    assert cr.text_to_image(captions, images, group).k == 10
    assert cr.image_to_text(images, captions, group).k == 10
    res = cr.evaluate(images, captions, captions, group, C, dims=(3,))
    assert res.k == 10 and res.categories == (0, 1)
    assert res.native.category_p == cr.category_precision(cr.mrl_prefix(images, 6), C, 10, 10)
    assert np.array_equal(cr.shuffle_groups(group), cr.shuffle_groups(group, 0))
    assert not np.array_equal(cr.shuffle_groups(group), cr.shuffle_groups(group, 1))
    pd_equal = lambda a, b: a.equals(b)  # noqa: E731
    assert pd_equal(cr.shuffled_control(res), cr.shuffled_control(res, seed=0, n_permutations=1000))
    assert pd_equal(cr.bootstrap_changes(res), cr.bootstrap_changes(res, n_draws=5000, seed=0, level=0.95))
    row = cr.bootstrap_changes(res).iloc[-1]  # MRL 3, image→text caption recall@10
    iv = paired_bootstrap(res["MRL 3"].i2t.recall_k, res.native.i2t.recall_k, groups=np.arange(24))
    assert (row["low"], row["high"]) == (iv.low, iv.high)


def test_category_support_floor_on_both_sides():
    C = np.zeros((30, 2), bool)
    C[:20, 0] = True  # 20 with, exactly 10 without: eligible
    C[:19, 1] = True
    C[28:, 1] = True  # 21 with, 9 without: not
    assert cr.eligible_categories(C, 10).tolist() == [0]


def test_category_floor_counts_eligible_categories_only(categorized):
    C = categorized[3]
    assert cr.category_floor(C, 10) == pytest.approx((9 / 23 + 13 / 23) / 2)
    assert cr.category_floor(C, 5) == pytest.approx((9 / 23 + 13 / 23 + 4 / 23) / 3)


def test_evaluate_passes_k_and_min_support_to_the_categories(categorized):
    images, captions, group, C = categorized
    res = cr.evaluate(images, captions, captions, group, C, dims=(3,), k=3, min_support=5)
    assert res.categories == (0, 1, 2)
    for r in res.representations:
        assert r.category_p == cr.category_precision(cr.mrl_prefix(images, r.dim), C, 3, 5)
    assert res["MRL 3"].category_p != cr.category_precision(cr.mrl_prefix(images, 3), C, 5, 10)
    assert res["MRL 3"].category_p != cr.category_precision(cr.mrl_prefix(images, 3), C, 3, 10)


# ----------------------------------------------------------------------------- tables


def test_overlap_table_lists_every_compressed_representation(study):
    t = cr.overlap_table(study)
    assert list(t.columns) == ["representation", "direction", "overlap"]
    assert t[["representation", "direction"]].values.tolist() == [
        ["MRL 8", cr.T2I],
        ["MRL 8", cr.I2T],
        ["MRL 4", cr.T2I],
        ["MRL 4", cr.I2T],
    ]
    for (name, direction), value in zip(t[["representation", "direction"]].values, t["overlap"]):
        a, b = study[name].ranking(direction).neighbors, study.native.ranking(direction).neighbors
        assert value == pytest.approx(np.mean([len(set(x) & set(y)) / 5 for x, y in zip(a, b)]))
    assert (t["overlap"] < 1).all()
    native_only = cr.evaluate(IMAGES, CAPTIONS, CAPTIONS, GROUP, dims=(), k=1)
    empty = cr.overlap_table(native_only)
    assert empty.empty and list(empty.columns) == ["representation", "direction", "overlap"]


def test_summary_table_is_indexed_by_representation(study):
    t = cr.summary_table(study)
    assert t.index.name == "representation" and t.index.tolist() == study.names


def _fake_result(hit_k, group):
    """A measured study reduced to what :func:`typical_image` reads."""
    hit_k = np.asarray(hit_k, float)
    r = cr.Ranking(
        cr.T2I,
        np.zeros((len(hit_k), 1), int),
        np.zeros((len(hit_k), 1)),
        hit_k,
        hit_k,
        hit_k,
        np.ones(len(hit_k), int),
        group,
    )
    return cr.CaptionRetrieval((cr.Representation("native 2", 2, r, r, float("nan")),), np.asarray(group), 1, ())


def test_typical_image_by_hand():
    # shares 5/5, 0/5, 3/5, 3/5: mean 11/20 rounds to 3/5; images 2 and 3 have it, the lower wins
    group = np.repeat(np.arange(4), 5)
    hits = np.r_[np.ones(5), np.zeros(5), [1, 1, 1, 0, 0], [0, 1, 1, 0, 1]]
    assert cr.typical_image(_fake_result(hits, group)) == 2
    # shares 0, 1, 1, 1: mean 3/4 rounds to 4/5, which no image has; the closest are 1, 2, 3
    hits = np.r_[np.zeros(5), np.ones(15)]
    assert cr.typical_image(_fake_result(hits, group)) == 1


def test_typical_image_tie_break_stays_negligible_for_many_images():
    # 60,000 images of one caption; the first 20,000 miss, so the exact share (1) starts at 20,000
    hits = np.r_[np.zeros(20_000), np.ones(40_000)]
    assert cr.typical_image(_fake_result(hits, np.arange(60_000))) == 20_000


# ----------------------------------------------------------------------------- control, per representation


def _shuffled_reference(rep, group, new):
    """Each metric after caption j moves to image ``new[j]``, straight from the definitions."""
    n = len(rep.i2t.neighbors)
    t, i = rep.t2i.neighbors, rep.i2t.neighbors
    own = new[i] == np.arange(n)[:, None]
    return {
        (cr.T2I, "Hit@1"): np.mean(t[:, 0] == new),
        (cr.T2I, "Hit@k"): np.mean((t == new[:, None]).any(axis=1)),
        (cr.I2T, "Hit@1"): own[:, 0].mean(),
        (cr.I2T, "Hit@k"): own.any(axis=1).mean(),
        (cr.I2T, "caption recall@k"): np.mean(own.sum(axis=1) / np.bincount(new, minlength=n)),
    }


def test_shuffled_control_of_a_compressed_representation(study):
    rep = study["MRL 4"]
    control = cr.shuffled_control(study, seed=3, n_permutations=40, representation="MRL 4")
    shuffled = _shuffled_reference(rep, study.group, cr.shuffle_groups(study.group, 3))
    rng = np.random.default_rng([3, 1])
    many = [_shuffled_reference(rep, study.group, rng.permutation(60)[study.group]) for _ in range(40)]
    chance = cr.chance_levels(study, "MRL 4")
    native_chance = cr.chance_levels(study)
    assert chance[cr.I2T, "Hit@5"] != native_chance[cr.I2T, "Hit@5"]
    distinct = np.mean([len(set(study.group[row])) for row in rep.i2t.neighbors])
    assert chance[cr.I2T, "Hit@5"] == pytest.approx(distinct / 60)
    assert chance[cr.T2I, "Hit@1"] == chance[cr.I2T, "Hit@1"] == 1 / 60 and chance[cr.T2I, "Hit@5"] == 5 / 60
    assert chance[cr.I2T, "caption recall@5"] == pytest.approx(5 / (5 * 60))
    for (direction, metric, attr), (_, row) in zip(cr.METRICS, control.iterrows()):
        key = (direction, metric)
        assert row["metric"] == metric.replace("@k", "@5") and row["direction"] == direction
        assert row["real"] == rep.ranking(direction).mean(attr)
        assert row["shuffled"] == pytest.approx(shuffled[key])
        assert row["chance"] == chance[direction, row["metric"]]
        lo, hi = np.quantile([m[key] for m in many], [0.025, 0.975])
        assert (row["permutation low"], row["permutation high"]) == pytest.approx((lo, hi))


def test_bootstrap_changes_defaults_and_level_on_continuous_values():
    """Per-query values that are not 0/1 give distinct quantiles for every draw count, so the
    default 5,000 draws, seed 0 and the level all show in the interval."""
    rng = np.random.default_rng(16)
    group = np.repeat(np.arange(30), 2)

    def ranking(direction, n):
        v = rng.random(n)
        return cr.Ranking(
            direction,
            np.zeros((n, 1), int),
            np.zeros((n, 1)),
            v,
            v**2,
            np.sqrt(v),
            np.ones(n, int),
            group if direction == cr.T2I else np.arange(30),
        )

    reps = tuple(
        cr.Representation(name, 2, ranking(cr.T2I, 60), ranking(cr.I2T, 30), float("nan"))
        for name in ("native 2", "MRL 1")
    )
    res = cr.CaptionRetrieval(reps, group, 1, ())
    for kwargs, expected in (
        ({}, {}),
        ({"level": 0.5, "n_draws": 200, "seed": 4}, {"level": 0.5, "n_draws": 200, "seed": 4}),
    ):
        table = cr.bootstrap_changes(res, **kwargs)
        for (direction, metric, attr), (_, row) in zip(cr.METRICS, table.iterrows()):
            a, b = res["MRL 1"].ranking(direction), res.native.ranking(direction)
            iv = paired_bootstrap(getattr(a, attr), getattr(b, attr), groups=a.unit, **expected)
            assert (row["change"], row["low"], row["high"]) == (iv.mean, iv.low, iv.high)
            assert row["metric"] == metric.replace("@k", "@1") and row["n_groups"] == 30
    other = cr.bootstrap_changes(res, n_draws=5001)
    assert (other["low"] != cr.bootstrap_changes(res)["low"]).all()


def test_shuffled_control_default_permutations():
    """Groups of 1 to 7 captions give caption recall@k many distinct values, so the 95% range
    over the default 1,000 permutations differs from that over 1,001."""
    rng = np.random.default_rng(17)
    group = rng.permutation(np.r_[np.arange(200), rng.integers(0, 200, 600)])
    n_captions = len(group)

    def ranking(direction, n_queries, n_gallery):
        nb = np.array([rng.choice(n_gallery, 10, replace=False) for _ in range(n_queries)])
        zeros = np.zeros(n_queries)
        return cr.Ranking(
            direction,
            nb,
            np.zeros((n_queries, 10)),
            zeros,
            zeros,
            zeros,
            np.ones(n_queries, int),
            group if direction == cr.T2I else np.arange(200),
        )

    rep = cr.Representation(
        "native 2", 2, ranking(cr.T2I, n_captions, 200), ranking(cr.I2T, 200, n_captions), float("nan")
    )
    res = cr.CaptionRetrieval((rep,), group, 10, ())
    default = cr.shuffled_control(res)
    assert default.equals(cr.shuffled_control(res, seed=0, n_permutations=1000))
    more = cr.shuffled_control(res, seed=0, n_permutations=1001)
    recall = default["metric"] == "caption recall@10"
    assert (
        default.loc[recall, ["permutation low", "permutation high"]].values
        != more.loc[recall, ["permutation low", "permutation high"]].values
    ).any()


def _tied_everywhere(seed: int = 2, d: int = 64, n: int = 300):
    """Gallery rows that are permutations of one vector, and constant queries: every score of a
    constant query ties mathematically, so its rank is decided by how the scores round."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=d)
    G = np.vstack([base[rng.permutation(d)] for _ in range(n)])
    Q = np.vstack([np.ones((20, d)), rng.normal(size=(20, d))])
    return Q, G, rng.integers(0, n, len(Q))


def test_positive_ranks_do_not_depend_on_the_queries_sharing_a_block():
    # Issue #30: a query alone in its block (a 1-row product) rounded differently, so at exact
    # ties its rank changed with how many queries shared its 1,024-row block.
    Q, G, pos = _tied_everywhere()
    together = cr.positive_ranks(Q, G, pos)
    alone = [cr.positive_ranks(Q[i : i + 1], G, pos[i : i + 1])[0] for i in range(len(Q))]
    assert together.tolist() == alone
    for block in (1, 3, 7, 40, 1025):
        assert cr.positive_ranks(Q, G, pos, block=block).tolist() == together.tolist()


def test_positive_ranks_agree_with_the_search_whose_hits_are_counted():
    Q, G, pos = _tied_everywhere(seed=3)
    for k in (1, 5, 10, 50):
        _, nb = topk(Q, G, k, dtype=np.float64)
        ranks = cr.positive_ranks(Q, G, pos, neighbors=nb)
        hits = hit_at_k(nb, [np.array([p]) for p in pos], per_query=True)
        assert ((ranks <= k) == hits.astype(bool)).all()
        listed = [list(row).index(p) + 1 for row, p in zip(nb, pos) if p in row]
        assert sorted(listed) == sorted(ranks[ranks <= k].tolist())  # its place in the search's list
    ranking = cr.text_to_image(Q, G[: len(Q)], group=np.arange(len(Q)), k=10)
    assert ((ranking.rank <= 10) == ranking.hit_k.astype(bool)).all()


def test_positive_ranks_neighbors_are_checked():
    Q, G, pos = _tied_everywhere()
    with pytest.raises(ValueError, match=r"neighbors: expected \(40, k\) gallery indices in \[0, 300\)"):
        cr.positive_ranks(Q, G, pos, neighbors=np.full((40, 3), 300))
    with pytest.raises(ValueError, match="neighbors: "):
        cr.positive_ranks(Q, G, pos, neighbors=np.zeros(40, int))

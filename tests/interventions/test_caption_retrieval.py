"""Image–caption retrieval: hand-worked examples, brute-force cross-checks, the bootstrap's
grouping, the control's exact chance level and the error messages."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as st

from embdiag.interventions import caption_retrieval as cr
from embdiag.metrics import paired_bootstrap

# Three images on the axes, two captions each (group 0, 0, 1, 1, 2, 2); every rank below is
# worked by hand from the cosines.
IMAGES = np.eye(3)
CAPTIONS = np.array([
    [1.0, 0.1, 0.0],  # image 0 first                      -> parent rank 1
    [0.2, 1.0, 0.0],  # image 1 first, image 0 second      -> parent rank 2
    [0.0, 1.0, 0.5],  # image 1 first                      -> parent rank 1
    [0.0, 0.3, 1.0],  # image 2 first, image 1 second      -> parent rank 2
    [0.0, 0.0, 1.0],  # image 2 first                      -> parent rank 1
    [1.0, 0.6, 0.0],  # images 0, 1, then 2                -> parent rank 3
])
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
    assert list(t.columns) == ["T→I Hit@1", "T→I Hit@5", "I→T Hit@1", "I→T Hit@5", "I→T caption recall@5",
                               "category P@5"]
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
    row = changes[(changes["representation"] == "MRL 4") & (changes["direction"] == cr.T2I)
                  & (changes["metric"] == "Hit@5")].iloc[0]
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
    row = changes[(changes["representation"] == "MRL 8") & (changes["direction"] == cr.I2T)
                  & (changes["metric"] == "caption recall@5")].iloc[0]
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
    assert (t.loc["native 768", "I→T Hit@10"] > t.loc["native 768", "I→T Hit@1"])
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
    np.testing.assert_array_equal(cr.positive_ranks(Q * scale, G * scale, positives),
                                  cr.positive_ranks(Q, G, positives))


def test_positive_ranks_zero_row_is_named():
    Q = np.ones((3, 4))
    Q[1] = 0
    with pytest.raises(ValueError, match="queries: 1 zero-norm row"):
        cr.positive_ranks(Q, np.ones((5, 4)), np.zeros(3, int))

"""SMURF's pure functions: preprocessing, tokenizer, SPARCS, information flow, fusion, the system report."""

import math

import numpy as np
import pytest
import torch

from capeval.scoring.smurf import (
    OUTLIER_THRESHOLD,
    STANDARDIZATION,
    concepts,
    fuse,
    information_flow,
    median_over_layers,
    sparcs,
    sparcs_from_concepts,
    standardize,
    typicality,
)
from capeval.reports.smurf import (
    confidence_ellipse,
    convex_intersection_area,
    load_golden,
    polygon_area,
    summarize_systems,
)
from capeval.text import tokenize
from capeval.text.tokenize import TOKENIZER_CANARY, TOKENIZER_CANARY_TOKENS, check_word_tokenizer, smurf_preprocess, word_tokenize


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("A man with a red helmet on a small moped on a dirt road. ", "a man with a red helmet on a small moped on a dirt road"),
        ("Two dogs  play .", "two dogs  play"),  # runs of spaces survive
        ("  leading space, comma.kept", "  leading space, commakept"),
        ("...", ""),
    ],
)
def test_preprocess(raw, expected):
    assert smurf_preprocess(raw) == expected


def test_tokenizer_canary_is_the_nltk_3_9_behaviour():
    from nltk.tokenize import word_tokenize as nltk_word_tokenize

    assert nltk_word_tokenize(TOKENIZER_CANARY, preserve_line=True) == TOKENIZER_CANARY_TOKENS
    assert word_tokenize(TOKENIZER_CANARY) == TOKENIZER_CANARY_TOKENS
    check_word_tokenizer()


def test_tokenizer_canary_raises_on_the_nltk_3_10_behaviour(monkeypatch):
    import nltk.tokenize

    monkeypatch.setattr(nltk.tokenize, "word_tokenize", lambda text, preserve_line=False: ["a", "man", "'", "walk", "'", "on"])
    tokenize.check_word_tokenizer.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="nltk>=3.6.2,<3.10"):
            tokenize.check_word_tokenizer()
    finally:
        tokenize.check_word_tokenizer.cache_clear()


@pytest.mark.parametrize(
    "text",
    ["a man cannot stop", "gonna wanna gotta", "a dog's ball", "mr smith (left) and a cat!", "a \"quoted\" word",
     "tabs\tand\nnewlines", "emoji 🙂 and café", "cost $3,50 at 10:30", "well-known -- dash"],
)
def test_word_tokenize_equals_nltk(text):
    from nltk.tokenize import word_tokenize as nltk_word_tokenize

    assert word_tokenize(text) == nltk_word_tokenize(text, preserve_line=True)


def test_concepts_drop_stop_words_before_stemming_and_any_punctuation():
    # "doing" is a stop word (dropped raw); "does" is too; "cloud-wreathed" and "n't" carry punctuation.
    assert concepts("the dogs are doing tricks, don't they? cloud-wreathed hills") == ["dog", "trick", "hill"]


def test_typicality_counts_empty_references_in_the_denominator():
    assert typicality([["dog"], [], ["dog", "dog", "cat"], []]) == {"dog": 0.5, "cat": 0.25}


def test_sparcs_edge_cases():
    refs = ["a dog runs", "a dog sleeps"]
    assert sparcs("", refs) == 0.0  # empty candidate
    assert sparcs(" ", refs) == 0.0  # scored, but no concepts
    assert sparcs("a cat", refs) == 0.0  # no match
    assert sparcs("a dog", ["", "", ""]) == 0.0  # references without concepts: no division by zero
    assert sparcs("a dog runs", ["a dog runs"]) == 1.0
    # unseen candidate concepts cost 1 each in the precision denominator
    p, r = 1.0 / (1.0 + 1.0), 1.0 / 1.5
    assert sparcs_from_concepts(["dog", "bone"], {"dog": 1.0, "run": 0.5}) == pytest.approx(2 * p * r / (p + r))


def test_information_flow_sanity():
    n = 7
    uniform = torch.full((6, 12, n, n), 1.0 / n)
    identity = torch.eye(n).expand(6, 12, n, n)
    assert information_flow(uniform).item() == pytest.approx(0.0, abs=1e-12)
    assert information_flow(identity).item() == pytest.approx(1.0, abs=1e-12)


def test_information_flow_equals_a_loop_over_layers_and_heads():
    torch.manual_seed(0)
    n, layers, heads = 6, 6, 4
    attentions = torch.softmax(torch.randn(layers, heads, n, n), dim=-1)
    attentions[..., 2] = 0  # a masked key column
    attentions = attentions / attentions.sum(-1, keepdim=True)

    def entropy(p):
        p = p[p > 0]
        return float(-(p * np.log2(p)).sum())

    maxima = []
    for layer in attentions.double().numpy():
        values = []
        for a in layer:
            joint = a / a.sum()
            hx, hy = entropy(joint.sum(1)), entropy(joint.sum(0))
            values.append(2 * (hx + hy - entropy(joint.ravel())) / (hx + hy))
        maxima.append(max(values))
    assert information_flow(attentions).item() == pytest.approx(float(np.quantile(maxima, 0.5)), abs=1e-12)
    batched = information_flow(torch.stack([attentions, torch.eye(n).expand(layers, heads, n, n)]))
    assert batched.shape == (2,) and batched[0].item() == pytest.approx(information_flow(attentions).item(), abs=1e-15)


def test_median_is_the_interpolated_quantile():
    assert median_over_layers(torch.tensor([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], dtype=torch.float64)).item() == pytest.approx(0.35, abs=1e-15)
    assert median_over_layers(torch.tensor([0.6, 0.1, 0.4, 0.3], dtype=torch.float64)).item() == pytest.approx(0.35, abs=1e-15)
    assert median_over_layers(torch.tensor([0.5, 0.1, 0.9], dtype=torch.float64)).item() == 0.5


def test_fusion_edge_cases():
    exact = fuse([0.0], [0.5], [0.3])  # S' = −2.3328 < T: (S' + G) / 2
    assert exact["sparcs_standardized"][0] == pytest.approx(-2.3328, abs=1e-4)
    assert exact["smurf"][0] == pytest.approx((exact["sparcs_standardized"][0] + exact["grammar_penalty"][0]) / 2)
    assert fuse([0.5], [0.5], [STANDARDIZATION["mima"][0]])["grammar_penalty"][0] == 0.0  # MIMA = μ_M: G = 0
    with pytest.raises(ValueError, match="fusion must be one of"):
        fuse([0.5], [0.5], [0.5], fusion="sum")


def test_fusion_branch_at_exactly_t(monkeypatch):
    """S' exactly T takes the 3-term mean (the released mask sets [1, 1, 1] for S' >= T last)."""
    import capeval.scoring.smurf as smurf

    monkeypatch.setitem(smurf.STANDARDIZATION, "sparcs", (0.0, 1.0))
    parts = smurf.fuse([OUTLIER_THRESHOLD], [0.7], [0.3])
    s, r, g = OUTLIER_THRESHOLD, parts["style_reward"][0], parts["grammar_penalty"][0]
    assert parts["sparcs_standardized"][0] == OUTLIER_THRESHOLD and r > 0
    assert parts["smurf"][0] == (s + r + g) / 3


def test_standardize_uses_the_six_decimal_constants():
    assert standardize([0.400853, 0.572685], "sparcs").tolist() == pytest.approx([0.0, 1.0])


def test_ellipse_and_overlap_geometry():
    rng = np.random.default_rng(0)
    x = rng.normal(size=4000)
    y = 0.6 * x + 0.8 * rng.normal(size=4000)
    ellipse = confidence_ellipse(x, y, n_std=1.15)
    cov = np.cov(x, y)
    expected_area = math.pi * 1.15**2 * math.sqrt(np.linalg.det(cov))
    assert polygon_area(ellipse) == pytest.approx(expected_area, rel=1e-3)
    # Mahalanobis radius of every vertex is 1.15
    offsets = ellipse - [x.mean(), y.mean()]
    radii = np.sqrt(np.einsum("ij,jk,ik->i", offsets, np.linalg.inv(cov), offsets))
    np.testing.assert_allclose(radii, 1.15, rtol=1e-9)
    shifted = ellipse + [0.7, -0.2]
    # Monte Carlo check of the intersection area
    points = rng.uniform(ellipse.min(0) - 1, ellipse.max(0) + 1, size=(200_000, 2))
    from matplotlib.path import Path

    inside = Path(ellipse).contains_points(points) & Path(shifted).contains_points(points)
    box = np.prod(ellipse.max(0) - ellipse.min(0) + 2)
    assert convex_intersection_area(ellipse, shifted) == pytest.approx(inside.mean() * box, rel=0.02)
    assert convex_intersection_area(ellipse, ellipse) == pytest.approx(polygon_area(ellipse), rel=1e-9)


def test_golden_system_summaries():
    golden = load_golden()
    summaries = summarize_systems(golden.SPARCS, golden.SPURTS, golden.MIMA, 4, labels=["human", "a", "b", "c"])
    assert [s.label for s in summaries] == ["human", "a", "b", "c"]
    human = summaries[0]
    # The standardization constants were estimated on these human captions (ddof 0, 6 decimals).
    assert abs(human.sparcs_mean) < 1e-5 and abs(human.spurts_mean) < 1e-5 and human.overlap == 1.0
    assert [round(s.grammar_penalty, 3) for s in summaries] == [-44.925, -7.467, -7.561, -4.465]
    assert all(0.0 < s.overlap < 1.0 for s in summaries[1:])
    assert [s.captions for s in summaries] == [5000] * 4
    with pytest.raises(ValueError, match="multiple of n_systems"):
        summarize_systems(golden.SPARCS[:10], golden.SPURTS[:10], golden.MIMA[:10], 4)

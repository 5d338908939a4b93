"""Corpus values without Ray: BLEU-1..4 pinned per caption and for the corpus, and summarize over scored blocks (as
score_batch returns them) giving the single-process corpus values, BLEU's from summed n-gram counts, not a mean."""

import pyarrow as pa
import pytest

from capeval.distributed import STATISTICS_COLUMN, make_scorer, score_batch, summarize

PREDICTIONS = ["A dog runs on the grass.", "two men ride horses in an arena", "a cat"]
REFERENCES = [["a dog running on grass", "The dog runs on the green grass."],
              ["two men riding horses", "men on horses in a rodeo arena", "riders in an arena"],
              ["a cat sleeps on a sofa", "a small cat"]]
CORPUS = {"bleu_1": 0.933333, "bleu_2": 0.83666, "bleu_3": 0.615638, "bleu_4": 0.427287}


@pytest.mark.parametrize("order, per_caption", [(1, [1.0, 0.857143, 0.606531]), (2, [0.894427, 0.755929, 0.606531]),
                                                (3, [0.736806, 0.485286, 0.006065]), (4, [0.604275, 7.3e-05, 0.000607])])
def test_bleu_of_each_order(order, per_caption):
    """Pinned (caption 3: both words match, the brevity penalty exp(1 − 3/2) of its closest reference)."""
    scores = make_scorer("bleu", order=order).score(PREDICTIONS, REFERENCES)
    assert scores["bleu"] == pytest.approx(per_caption, abs=1e-6)
    assert scores.corpus == pytest.approx({"bleu": CORPUS[f"bleu_{order}"], **CORPUS}, abs=1e-6)


@pytest.mark.parametrize("metric", ["bleu", "rouge", "cider"])
def test_summarize_over_blocks_gives_the_single_process_corpus_values(metric):
    scorer = make_scorer(metric)
    rows = pa.table({"system": ["A", "B", "A"], "candidate": PREDICTIONS, "references": REFERENCES})
    whole = scorer.score(PREDICTIONS, REFERENCES)
    # CIDEr-D's document frequencies must be the whole call's, as the distributed first pass gives them.
    scorer = (scorer.with_document_frequencies(scorer.count_document_frequencies(PREDICTIONS, REFERENCES))
              if scorer.corpus_dependent else scorer)
    blocks = [score_batch(scorer, rows.slice(0, 1)), score_batch(scorer, rows.slice(1, 2))]
    assert (STATISTICS_COLUMN in blocks[0].column_names) == (metric == "bleu")
    summary = summarize(blocks, metric)
    column = scorer.primary
    assert (summary["rows"], summary["failed"]) == (3, 0)
    assert summary["corpus"] == pytest.approx(whole.corpus, abs=1e-12)
    assert summary["means"][column] == pytest.approx(sum(whole[column]) / 3, abs=1e-12)
    assert (summary["corpus"][column] == pytest.approx(summary["means"][column], abs=1e-6)) == (metric != "bleu")
    per_system = summarize(blocks, metric, by="system")
    assert {key: value["rows"] for key, value in per_system.items()} == {"A": 2, "B": 1}
    assert per_system["B"]["corpus"][column] == pytest.approx(scorer.score(PREDICTIONS[1:2], REFERENCES[1:2]).corpus[column]
                                                              if metric == "bleu" else whole[column][1], abs=1e-12)


def test_summarize_keeps_every_blocks_statistics_where_they_do_not_add_up():
    # METEOR's corpus value reads every row's statistics (a perfect row's chunk is not summed): each block's are kept.
    from capeval.scoring.meteor import aggregate

    rows = [[6, 5, 3, 2, 2, 2, 2, 2, 1, 1] + [0] * 10 + [2, 5, 5], [7, 5, 3, 3, 2, 2, 3, 3] + [0] * 12 + [3, 5, 5],
            [4, 4, 4, 4, 4, 4, 0, 0] + [0] * 12 + [1, 4, 4]]
    kind = pa.list_(pa.float64())
    blocks = [pa.table({"system": systems, "meteor": [0.5] * len(part), "error": pa.array([None] * len(part), pa.string()),
                        STATISTICS_COLUMN: pa.array(part, kind)})
              for systems, part in ((["A", "B"], rows[:2]), (["A"], rows[2:]))]
    assert summarize(blocks, "meteor")["corpus"]["meteor"] == aggregate(rows) != aggregate(rows[2:])
    per_system = summarize(blocks, "meteor", by="system")
    assert per_system["A"]["corpus"]["meteor"] == aggregate([rows[0], rows[2]])

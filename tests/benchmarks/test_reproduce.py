"""``capeval reproduce``: the published tables as data, the per-table protocols, the cached re-run, and
Composite's references attached from caption files."""

import json

import numpy as np
import pytest

from capeval.benchmarks import attach_references, load_benchmark, prepare, run_benchmark
from capeval.benchmarks.published import ROW_METRICS, published_cells, published_tables
from capeval.benchmarks.table_protocols import PROTOCOLS
from capeval.cli import main


def test_published_cells_are_the_printed_numbers_in_capeval_units():
    cells = published_cells()
    assert len(cells) == 485 and sum(c.published is not None for c in cells) == 481
    by_key = {(c.paper, c.table, c.row, c.column): c for c in cells}
    qace = by_key["qace", "Table 2", "BLEU-4", "Flickr8k"]
    assert (qace.printed, qace.published, qace.measure) == (28.6, 0.286, "tau")
    smurf = by_key["smurf", "Table 3", "BLEU-1", "HC"]
    assert (smurf.printed, smurf.published, smurf.benchmark) == (0.619, 61.9, "pascal50s")
    assert by_key["bert_tbr", "Table 3", "LEIC", "Flickr 8K"].note == "cited from Cui et al. 2018"
    assert all(c.metric in ROW_METRICS for c in cells)
    assert {(t["paper"], t["table"]) for t in published_tables()} == set(PROTOCOLS)
    with pytest.raises(ValueError, match="unknown paper 'spice'"):
        published_cells("spice")


def test_model_rows_need_their_checkpoints_unless_weights_hold_them(tmp_path):
    row = ROW_METRICS["bert_tbr-bert-base-uncased"]
    assert row.resolve() == (None, "needs bert-base-uncased")
    (tmp_path / "bert-base-uncased").mkdir()
    assert row.resolve(tmp_path) == (("bert_tbr", {"model_name": str(tmp_path / "bert-base-uncased"), "layer": 8,
                                                   "beta": 0.4}, "scores"), "")
    assert ROW_METRICS["smurf"].resolve(tmp_path)[0] is None  # distilroberta-base and distilbert-base-uncased absent


def test_bleu_smoothing_none_scores_zero_without_a_matching_four_gram(load_metric):
    predictions, references = ["a dog runs in the grass", "a cat"], [["a dog runs on the grass"], ["a cat sleeps"]]
    coco = load_metric("bleu").compute(predictions=predictions, references=references)
    plain = load_metric("bleu", smoothing="none").compute(predictions=predictions, references=references)
    # 1-4-gram precisions 5/6, 3/5, 1/4, 0/3: the toolkit's epsilons keep a tiny BLEU-4, NLTK's rule gives 0.
    assert plain["scores"] == [0.0, 0.0]
    assert coco["scores"][0] == pytest.approx((5 / 6 * 3 / 5 * 1 / 4 * 1e-15 / 3) ** 0.25, rel=1e-6)
    bigram = load_metric("bleu", order=2, smoothing="none").compute(predictions=predictions, references=references)
    assert bigram["scores"] == pytest.approx([np.sqrt(5 / 6 * 3 / 5), np.exp(1 - 3 / 2)], rel=1e-12)
    assert plain["bleu"] == coco["bleu"]  # the corpus value comes from summed counts either way
    assert "smoothing=none" in plain["hashcode"] and "smoothing" not in coco["hashcode"]
    with pytest.raises(ValueError, match="smoothing must be one of"):
        load_metric("bleu", smoothing="add-one")


def run_cli(capsys, *argv) -> tuple[int, str]:
    code = main(["reproduce", *argv])
    return code, capsys.readouterr().out


def test_reproduce_bert_tbr_rows_end_to_end_then_from_the_cache(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CAPEVAL_CACHE", str(tmp_path / "cache"))
    output = tmp_path / "cells.json"
    code, out = run_cli(capsys, "bert_tbr", "--row", "Ours (Unigram)", "--row", "BLEU-4", "--output", str(output))
    assert code == 0 and "bert_tbr Table 3" in out and f"wrote {output}" in out
    cells = {(c["table"], c["row"], c["column"]): c for c in json.loads(output.read_text())}
    unigram = cells["Table 3", "Ours (Unigram)", "Flickr 8K"]
    assert (unigram["published"], round(unigram["capeval"], 4), unigram["status"]) == (0.471, 0.4701, "reproduced")
    assert unigram["protocol"] == "P1 mean tau-b (include_self_captions=False, drop_reference=4)"
    bleu4 = cells["Table 3", "BLEU-4", "Flickr 8K"]
    assert {k: bleu4[k] for k in ("paper", "published", "status")} == {"paper": "bert_tbr", "published": 0.14,
                                                                       "status": "reproduced"}
    assert round(bleu4["delta"], 4) == -0.0035
    composite = cells["Table 3", "BLEU-4", "COMPOSITE"]
    assert composite["status"] == "differs" and composite["reason"].startswith("scored on the 2,991 of 11,985 rows")
    pascal = cells["Table 4", "BLEU-4", "All"]
    # Within tolerance, but Table 4's closest setting does not reproduce its other baseline rows: not credited.
    assert (pascal["published"], pascal["capeval"], pascal["status"]) == (73.0, pytest.approx(72.975), "differs")
    assert pascal["reason"].startswith("within tolerance, but") and pascal["protocol"] == "ties count 0 (refs=fleur5)"

    # A rerun reads every score from the cache: scoring again would fail.
    import capeval.benchmarks.harness as harness

    monkeypatch.setattr(harness, "as_scoring_metric", lambda *a, **k: pytest.fail("scored again despite the cache"))
    rerun = tmp_path / "again.json"
    assert run_cli(capsys, "bert_tbr", "--row", "Ours (Unigram)", "--row", "BLEU-4", "--output", str(rerun))[0] == 0
    assert json.loads(rerun.read_text()) == json.loads(output.read_text())


def test_reproduce_reports_needs_for_rows_it_cannot_compute(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CAPEVAL_CACHE", str(tmp_path / "cache"))
    code, out = run_cli(capsys, "clipscore", "--output", str(tmp_path / "c.json"))
    cells = json.loads((tmp_path / "c.json").read_text())
    assert code == 0 and [c["status"] for c in cells] == [
        "needs CLIP ViT-B/32 and the benchmark's images or region features"] * 4
    assert [c["published"] for c in cells] == [0.512, 0.344, 0.53, 0.364] and all(c["capeval"] is None for c in cells)
    assert "clipscore: 0 of 0 computed cells reproduced (4 printed cells)" in out


def test_unknown_row_is_one_line(capsys):
    assert main(["reproduce", "umic", "--row", "BLEU-9"]) == 2
    assert "no row ['BLEU-9'] in umic's tables" in capsys.readouterr().err


# --------------------------------------------------------------------------- Composite's references


@pytest.fixture(scope="module")
def caption_files(tmp_path_factory):
    """Synthetic COCO and Flickr30k caption files covering Composite's images: per image, its human
    candidate (cased and tokenized differently) and one other caption."""
    folder = tmp_path_factory.mktemp("captions")
    data = load_benchmark("composite").remove_columns("image").to_dict()
    human = {image: candidate for subset, image, index, candidate in
             zip(data["subset"], data["image_file"], data["caption_index"], data["candidate"]) if index == 0}
    coco_images = sorted({f for s, f in zip(data["subset"], data["image_file"]) if s == "coco"})
    flickr_images = sorted({f for s, f in zip(data["subset"], data["image_file"]) if s == "flickr30k"})
    images = [{"id": k, "file_name": name} for k, name in enumerate(coco_images)]
    annotations = [{"image_id": k, "id": 2 * k + j, "caption": caption}
                   for k, name in enumerate(coco_images) for j, caption in enumerate(["Something else entirely.",
                                                                                      human[name].upper()])]
    (folder / "captions_val2014.json").write_text(json.dumps({"images": images, "annotations": annotations}))
    lines = [f"{name}#{j}\t{caption}" for name in flickr_images
             for j, caption in enumerate([human[name].rstrip(".") + " .", "A scene ."])]
    (folder / "results_20130124.token").write_text("\n".join(lines) + "\n")
    return folder


def test_attach_references_fills_coco_and_flickr30k_rows(caption_files):
    bundled = prepare("composite")
    assert bundled.notes == ["no references for the 2,973 flickr30k rows (pass its captions file: attach_references)",
                             "no references for the 6,021 coco rows (pass its captions file: attach_references)"]
    full = attach_references(load_benchmark("composite"), coco=caption_files / "captions_val2014.json",
                             flickr30k=caption_files / "results_20130124.token")
    bench = prepare("composite", full)
    assert bench.notes == [] and all(refs is not None for refs in bench.items.references)
    columns = full.remove_columns("image").to_dict()
    own = {(s, i): r for s, i, r in zip(columns["subset"], columns["caption_index"], columns["candidate_reference_index"])}
    assert own["coco", 0] == 1 and own["flickr30k", 0] == 0 and own["coco", 1] is None
    # The human candidate's own reference is removed by default: one reference left on those rows.
    human_coco = [refs for refs, s, i in zip(bench.items.references, columns["subset"], columns["caption_index"])
                  if s == "coco" and i == 0]
    assert {len(refs) for refs in human_coco} == {1} and human_coco[0] == ["Something else entirely."]
    result = run_benchmark("bleu", "composite", source=full, num_samples=0, verbose=False)
    assert result.rows[0].n == 11985 and "restricted" not in result.rows[0].protocol


def test_bundled_composite_says_which_rows_reference_metrics_skip():
    result = run_benchmark("bleu", "composite", num_samples=0, verbose=False)
    assert result.rows[0].n == 2991
    assert "no references for the 6,021 coco rows" in result.rows[0].protocol


def test_caption_file_errors(tmp_path):
    bad = tmp_path / "results.csv"
    bad.write_text("image_name| comment_number| comment\n36979.jpg| 0| A group of friends .\nnonsense\n")
    with pytest.raises(ValueError, match="results.csv:3: expected"):
        attach_references(load_benchmark("composite"), flickr30k=bad)
    bad.write_text("image_name| comment_number| comment\n36979.jpg| 0| A group of friends .\n")
    with pytest.raises(ValueError, match="991 Composite flickr30k image"):
        attach_references(load_benchmark("composite"), flickr30k=bad)
    (tmp_path / "coco.json").write_text("[]")
    with pytest.raises(ValueError, match="not a COCO captions annotation file"):
        attach_references(load_benchmark("composite"), coco=tmp_path / "coco.json")
    with pytest.raises(ValueError, match="needs coco="):
        attach_references(load_benchmark("composite"))


def test_benchmark_and_reproduce_take_composite_references(caption_files, capsys):
    assert main(["benchmark", "--metric", "bleu:order=1", "--dataset", "composite", "--samples", "0",
                 "--composite-references", str(caption_files)]) == 0
    assert "restricted" not in capsys.readouterr().out
    assert main(["reproduce", "smurf", "--composite-references", str(caption_files.parent)]) == 2
    assert "has neither captions_val2014.json nor a Flickr30k captions file" in capsys.readouterr().err

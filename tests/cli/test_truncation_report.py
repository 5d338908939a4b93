"""Texts cut to CLIP's context, reported on every surface: the command line says so in the metric's summary line
(one plain line, not a Python warning with its source line, and without transformers' advice to install
torchvision), ``--output`` and ``capeval.evaluate``'s per-caption columns carry the count per caption."""

import importlib.util
import json
import subprocess
import sys
import warnings

import pytest
from PIL import Image

from fixtures.commands import capeval, write

LONG = "a dog runs on the grass " * 20
NOTE = ("CLIP-S / RefCLIP-S: 1 text(s) of 1 of 2 captions longer than the CLIP text encoder's 77-token context were "
        "cut to it, as the released code cuts them (per caption: truncated_texts)")


@pytest.mark.models
@pytest.mark.slow
def test_the_command_line_reports_cut_texts_in_one_plain_line(tiny_clip, tmp_path):
    images = tmp_path / "images"
    images.mkdir()
    Image.new("RGB", (64, 48), (200, 40, 90)).save(images / "dog.jpg")
    rows = write(tmp_path / "rows.jsonl", "\n".join(json.dumps({"candidate": candidate, "references": ["a dog running"], "image": "dog.jpg"})
                                                    for candidate in (LONG, "a dog runs")))
    target = tmp_path / "scores.json"
    code, out, err = capeval("score", "--input", rows, "--metric", f"clip_score:model_name={tiny_clip},device=cpu",
                             "--images", images, "--output", target)
    assert code == 0, err
    summary = next(line for line in out.splitlines() if line.startswith("- clip_score("))
    assert summary.endswith(f"[{NOTE}]")
    assert "Warning" not in err and "warnings.warn" not in err and "return scorer.score" not in err
    if importlib.util.find_spec("torchvision") is None:
        assert "torchvision" not in err
    written = json.loads(target.read_text())
    assert [row["truncated_texts"] for row in written["images"]] == [1, 0]
    assert NOTE in [about["note"] for about in written["metrics"].values()]


@pytest.mark.models
def test_evaluate_carries_the_count_per_caption_and_the_note(tiny_clip):
    import capeval as library

    image = Image.new("RGB", (64, 48), (200, 40, 90))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = library.evaluate([LONG, "a dog runs"], [["a dog running"], ["a dog"]], images=[image, image],
                                  metrics=[("clip_score", {"model_name": tiny_clip, "device": "cpu"})])
    assert result.columns["truncated_texts"] == [1, 0]
    assert list(result.per_caption.columns) == ["clip_s", "refclip_s", "truncated_texts"]
    assert list(result.notes.values()) == [NOTE]
    assert "truncated_texts" not in result.corpus


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("torchvision") is not None, reason="torchvision is installed")
def test_without_torchvision_clip_takes_the_pil_processor_without_transformers_advice():
    """transformers falls back to the PIL processor too, but only after printing its advice to install torchvision."""
    code = ("from capeval.backbones.clip import image_processor_class; "
            "print(image_processor_class().__name__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stdout) == (0, "CLIPImageProcessorPil\n") and "torchvision" not in done.stderr, done.stderr

"""`capeval download` and `capeval doctor` (issue 35): what each metric declares it needs is fetched once from the
hosts (a loopback server stands in for them, at their paths), checked, resumed after a cut, refused with a wrong
checksum, written into one folder a machine without network uses through CAPEVAL_CACHE; the doctor's table and the
one-line messages of the default sets name what is left out and why."""

import hashlib
import json
import math
import os
import subprocess
import sys
import urllib.parse
import warnings
import zipfile
from pathlib import Path

import pytest

import capeval
import tiny_models
from capeval import cli
from capeval.models import ModelUnavailableError
from capeval.needs import NLTK_PUNKT, NLTK_TAGGER, NLTK_WORDNET, NltkPackage, UrlFile
from capeval.readiness import NotRunHereWarning, doctor
from fixtures import ASSETS, REPO, stand_ins
from fixtures.english import wordnet_missing
from fixtures.hub import COMMIT, hosts_handler, hub_files
from fixtures.loopback import download_cache, serving

BODY = bytes(range(256)) * 400
#: How the doctor names two checkpoints: each with the revision it is fetched at (pinned, or main where none is known).
BERT_CASED = "bert-base-cased (weights, revision cd5ef92a9fb2)"
LLAVA = "llava-hf/llava-1.5-13b-hf (weights, revision 5dda2880bda0)"
URL = "https://example.org/files/data.bin"


def sha256(body: bytes) -> str:
    return "sha256:" + hashlib.sha256(body).hexdigest()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # no checkpoint of the machine's own HuggingFace cache counts
    return download_cache(tmp_path / "cache", monkeypatch)


def test_a_cut_download_resumes_where_it_stopped_and_is_checked(cache, monkeypatch):
    seen = []
    with serving(hosts_handler({"/files/data.bin": BODY}, {}, cut_once={"/files/data.bin"}, seen=seen)) as url:
        monkeypatch.setenv("CAPEVAL_URL_MIRROR", url)
        need = UrlFile(URL, sha256(BODY))
        with pytest.raises(ModelUnavailableError, match=r"cut short: 34,133 of 102,400 bytes \(run it again to resume\)"):
            need.fetch()
        assert not need.present()
        need.fetch()
    assert seen == [("/files/data.bin", None), ("/files/data.bin", "bytes=34133-")]
    assert need.present() and need.cached().read_bytes() == BODY


def test_a_wrong_checksum_is_refused_and_nothing_is_kept(cache, monkeypatch):
    with serving(hosts_handler({"/files/data.bin": BODY}, {})) as url:
        monkeypatch.setenv("CAPEVAL_URL_MIRROR", url)
        need = UrlFile(URL, "sha256:00ff")
        with pytest.raises(ModelUnavailableError, match="has SHA-256 [0-9a-f]{64}, not the published 00ff: refused"):
            need.fetch()
    assert not need.present() and [p for p in cache.rglob("*") if p.is_file()] == []


def test_a_cache_that_cannot_be_written_is_one_line_before_any_download(monkeypatch, capsys):
    download_cache("/proc/capeval-cache", monkeypatch)  # not even root may make a folder there
    assert cli.main(["download", "umic"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("capeval download: cannot write to /proc/capeval-cache") and err.count("\n") == 1


def test_offline_each_missing_item_is_one_line_with_url_checksum_and_from(cache, monkeypatch, capsys):
    monkeypatch.setenv("CAPEVAL_OFFLINE", "1")
    assert cli.main(["download", "umic"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "UMIC checkpoint: offline, not fetched: https://archive.org/download/umic_data/umic.pt (no published checksum): "
        "bring a copy and run capeval download umic --from PATH/umic.pt",
        "bert-base-cased (weights, revision cd5ef92a9fb2): offline, not fetched: https://huggingface.co/bert-base-cased "
        "(revision cd5ef92a9fb2f889e972770a36d4ed042daf221e): "
        "bring a copy and run capeval download umic --from PATH/bert-base-cased"]


def test_from_installs_a_copy_the_user_brings_only_with_its_checksum(cache, tmp_path):
    archive = tmp_path / "averaged_perceptron_tagger_eng.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("averaged_perceptron_tagger_eng/weights.json", "{}")
    tagger = NltkPackage("https://example.org/taggers/averaged_perceptron_tagger_eng.zip", sha256(archive.read_bytes()),
                         what="tagger", resource="taggers/averaged_perceptron_tagger_eng/weights.json")
    with pytest.raises(ModelUnavailableError, match="not the published 00ff"):
        NltkPackage(tagger.label, "sha256:00ff", resource=tagger.resource).install_from(archive)
    assert not tagger.present()
    tagger.install_from(archive)
    assert tagger.present() and (cache / "nltk_data" / "taggers" / "averaged_perceptron_tagger_eng" / "weights.json").is_file()


def test_download_from_names_what_it_matches(cache, tmp_path, capsys):
    stray = tmp_path / "stray.bin"
    stray.write_bytes(b"x")
    assert cli.main(["download", "umic", "--from", str(stray)]) == 2
    assert "no missing item is named 'stray.bin'; name the copy as one of ['bert-base-cased', 'umic.pt']" in capsys.readouterr().err
    assert cli.main(["download", "no_such_metric"]) == 2


def test_doctor_lists_every_metric_with_all_it_lacks_and_one_command(cache, capsys):
    rows = {row.metric: row for row in doctor()}
    assert set(rows) == set(capeval.METRICS)
    assert (rows["bleu"].runs, rows["bleu"].lacks, rows["bleu"].fix) == (True, (), "")
    assert rows["umic"].runs is False and rows["umic"].lacks == ("UMIC checkpoint", BERT_CASED)
    assert rows["umic"].fix == "capeval download umic"
    assert rows["pac_score"].lacks[-1] == "PAC-S's clip_ViT-B-32.pth (no public download)"
    assert rows["pac_score"].fix.startswith("pass checkpoint=PATH")
    # Judges: the LLaVA weights are fetched like any checkpoint; a judge server is the user's to name, never picked.
    assert rows["expert"].lacks == (LLAVA, "hjkim811/EXPERT-llava-13b-lora (weights, revision main)")
    assert (rows["fleur"].lacks, rows["fleur"].fix) == ((LLAVA,), "capeval download fleur")
    assert rows["clair"].lacks == rows["g_veval"].lacks == ("a judge server (base_url=)",)
    assert rows["clair"].fix.startswith("capeval score --metric 'clair:base_url=URL'")
    assert capeval.doctor() == list(rows.values())
    assert cli.main(["doctor"]) == 0
    table = capsys.readouterr().out
    assert "| bleu | yes |  |  |" in table and "| umic | no | UMIC checkpoint; bert-base-cased (weights, revision cd5ef92a9fb2) | `capeval download umic` |" in table


def test_score_names_what_it_leaves_out_and_unused_images_in_one_line_each(cache, tmp_path, capsys):
    assert cli.main(["score", "--offline", "bleu"]) == 0
    out = capsys.readouterr().out
    left_out = [line for line in out.splitlines() if line.startswith("Not run here: ")]
    assert len(left_out) == 1 and "umic (lacks UMIC checkpoint, bert-base-cased (weights, revision cd5ef92a9fb2): capeval download umic)" in left_out[0]
    assert "cider (runs here: name it to run it)" in left_out[0]
    assert cli.main(["score", "--metric", "bleu", "--images", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "--images given, but no metric of this call reads images: unused" in out and "Not run here" not in out


def test_what_capeval_cannot_fetch_is_named_with_its_fix_and_is_no_failure(cache, monkeypatch, capsys):
    monkeypatch.setattr("shutil.which", lambda command, *args, **kwargs: None)  # no Java here
    from capeval.scoring import spice

    monkeypatch.setattr(spice.CoreNlp, "present", lambda self: True)
    assert cli.main(["download", "spice"]) == 0
    assert capsys.readouterr().out.splitlines() == ["- a Java runtime: capeval cannot fetch it; apt-get install default-jre-headless",
                                                    "- Stanford CoreNLP 3.6.0: here"]


def test_the_fix_installs_missing_extras_first():
    from capeval.readiness import fix_command
    from capeval.scoring.spice import CoreNlp

    assert fix_command("spice", [CoreNlp("https://example.org/corenlp.zip")], ["spice"]) == \
        "pip install 'capeval[spice]' && capeval download spice"
    assert fix_command("bleu", [], []) == ""


def test_images_are_unused_only_when_no_metric_of_the_call_reads_them():
    from types import SimpleNamespace

    from capeval.readiness import unused_inputs_line

    text, image = SimpleNamespace(scorer=SimpleNamespace(needs_images=False)), SimpleNamespace(scorer=SimpleNamespace(needs_images=True))
    assert unused_inputs_line([text, image], ["images"]) == "" and unused_inputs_line([text], []) == ""
    assert unused_inputs_line([text], ["--images"]).startswith("--images given, but no metric of this call reads images")


def test_the_suite_space_names_what_it_leaves_out_by_the_same_check(cache):
    from capeval.integrations.gradio_app import suite_missing

    assert suite_missing()["umic"] == "lacks UMIC checkpoint, bert-base-cased (weights, revision cd5ef92a9fb2): `capeval download umic`"


def test_evaluate_names_unused_images_and_what_its_default_set_leaves_out(cache):
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        capeval.evaluate(["a dog"], [["a dog runs"]], images=["x.jpg"], metrics=["bleu"])
        capeval.evaluate(["a dog"], [["a dog runs"]])
    messages = [str(w.message) for w in shown if issubclass(w.category, NotRunHereWarning)]
    assert messages[0].startswith("images given, but no metric of this call reads images: unused")
    assert any(m.startswith("Not run here: ") and "umic (lacks UMIC checkpoint" in m for m in messages[1:])


def save_clip(folder):
    from capeval.backbones.clip import save_random_clip  # torch: only for the test that builds models

    return save_random_clip(folder)


#: The Hub checkpoints the Done-when run serves: tiny random stand-ins (or the tests' tiny assets) at the real ids.
STAND_INS = {"bert-base-uncased": lambda folder: tiny_models.save_tiny_bert(folder, num_layers=8),
             "roberta-large": lambda folder: tiny_models.save_tiny_roberta(folder, num_layers=17),
             "distilroberta-base": lambda folder: tiny_models.save_tiny_roberta(folder, num_layers=6),
             "distilbert-base-uncased": lambda folder: tiny_models.save_tiny_bert(folder, num_layers=6, model_type="distilbert"),
             "openai/clip-vit-base-patch32": save_clip,
             "bert-base-cased": stand_ins.cased_tokenizer,
             "lizhuang144/flan-t5-base-VG-factual-sg": lambda folder: stand_ins.CAPTURE_PARSER,
             "sentence-transformers/all-mpnet-base-v2": lambda folder: stand_ins.CAPTURE_ENCODER,
             "princeton-nlp/sup-simcse-roberta-base": lambda folder: tiny_models.save_tiny_roberta(folder, num_layers=3),
             "mrm8488/t5-base-finetuned-question-generation-ap": lambda folder: stand_ins.t5(folder, seed=1),
             "ThomasNLG/t5-qa_squad2neg-en": lambda folder: stand_ins.t5(folder, seed=2),
             "bert-base-multilingual-cased": lambda folder: tiny_models.save_tiny_bert(folder, num_layers=9),
             "t5-small": lambda folder: stand_ins.t5(folder, seed=3, visual=True),
             "llava-hf/llava-1.5-13b-hf": stand_ins.scripted_llava,
             "hjkim811/EXPERT-llava-13b-lora": lambda folder: stand_ins.llava_lora(folder, folder.parent / "llava-hf--llava-1.5-13b-hf")}
#: What the Done-when run scores, by input: captions with references and an image; AMBER's descriptions of its
#: images (by AMBER id); captions of an image given as region features.
CAPTIONS = {"predictions": ["two people ride horses"], "references": [["two riders on horses", "people riding horses in an arena"]],
            "images": ["SAMPLE_IMAGE"]}
GROUPS = [({**CAPTIONS, "metrics": ["bleu", "rouge", "cider", "meteor", "bert_tbr", "bertscore", "smurf", "clip_score", "chair",
                                    "capture", "polos", "qace", "fleur", "expert"]}),
          {"predictions": ["A dog sleeps on a sofa"], "images": [1], "metrics": ["amber"]},
          {"predictions": ["two men riding horses"], "references": [["two men ride horses in an arena"]],
           "region_features": [str(ASSETS / "qace_butd_sample.npz")], "metrics": ["umic", "vilbertscore:config=VILBERT_CONFIG"]}]
SCORED = [metric.partition(":")[0] for group in GROUPS for metric in group["metrics"]]
#: The metrics that read WordNet, of which no stand-in is made: NLTK's data or Debian's wordnet-base on this machine
#: serves them (capeval download finds it there), so they run where WordNet is installed. (QACE's spaCy pipeline
#: likewise is a package its extra installs, not a download.)
WORDNET_METRICS = {"chair", "capture", "amber"}
#: The registered metrics the run leaves out, and why: nothing public to download, or nothing capeval downloads.
EXCEPTIONS = {
    "pac_score": "PAC-S's fine-tuned CLIP (clip_ViT-B-32.pth) has no public download: the user passes checkpoint=",
    "clair": "a judge server the user names (base_url=): no weights to download",
    "g_veval": "a judge server the user names (base_url=): no weights to download",
    "spice": "Java and Stanford CoreNLP's parser itself: a stand-in jar parses nothing (tests/metrics/spice covers its download)",
}
#: The download step's one change: the digest each served file is checked against (the published one, where there
#: is one) becomes the stand-in's.
DOWNLOAD = """
import dataclasses, importlib, json, sys, urllib.parse
from capeval import cli
from capeval.registry import METRICS
served = json.loads(sys.argv[1])
for metric in METRICS.values():
    module, _, name = metric.scorer.partition(":")
    scorer = getattr(importlib.import_module(module), name)
    scorer.needs = tuple(dataclasses.replace(need, digest=served[urllib.parse.urlparse(need.label).path])
                         if urllib.parse.urlparse(need.label).path in served and hasattr(need, "digest") else need
                         for need in scorer.needs)
raise SystemExit(cli.main(["download", *sys.argv[2:]]))
"""
SCORE = """
import json, socket, sys

def blocked(*args, **kwargs):
    raise OSError("no network on this machine")

socket.socket.connect = socket.socket.connect_ex = socket.create_connection = blocked  # no connection leaves the process
import capeval
from capeval.samples import sample_image
values = {}
for group in json.loads(sys.argv[1]):
    metrics = group.pop("metrics")
    if "images" in group:
        group["images"] = [str(sample_image()) if image == "SAMPLE_IMAGE" else image for image in group["images"]]
    result = capeval.evaluate(group.pop("predictions"), group.pop("references", None), metrics=metrics, **group)
    values.update({label.partition("(")[0]: result.corpus[column] for label, column in result.primary.items()})
print(json.dumps(values))
"""


def url_stand_ins(folder: Path) -> tuple[dict[str, bytes], Path]:
    """``path -> body`` of every plain-URL file the scored metrics need, at its host's path (``folder`` holds the Hub
    stand-ins, of which Polos's and Visual-T5's releases are made), and the architecture of the ViLBERT stand-in."""
    from capeval.backbones.polos import RELEASED_CHECKPOINT
    from capeval.backbones.visual_t5 import DEFAULT_CHECKPOINT as VISUAL_T5
    from capeval.needs import SpacyWheel
    from capeval.scoring.amber import AmberScorer
    from capeval.scoring.umic import DEFAULT_CHECKPOINT
    from capeval.scoring.vilbertscore import MULTI_TASK_CHECKPOINT

    wheel = next(need for need in AmberScorer.needs if isinstance(need, SpacyWheel))
    vilbert_config, vilbert = stand_ins.vilbert_release(folder / "vilbert", folder / "bert-base-uncased")
    amber = [need.label for need in AmberScorer.needs if need.title.startswith("AMBER ")]
    return {stand_ins.url_path(NLTK_TAGGER.label): stand_ins.nltk_tagger_archive(),
            stand_ins.url_path(wheel.label): stand_ins.spacy_wheel(folder / "spacy", wheel.pipeline, "3.8.0"),
            **stand_ins.amber_files(amber),
            stand_ins.url_path(DEFAULT_CHECKPOINT): stand_ins.umic_checkpoint(folder),
            stand_ins.url_path(RELEASED_CHECKPOINT): stand_ins.polos_release(
                folder / "polos", folder / "princeton-nlp--sup-simcse-roberta-base", folder / "openai--clip-vit-base-patch32",
                "princeton-nlp/sup-simcse-roberta-base"),
            stand_ins.url_path(VISUAL_T5): stand_ins.folder_zip(Path(stand_ins.t5(folder / "visual-t5", seed=3, visual=True)), "ckpt"),
            stand_ins.url_path(MULTI_TASK_CHECKPOINT): vilbert}, vilbert_config


@pytest.mark.slow
@pytest.mark.models
def test_download_to_a_folder_then_every_metric_with_public_weights_runs_there_without_network(tmp_path):
    """The Done-when: the hosts (a loopback server) serve tiny stand-ins at the real Hub ids and URLs; `capeval
    download --to DIR` fills DIR (checking each file against its digest, the stand-ins' here); a fresh process with
    offline mode, the server stopped and only CAPEVAL_CACHE=DIR scores every registered metric whose weights and data
    are public, with its default options, in one process (ViLBERTScore names its stand-in's small architecture with
    config=, as its released checkpoint carries none). The others are named with why (EXCEPTIONS)."""
    from capeval.downloads import needs_of
    from capeval.needs import HubModel

    assert set(SCORED) | set(EXCEPTIONS) == set(capeval.METRICS) and not set(SCORED) & set(EXCEPTIONS)
    left = WORDNET_METRICS if wordnet_missing() else set()
    groups = [{**group, "metrics": kept} for group in GROUPS
              if (kept := [spec for spec in group["metrics"] if spec.partition(":")[0] not in left])]
    scored = [name for name in SCORED if name not in left]
    files, repos = {}, {}
    for repo, save in STAND_INS.items():
        folder = Path(save(tmp_path / repo.replace("/", "--")))
        served = hub_files(repo, folder)
        files.update(served)
        repos[repo] = sorted(path.split(f"/resolve/{COMMIT}/")[1] for path in served)
    urls, vilbert_config = url_stand_ins(tmp_path)
    digests = {path: sha256(body) for path, body in urls.items()}
    files.update(urls)
    env = {key: value for key, value in os.environ.items() if key not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "CAPEVAL_OFFLINE")}
    env["HF_HOME"] = str(tmp_path / "hf")  # nothing from this machine's HuggingFace cache
    target, seen = tmp_path / "ready", []
    with serving(hosts_handler(files, repos, seen=seen)) as url:
        done = subprocess.run([sys.executable, "-c", DOWNLOAD, json.dumps(digests), *scored, "--to", str(target)],
                              capture_output=True, text=True, env={**env, "HF_ENDPOINT": url, "CAPEVAL_URL_MIRROR": url},
                              cwd=REPO, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == f"Everything fetched is in {target}: on a machine without network, set CAPEVAL_CACHE={target}"
    asked = {path for path, _ in seen}
    for need in (need for need, _ in needs_of(scored).values() if isinstance(need, HubModel)):  # at the pinned revision
        assert any(path.split("?")[0] in (f"/api/models/{need.label}/revision/{need.revision}",
                                          f"/api/models/{need.label}/tree/{need.revision}") for path in asked), need.label
    offline = {**env, "HF_HUB_OFFLINE": "1", "CAPEVAL_OFFLINE": "1", "CAPEVAL_CACHE": str(target)}
    run = subprocess.run([sys.executable, "-c", SCORE, json.dumps(groups).replace("VILBERT_CONFIG", str(vilbert_config))],
                         capture_output=True, text=True, env=offline, cwd=REPO, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    values = json.loads(run.stdout.splitlines()[-1])
    assert sorted(values) == sorted(scored) and all(math.isfinite(value) for value in values.values()), values
    doctor_out = subprocess.run([sys.executable, "-m", "capeval.cli", "doctor"], capture_output=True, text=True, env=offline,
                                cwd=REPO, timeout=600).stdout
    for metric in scored:
        assert f"| {metric} | yes |" in doctor_out


def test_a_check_that_cannot_import_its_package_finds_the_need_absent_and_names_the_extra(cache, monkeypatch, capsys):
    """The core install (no NLTK): CHAIR's NLTK data are absent and its extra is named, in the doctor's one check."""
    monkeypatch.setitem(sys.modules, "nltk", None)  # `import nltk.data` now fails as it does where NLTK is not installed
    monkeypatch.setitem(sys.modules, "nltk.data", None)
    rows = {row.metric: row for row in doctor()}
    assert rows["chair"].lacks[0] == "the chair extra" and "NLTK's averaged_perceptron_tagger_eng data" in rows["chair"].lacks
    assert rows["chair"].fix == "pip install 'capeval[chair]' && capeval download chair"
    assert cli.main(["doctor"]) == 0 and "| chair | no | the chair extra; " in capsys.readouterr().out


def spacy_wheel_need():
    from capeval.needs import SpacyWheel
    from capeval.scoring.amber import AmberScorer

    return next(need for need in AmberScorer.needs if isinstance(need, SpacyWheel))


@pytest.mark.parametrize("need", [NLTK_TAGGER, NLTK_PUNKT, NLTK_WORDNET, spacy_wheel_need()], ids=lambda need: need.file_name)
def test_nltk_and_spacy_data_with_another_digest_than_the_published_one_are_refused(need, cache, monkeypatch):
    """Each archive is checked against the digest its source publishes (NLTK's data index; the pinned spaCy wheel)."""
    archive = cache.parent / need.file_name
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("stand-in/data.txt", "not the published archive")
    with serving(hosts_handler({urllib.parse.urlparse(need.label).path: archive.read_bytes()}, {})) as url:
        monkeypatch.setenv("CAPEVAL_URL_MIRROR", url)
        with pytest.raises(ModelUnavailableError, match=f"not the published {need.digest.removeprefix('sha256:')}: refused"):
            need.fetch()
    assert need.digest.startswith("sha256:") and not need.cached().exists()
    assert not (cache / "nltk_data").exists() and not (cache / "spacy").exists()


def test_expert_finds_its_adapter_where_capeval_download_put_it(cache, monkeypatch):
    """EXPERT's LoRA is a Hub repository without a model config: it is read from capeval's hub cache like the models."""
    from capeval.backbones.llava import _downloaded

    snapshot = cache / "hub" / "models--hjkim811--EXPERT-llava-13b-lora" / "snapshots" / "main"
    snapshot.mkdir(parents=True)
    (snapshot / "adapter_config.json").write_text("{}", encoding="utf-8")
    monkeypatch.setenv("CAPEVAL_OFFLINE", "1")
    assert _downloaded("hjkim811/EXPERT-llava-13b-lora") == snapshot


def test_the_doctor_names_a_missing_extra_with_everything_else_the_metric_lacks(cache, monkeypatch):
    monkeypatch.setattr("capeval.registry.missing_packages", lambda extras: ["torch"] if "models" in extras else [])
    row = next(row for row in doctor() if row.metric == "bert_tbr")
    assert row.lacks == ("the models extra", "bert-base-uncased (weights, revision 86b5e0934494)")
    assert row.fix == "pip install 'capeval[models]' && capeval download bert_tbr"


def test_a_copy_installed_with_from_counts_as_here_and_only_the_rest_is_named(cache, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CAPEVAL_OFFLINE", "1")
    brought = tmp_path / "bert-base-cased"
    brought.mkdir()
    (brought / "config.json").write_text('{"model_type": "bert"}', encoding="utf-8")
    assert cli.main(["download", "umic", "--from", str(brought)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == [f"- installed {BERT_CASED} from {brought}", f"- {BERT_CASED}: here"]
    assert len(lines) == 3 and lines[2].startswith("UMIC checkpoint: offline, not fetched: ")

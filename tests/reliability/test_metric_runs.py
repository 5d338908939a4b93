"""Which metrics a call runs and under which keys: every run keeps its own result (a distinct readable label, or one
error naming the clash), specs mean one thing, unknown names are one clear error, and an installed plugin that is
broken or malformed never stops the other metrics nor gets called."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

import capeval
from capeval.evaluation import metric_runs
from capeval.registry import METRICS, entry, parse_spec, resolve
from capeval.scoring.coco import CiderScorer
from capeval.scoring.protocol import CaptionScorer, Scores
from tiny_models import save_tiny_bert

PREDICTIONS = ["a dog runs on the grass", "a cat sleeps on a bed"]
REFERENCES = [["a dog running on grass", "the dog runs"], ["a cat is sleeping", "a kitten naps on a bed"]]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "CAPEVAL_PROGRESS": "0", "PYTHONUNBUFFERED": "1"}


def test_two_runs_of_one_metric_keep_both_results():
    result = capeval.evaluate(PREDICTIONS, REFERENCES, metrics=[CiderScorer(), CiderScorer(idf="flickr8k")])
    corpus_idf = capeval.load("cider").compute(predictions=PREDICTIONS, references=REFERENCES)["cider"]
    flickr8k_idf = capeval.load("cider", idf="flickr8k").compute(predictions=PREDICTIONS, references=REFERENCES)["cider"]
    assert corpus_idf != pytest.approx(flickr8k_idf)
    assert result.corpus == {"cider": pytest.approx(corpus_idf), "cider_idf_flickr8k": pytest.approx(flickr8k_idf)}
    assert list(result.provenance) == ["cider", "cider(idf=flickr8k)"] and set(result.notes) == set(result.provenance)
    # A scorer alone is labelled by its metric: its options are shown only to tell runs apart.
    assert list(capeval.evaluate(PREDICTIONS, REFERENCES, metrics=[CiderScorer(idf="flickr8k")]).provenance) == ["cider"]


@pytest.mark.parametrize("metrics", [["cider", ("cider", {})], [CiderScorer(), CiderScorer()], ["rouge", "rouge"]])
def test_runs_that_nothing_tells_apart_are_one_error(metrics):
    with pytest.raises(ValueError, match=r"is asked for twice with the same options"):
        capeval.evaluate(PREDICTIONS, REFERENCES, metrics=metrics)


def test_two_runs_reporting_one_flat_key_are_one_error_naming_both():
    from capeval.evaluation import flat_keys

    runs = metric_runs([CiderScorer(), CiderScorer(idf="flickr8k")])
    # The first run's own "cider_idf_flickr8k" and the second's "cider" under its label would be one column.
    with pytest.raises(ValueError, match=r"^cider and cider\(idf=flickr8k\) would both report 'cider_idf_flickr8k': give one"):
        flat_keys(runs, [["cider", "cider_idf_flickr8k"], ["cider"]])
    assert flat_keys(runs, [["cider", "cider_d"], ["cider"]]) == [{"cider": "cider", "cider_d": "cider_d"},
                                                                  {"cider": "cider_idf_flickr8k"}]


def test_labels_show_the_options_runs_differ_in():
    from capeval.evaluation import run_labels

    assert run_labels([("bleu", {"order": 1, "tokenizer": "none"}), ("bleu", {"order": 2, "tokenizer": "none"}),
                       ("rouge", {"tokenizer": "none"})]) == ["bleu(order=1)", "bleu(order=2)", "rouge(tokenizer=none)"]
    # An option only one run gives, even None, tells the runs apart.
    assert run_labels([("bertscore", {}), ("bertscore", {"layer": None})]) == ["bertscore", "bertscore(layer=None)"]
    # Paths: the shortest tail that differs; a single run shows two parts, never the whole path.
    assert run_labels([("bert_tbr", {"model_name": "/a/x/ckpt/model"}), ("bert_tbr", {"model_name": "/b/x/ckpt/model"})]) == [
        "bert_tbr(model_name=a/x/ckpt/model)", "bert_tbr(model_name=b/x/ckpt/model)"]
    assert run_labels([("bert_tbr", {"model_name": "/data/runs/ckpt/model"})]) == ["bert_tbr(model_name=ckpt/model)"]


@pytest.mark.slow
def test_two_checkpoints_on_the_command_line_get_two_lines(tmp_path):
    """Comparing two checkpoints whose paths end alike (``.../ckpt/model``) is the normal use."""
    paths = [str(save_tiny_bert(tmp_path / run / "ckpt" / "model", seed=seed)) for seed, run in enumerate(("exp1", "exp2"))]
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join(json.dumps({"candidate": p, "references": refs}) for p, refs in zip(PREDICTIONS, REFERENCES)))
    output = tmp_path / "scores.json"
    done = subprocess.run([sys.executable, "-m", "capeval.cli", "score", "--input", str(rows), "--output", str(output),
                           *[arg for path in paths for arg in ("--metric", f"bert_tbr:model_name={path},layer=2,beta=0.4")]],
                          capture_output=True, text=True, env=ENV, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("- bert_tbr")]
    assert [line.split(":")[0] for line in lines] == ["- bert_tbr(model_name=exp1/ckpt/model)", "- bert_tbr(model_name=exp2/ckpt/model)"]
    written = json.loads(output.read_text())
    for path, label in zip(paths, written["metrics"]):
        expected = capeval.load("bert_tbr", model_name=path, layer=2, beta=0.4).compute(predictions=PREDICTIONS, references=REFERENCES)
        assert written["system"][written["metrics"][label]["column"]] == pytest.approx(expected["bert_tbr"], abs=1e-9)
    assert len(set(written["system"].values())) == 2


def test_the_same_run_twice_on_the_command_line_is_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "capeval.cli", "score", "--metric", "rouge", "--metric", "rouge:tokenizer=ptb",
                           "--metric", "rouge:tokenizer=ptb"], capture_output=True, text=True, env=ENV, timeout=300)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "rouge(tokenizer=ptb) is asked for twice" in done.stderr and "Scoring" not in done.stdout


def test_benchmark_labels_follow_the_same_rule(capsys):
    from capeval.cli import main

    assert main(["benchmark", "--metric", "cider", "--metric", "cider:idf=flickr8k", "--dataset", "pascal50s",
                 "--samples", "0"]) == 0
    table = capsys.readouterr().out
    assert "| cider |" in table and "| cider(idf=flickr8k) |" in table
    assert main(["benchmark", "--metric", "bleu:order=2", "--metric", "bleu", "--option", "order=2", "--dataset", "pascal50s"]) == 2
    assert "bleu(order=2) is asked for twice" in capsys.readouterr().err


def test_metrics_as_a_mapping_of_names_to_options():
    result = capeval.evaluate(PREDICTIONS, REFERENCES, metrics={"bleu": {"order": 1}, "rouge": None})
    bleu_1 = capeval.load("bleu", order=1).compute(predictions=PREDICTIONS, references=REFERENCES)
    assert result.corpus["bleu"] == pytest.approx(bleu_1["bleu"]) == pytest.approx(result.corpus["bleu_1"])
    assert list(result.provenance) == ["bleu(order=1)", "rouge"]
    with pytest.raises(ValueError, match="a metric spec is a name"):
        capeval.evaluate(PREDICTIONS, REFERENCES, metrics={"bleu": 1})


def test_one_bare_pair_is_one_run_with_its_options():
    (run,) = metric_runs(("bleu", {"order": 2}))
    assert run.label == "bleu(order=2)" and run.scorer.order == 2


@pytest.mark.parametrize("metrics, message", [
    (None, "metrics is None: name metrics"),
    (123, "metrics names metrics (a list of specs, or names mapped to options) or one of ('offline', 'all'); got int 123"),
    (1.5, "metrics names metrics (a list of specs, or names mapped to options) or one of ('offline', 'all'); got float 1.5"),
    (["blue"], "no capeval metric 'blue' (did you mean 'bleu'?)"),
    ("nope", "no capeval metric 'nope'"),
])
def test_bad_metric_names_are_value_errors(metrics, message):
    with pytest.raises(ValueError) as raised:
        capeval.evaluate(PREDICTIONS, REFERENCES, metrics=metrics)
    assert str(raised.value).startswith(message)


def test_an_unknown_name_is_still_a_key_error_for_older_callers():
    from capeval.registry import UnknownMetricError

    with pytest.raises(KeyError):
        entry("blue")
    assert isinstance(UnknownMetricError("x"), ValueError) and str(UnknownMetricError("no metric")) == "no metric"


def test_a_value_holding_equals_signs_is_kept_whole():
    assert parse_spec("bert_tbr:model_name=/models/a=b/model,layer=8") == ("bert_tbr", {"model_name": "/models/a=b/model", "layer": 8})
    assert parse_spec("cider:idf=flickr8k") == ("cider", {"idf": "flickr8k"})
    with pytest.raises(ValueError, match="takes key=value"):
        parse_spec("bleu:=2")


@pytest.mark.parametrize("spec", ["bleu:order=1", ("bleu", {"order": 1})])
def test_an_option_given_twice_must_agree(spec):
    """The same option in the spec and beside it: equal values are fine, different ones an error (neither wins)."""
    from capeval.registry import spec_options

    assert resolve(spec, {"order": 1}).order == 1 and resolve(spec, {"tokenizer": "none"}).tokenizer == "none"
    with pytest.raises(ValueError, match=r"bleu: order is given twice, as 1 in the spec and as 2 beside it"):
        resolve(spec, {"order": 2})
    with pytest.raises(ValueError, match="given twice"):
        spec_options(spec, {"order": True})  # True == 1, but it is not the same option value


class Slow(CaptionScorer):
    """Starts a process in the background (as METEOR's JVM) and so is scored last: its value is the caption's length."""

    metric, title, name, primary = "slow", "Slow", "slow", "slow"
    started = False

    def start_in_background(self):
        Slow.started = True

    def score(self, predictions, references=None, **inputs):
        return Scores({"slow": [float(len(p)) for p in predictions]}, corpus={"slow": 100.0})

    def options(self):
        return {}


def test_a_metric_scored_last_keeps_its_place_and_label():
    result = capeval.evaluate(PREDICTIONS, REFERENCES, metrics=[Slow(), "rouge", "bleu:order=1"])
    assert Slow.started and list(result.provenance) == ["slow", "rouge", "bleu(order=1)"]
    assert result.columns["slow"] == [float(len(p)) for p in PREDICTIONS] and result.corpus["slow"] == 100.0
    assert result.primary == {"slow": "slow", "rouge": "rouge_l", "bleu(order=1)": "bleu"}
    assert result.scores["rouge"]["rouge_l"] == result.columns["rouge_l"]
    assert result.columns["rouge_l"] == capeval.load("rouge").compute(predictions=PREDICTIONS, references=REFERENCES)["scores"]
    assert result.provenance["rouge"].startswith("rouge_l(") and result.provenance["slow"].startswith("slow(")


def test_only_corpus_idf_metrics_get_an_idf_note():
    from capeval.registry import SMALL_CORPUS, idf_note

    result = capeval.evaluate(PREDICTIONS, REFERENCES, metrics=["bleu", "rouge", "cider", "cider:idf=flickr8k"])
    assert result.notes == {
        "cider": "IDF from the references of the 2 scored captions (too few for meaningful weights: try idf=flickr8k)",
        "cider(idf=flickr8k)": "IDF from the Flickr8k references shipped with capeval"}
    assert idf_note(resolve("bleu"), 5) == idf_note(resolve("rouge"), 5) == idf_note(CiderScorer()) == ""
    assert idf_note(CiderScorer(), SMALL_CORPUS) == f"IDF from the references of the {SMALL_CORPUS} scored captions"
    assert idf_note(CiderScorer(), SMALL_CORPUS - 1).endswith("(too few for meaningful weights: try idf=flickr8k)")


# --------------------------------------------------------------------------- plugins, from fresh processes

PLUGINS = {
    "broken": "broken_metric:BrokenScorer",          # its module fails to import
    "shell": "marker_plugin:touch",                   # a function, not a scorer class: must never be called
    "../../escape": "good_plugin:GoodScorer",         # a name that is no metric name
    "good": "good_plugin:GoodScorer",
}
MODULES = {
    "broken_metric.py": "raise ImportError('this plugin needs a package that is not installed')\n",
    "marker_plugin.py": """
        import os
        def touch(**options):
            open(os.environ["PLUGIN_MARKER"], "w").write(repr(options))
    """,
    "good_plugin.py": """
        from capeval.scoring.protocol import CaptionScorer, Scores
        from capeval.declaration import OfflineRun
        class GoodScorer(CaptionScorer):
            metric, title, name, primary = "good", "Good", "good", "good"
            offline_runs = (OfflineRun("Good"),)
            def score(self, predictions, references=None, **inputs):
                return Scores({"good": [1.0] * len(predictions)})
            def options(self):
                return {}
    """,
}


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory):
    """A folder on the import path holding plugin modules and a distribution declaring their entry points."""
    site = tmp_path_factory.mktemp("site")
    for name, source in MODULES.items():
        (site / name).write_text(textwrap.dedent(source))
    info = site / "capeval_test_plugins-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: capeval-test-plugins\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[capeval.scorers]\n" + "".join(f"{k} = {v}\n" for k, v in PLUGINS.items()))
    return site


def run_with_plugins(site, tmp_path, *command):
    env = {**ENV, "PYTHONPATH": str(site), "CAPEVAL_CACHE": str(tmp_path / "cache"), "PLUGIN_MARKER": str(tmp_path / "called")}
    return subprocess.run([sys.executable, *command], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)


@pytest.mark.slow
def test_broken_plugins_are_skipped_with_one_warning_each(plugin_site, tmp_path):
    code = textwrap.dedent("""
        import json, warnings
        import capeval
        from capeval.evaluation import metric_runs
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            offline = [run.label for run in metric_runs("offline")]  # what plain capeval.evaluate(P, R) runs
            result = capeval.evaluate(["a dog runs"], [["a dog runs fast"]], metrics=["good", "rouge"])
        print(json.dumps({"metrics": sorted(capeval.METRICS), "offline": offline, "corpus": result.corpus,
                          "warnings": [str(w.message) for w in caught]}))
    """)
    done = run_with_plugins(plugin_site, tmp_path, "-c", code)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    assert "good" in out["metrics"] and not {"broken", "shell", "../../escape"} & set(out["metrics"])
    assert "Good" in out["offline"] and "ROUGE-L" in out["offline"]
    assert out["corpus"]["good"] == 1.0 and "rouge_l" in out["corpus"]
    warned = sorted(out["warnings"])
    assert len(warned) == 3, warned
    assert "entry point '../../escape' (good_plugin:GoodScorer) is left out: '../../escape' is not a metric name" in warned[0]
    assert "entry point 'broken' (broken_metric:BrokenScorer) is left out: ImportError: this plugin needs" in warned[1]
    assert "entry point 'shell' (marker_plugin:touch) is left out: marker_plugin:touch is a function, not a capeval" in warned[2]
    assert not (tmp_path / "called").exists()


def test_only_asking_for_a_broken_plugin_fails(plugin_site, tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"candidate": "a dog runs", "references": ["a dog runs fast"]}))
    done = run_with_plugins(plugin_site, tmp_path, "-m", "capeval.cli", "score", "--input", str(rows), "--metric", "rouge")
    assert done.returncode == 0 and "- rouge: 0.8356 corpus = per-caption mean" in done.stdout, done.stderr
    assert "Traceback" not in done.stderr
    for name, message in [("broken", "ImportError: this plugin needs a package"), ("shell", "is a function, not a capeval")]:
        done = run_with_plugins(plugin_site, tmp_path, "-m", "capeval.cli", "score", "--input", str(rows), "--metric",
                                f"{name}:cmd=1")
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert f"--metric {name}:cmd=1: the capeval.scorers entry point {name!r}" in done.stderr and message in done.stderr
    assert not (tmp_path / "called").exists()


def test_a_plugin_name_never_becomes_a_path(plugin_site, tmp_path):
    code = ("import capeval.registry, json\n"
            "try:\n    capeval.registry.module_path('../../escape')\nexcept ValueError as error:\n    print(json.dumps(str(error)))")
    done = run_with_plugins(plugin_site, tmp_path, "-c", code)
    assert done.returncode == 0, done.stderr
    assert "is not a metric name" in json.loads(done.stdout)
    assert not (tmp_path / "escape").exists()  # cache/metric_modules/../../escape


def test_registry_names_are_metric_names():
    assert all(name.isidentifier() and name.islower() for name in METRICS)


def test_the_registry_leaves_out_plugins_that_give_no_scorer(monkeypatch):
    """The same as the fresh-process tests above, in this process: which plugins are kept, the warnings, the errors."""
    import warnings

    from capeval import registry

    plugins = {"kept": registry.MetricEntry("kept", "capeval.scoring.coco:RougeScorer"),
               "missing": registry.MetricEntry("missing", "no_such_module_here:Scorer"),
               "function": registry.MetricEntry("function", "os:getcwd"),
               "no_class": registry.MetricEntry("no_class", "capeval.scoring.coco"),
               "Upper": registry.MetricEntry("Upper", "capeval.scoring.coco:RougeScorer"),
               "bleu": registry.MetricEntry("bleu", "capeval.scoring.coco:RougeScorer")}
    monkeypatch.setattr(registry, "plugin_metrics", lambda: plugins)
    fresh = registry.Registry()
    monkeypatch.setattr(registry, "METRICS", fresh)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        names = list(fresh)
    assert "kept" in names and fresh["kept"].folder is None and fresh["bleu"].scorer == "capeval.scoring.coco:BleuScorer"
    assert not {"missing", "function", "no_class", "Upper"} & set(names)
    assert sorted(str(w.message) for w in caught) == sorted([
        "the capeval.scorers entry point 'missing' (no_such_module_here:Scorer) is left out: ModuleNotFoundError: No module "
        "named 'no_such_module_here'",
        "the capeval.scorers entry point 'function' (os:getcwd) is left out: os:getcwd is a builtin_function_or_method, not "
        "a capeval CaptionScorer class",
        "the capeval.scorers entry point 'no_class' (capeval.scoring.coco) is left out: 'capeval.scoring.coco' is not "
        "'package.module:ScorerClass'",
        "the capeval.scorers entry point 'Upper' (capeval.scoring.coco:RougeScorer) is left out: 'Upper' is not a metric "
        "name (lower-case letters, digits and _)",
        "the capeval.scorers entry point 'bleu' (capeval.scoring.coco:RougeScorer) is shadowed by capeval's own metric of "
        "that name"])
    assert len(fresh) == len(names) and set(fresh.broken) == {"missing", "function", "no_class", "Upper"}
    with pytest.raises(ValueError, match="entry point 'function' .* is left out: os:getcwd is a builtin"):
        registry.build_scorer("function", {"x": 1})
    assert registry.build_scorer("kept", {}).metric == "rouge"
    with pytest.raises(ValueError, match="no capeval metric 'kep' \\(did you mean 'kept'\\?\\)"):
        registry.entry("kep")


def test_a_long_bad_spec_is_cut_in_the_message():
    with pytest.raises(ValueError) as raised:
        resolve(["bleu" * 100])
    assert len(str(raised.value)) == 200 and str(raised.value).startswith("a metric spec is a name")


def test_a_module_given_as_a_spec_runs_its_own_scorer():
    from capeval.registry import StandaloneMetric

    module = StandaloneMetric("bleu", order=2)
    assert resolve(module) is module.scorer
    (run,) = metric_runs(module)
    assert run.scorer is module.scorer and run.label == "bleu"

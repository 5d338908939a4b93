"""The judges in ``capeval benchmark`` and the harness, like every metric: CLAIR and G-VEval against the loopback
OpenAI-compatible server (tests/fixtures/judge_server.py), FLEUR and EXPERT on the scripted tiny Llava, all on the
Polaris stand-in (tests/fixtures/released.py: six rows with their images)."""

import pytest

import capeval
from capeval.benchmarks import run_benchmark
from capeval.benchmarks.stats import kendall_both
from capeval.cli import main
from fixtures.released import POLARIS, write_polaris

HUMAN = [score for _, _, score, _ in POLARIS]


@pytest.fixture
def polaris(tmp_path):
    write_polaris(tmp_path / "data" / "polaris", images=True)
    return tmp_path / "data"


def benchmark(capsys, data, *specs):
    code = main(["benchmark", *(arg for spec in specs for arg in ("--metric", spec)), "--dataset", "polaris",
                 "--data", str(data), "--samples", "0"])
    out, err = capsys.readouterr()
    return code, out, err


def human_row(out: str, label: str) -> list[str]:
    (line,) = [line for line in out.splitlines() if line.startswith(f"| {label}")]
    return [cell.strip() for cell in line.strip("|").split("|")[1:]]


@pytest.mark.parametrize("metric", ["clair", "g_veval"])
def test_server_judges_run_in_capeval_benchmark_and_a_rerun_sends_nothing(metric, judge_server, polaris, capsys):
    spec = f"{metric}:base_url={judge_server.url}"
    code, out, _ = benchmark(capsys, polaris, spec)
    scores = capeval.resolve(spec).score([mt for mt, *_ in POLARIS], [refs for _, refs, *_ in POLARIS])[metric]
    expected = kendall_both(scores, HUMAN)
    assert code == 0 and human_row(out, metric) == [f"{expected['b']:.3f}", f"{expected['c']:.3f}"]
    assert len(judge_server.requests) == len(POLARIS)  # the direct call above was answered from the cache
    assert benchmark(capsys, polaris, spec)[1] == out and len(judge_server.requests) == len(POLARIS)


@pytest.mark.parametrize("metric", ["clair", "g_veval"])
def test_a_server_judge_without_a_server_is_one_line(metric, polaris, capsys):
    code, out, err = benchmark(capsys, polaris, metric)
    assert code == 2 and out == ""
    assert err == (f"capeval benchmark: {metric} needs a judge server: pass base_url=... (an OpenAI-compatible endpoint, "
                   "e.g. a local vLLM's http://127.0.0.1:8000/v1); nothing is sent anywhere without one\n")


@pytest.mark.slow
@pytest.mark.models
@pytest.mark.usefixtures("llava_answer_cache")
def test_llava_judges_run_in_the_harness_on_the_benchmarks_images(scripted_llava, polaris, capsys):
    fleur = capeval.resolve(f"fleur:model={scripted_llava},device=cpu")
    expert = capeval.resolve(("expert", {"model": scripted_llava, "adapter": None, "device": "cpu"}))
    images = [str(polaris / "polaris" / "images" / image) for *_, image in POLARIS]
    for scorer in (fleur, expert):
        result = run_benchmark(scorer, "polaris", source=str(polaris / "polaris"), num_samples=0, verbose=False)
        scores = scorer.score([mt for mt, *_ in POLARIS], images=images)[scorer.primary]
        expected = kendall_both(scores, HUMAN)
        assert {row.statistic: row.value for row in result.rows} == pytest.approx({"tau-b": expected["b"],
                                                                                  "tau-c": expected["c"]})
    code, out, _ = benchmark(capsys, polaris, f"fleur:model={scripted_llava},device=cpu")
    assert code == 0 and len(human_row(out, "fleur")) == 2

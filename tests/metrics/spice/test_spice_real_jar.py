"""SPICE with the real JVM and jar. Without CoreNLP (here: it cannot be fetched) the command capeval builds still runs
for real up to the jar's parser, through ``SpiceJson.java`` on Java 15+; where ``capeval download spice`` has
installed CoreNLP, real captions are scored."""

import math
import shutil

import pytest

from capeval.models import ModelUnavailableError
from capeval.scoring import spice
from capeval.scoring.spice import SpiceJarError, SpiceScorer

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("java") is None, reason="needs a Java runtime (apt-get install default-jre-headless)")]


@pytest.fixture
def placeholder_corenlp(tmp_path, monkeypatch):
    """Empty jars where CoreNLP's go, in a fresh cache: the JVM starts, and the jar finds no CoreNLP class."""
    pytest.importorskip("pycocoevalcap")
    monkeypatch.setenv("CAPEVAL_CACHE", str(tmp_path))
    spice.corenlp_dir().mkdir(parents=True)
    for name in spice.CORENLP_JARS:
        (spice.corenlp_dir() / name).write_bytes(b"PK\x05\x06" + bytes(18))


def test_the_real_jvm_runs_the_command_up_to_the_jars_parser(placeholder_corenlp):
    """The heap, ``--add-opens``, the class path and (Java 15+) SpiceJson.java compiled and reaching SPICE's scorer
    by reflection: the first thing that fails is the parser's missing CoreNLP class, reported as such, not retried."""
    with pytest.raises(SpiceJarError) as raised:
        SpiceScorer(cache=False).score(["a dog runs on the grass"], [["a dog running on grass"]])
    message = str(raised.value)
    assert "edu.stanford.nlp.semgraph.semgrex.SemgrexPattern" in message and "capeval download spice" in message
    assert not raised.value.retry
    if spice.java_version(shutil.which("java")) >= spice.NO_JAVASCRIPT_FROM:
        assert "jdk.compiler" not in message  # SpiceJson.java compiled in source-file mode


def installed_corenlp():
    try:
        jars = spice.corenlp_jars()
    except ModelUnavailableError:
        pytest.skip("Stanford CoreNLP 3.6.0 is not installed (`capeval download spice`); it cannot be fetched on this machine")
    if any(jar.stat().st_size < 2**20 for jar in jars):
        pytest.skip("the installed CoreNLP jars are placeholders")
    pytest.importorskip("pycocoevalcap")


def test_real_captions_with_corenlp():
    installed_corenlp()
    predictions = ["a cat sleeps on a sofa", "a red car", "two dogs play on the beach"]
    references = [["a cat sleeps on a sofa"], ["a cat sleeps on a sofa"], ["two dogs play on the beach", "dogs on a beach"]]
    scores = SpiceScorer(cache=False).score(predictions, references)
    assert scores["spice"][0] == scores["spice_precision"][0] == scores["spice_recall"][0] == 1.0  # the same parse on both sides
    assert scores["spice"][1] == 0.0 and math.isnan(scores["spice_color"][1])  # no colour in its reference
    assert 0.0 < scores["spice"][2] <= 1.0 and scores["spice_count"][2] == 1.0
    assert scores.corpus["spice"] == pytest.approx(sum(scores["spice"]) / 3)

"""METEOR's jar: a failure inside the Java call (a bad line, a crash, a timeout, Ctrl-C) leaves the next call and
the interpreter's exit working; what reaches the jar is one clean line; over-long sentences are refused."""

import glob
import json
import os
import signal
import subprocess
import textwrap
import time

import pytest

from capeval.scoring.meteor_jar import MAX_WORDS, MeteorError, check_lengths, meteor_line

from fixtures import LIBRARY, NEEDS_JAVA, PYTHON

PREDICTIONS = ["a dog runs on the grass", "two cats sleep on a red sofa"]
REFERENCES = [["a dog running on grass", "the dog runs"], ["a cat sleeping on a couch", "two cats on a sofa"]]


@pytest.mark.parametrize("text, line", [
    ("a dog\nruns", "a dog runs"),
    ("a dog\r\nruns\u2028fast", "a dog runs fast"),
    ("a\x00dog\x1b runs\t", "a dog runs"),
    ("a zero\u200bwidth join\u200d", "a zerowidth join"),
    ("SCORE ||| a dog", "SCORE a dog"),
    ("  a   dog  ", "a dog"),
])
def test_every_sentence_reaches_the_jar_as_one_clean_line(text, line):
    assert meteor_line(text) == line


def test_over_long_sentences_are_refused_by_name():
    check_lengths(["a " * MAX_WORDS], [["a dog"]])
    with pytest.raises(ValueError, match=r"references\[0\]\[1\] has 10000 words.*at most"):
        check_lengths(["a dog"], [["a dog", "word " * 10_000]])


def test_newlines_and_control_characters_score_like_spaces(meteor_scorer):
    raw = meteor_scorer(tokenizer="none")
    clean = raw.score(["a dog runs on the grass"], [["a dog running on grass"]])
    dirty = raw.score(["a dog\nruns on\x00the grass"], [["a dog running\r\non grass|||"]])
    assert dirty["meteor"] == pytest.approx(clean["meteor"]) and 0 < clean["meteor"][0] < 1
    assert raw.score(["dogs run"], [["a cat sleeps"]])["meteor"] == [0.0]


def test_identical_scores_for_repeated_calls_and_the_module(meteor_scorer):
    scorer = meteor_scorer()
    first, second = scorer.score(PREDICTIONS, REFERENCES), scorer.score(PREDICTIONS, REFERENCES)
    assert first["meteor"] == second["meteor"] and first.corpus == second.corpus
    # pycocoevalcap's values on these captions (its own wrapper, same jar)
    assert first["meteor"] == pytest.approx([0.4398732861414338, 0.41661066284685405], abs=1e-12)
    assert first.corpus["meteor"] == pytest.approx(0.4266123347277777, abs=1e-12)


@pytest.mark.slow
def test_a_crashed_or_timed_out_jvm_is_replaced_on_the_next_call(meteor_process, meteor_scorer):
    scorer = meteor_scorer()
    expected = scorer.score(PREDICTIONS, REFERENCES)["meteor"]
    meteor_process._process.kill()  # the JVM dies between calls (out of memory, killed)
    meteor_process._process.wait()
    assert scorer.score(PREDICTIONS, REFERENCES)["meteor"] == expected
    timeout = meteor_process.timeout
    meteor_process.timeout = 1.0
    os.kill(meteor_process._process.pid, signal.SIGSTOP)  # a hung JVM: the watchdog kills it once an answer is overdue
    try:
        with pytest.raises(MeteorError, match="did not answer within the timeout"):
            scorer.score(PREDICTIONS, REFERENCES)
    finally:
        meteor_process.timeout = timeout
    assert meteor_process._process is None
    assert scorer.score(PREDICTIONS, REFERENCES)["meteor"] == expected


SCRIPT = textwrap.dedent("""
    import sys
    from capeval.scoring.coco import MeteorScorer
    from capeval.scoring.meteor_jar import MeteorError
    scorer = MeteorScorer(engine="jar")
    jar = scorer.jar()
    jar.startup_timeout, jar.timeout = 0.0, 0.5   # the first answer is overdue: the JVM is killed mid-call
    try:
        scorer.score(["a dog"], [["a dog runs"]])
    except MeteorError as error:
        print("failed:", error, flush=True)
    jar.startup_timeout, jar.timeout = 300.0, 120.0
    print("scored:", scorer.score(["a dog runs"], [["a dog runs"]])["meteor"], flush=True)
""")


@pytest.mark.slow
@NEEDS_JAVA
def test_after_a_failed_call_the_next_call_and_the_interpreter_exit_work():
    pytest.importorskip("pycocoevalcap")
    env = {**os.environ, "PYTHONPATH": str(LIBRARY)}
    # A regression (a lock left held, a JVM nobody kills) fails on the timeout instead of hanging CI.
    done = subprocess.run([PYTHON, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    assert "failed: the METEOR jar did not answer within the timeout" in done.stdout
    assert "scored: [1.0]" in done.stdout or "scored: [0.99" in done.stdout


def java_in_session(session: int) -> bool:
    """Whether a java process runs in the session ``session`` (Linux's /proc; elsewhere: after a second)."""
    if not os.path.isdir("/proc/self"):
        time.sleep(1.0)
        return True
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError:
            continue
        name, fields = text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 2:].split()
        if name == "java" and int(fields[3]) == session:
            return True
    return False


@pytest.mark.slow
@NEEDS_JAVA
def test_ctrl_c_during_capeval_score_prints_one_line_and_exits(tmp_path):
    pytest.importorskip("pycocoevalcap")
    env = {**os.environ, "PYTHONPATH": str(LIBRARY)}
    # A terminal's Ctrl-C signals the whole foreground process group: Python and its JVM.
    # Enough distinct captions that the jar is still scoring when the signal comes (the bundled sample can finish first).
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"candidate": f"a dog number {index} runs on the grass",
                                        "references": [f"the dog {index} is running", "a dog runs on grass"]}) + "\n"
                            for index in range(20_000)), encoding="utf-8")
    # A terminal leaves SIGINT at its default; a shell's background job (how CI may be started) ignores it, and an
    # ignored SIGINT is inherited: give the command a terminal's disposition.
    run = subprocess.Popen([PYTHON, "-m", "capeval.cli", "score", "--input", str(rows), "--metric", "meteor:engine=jar"],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert run.stdout.readline().startswith("Scoring")
    deadline = time.monotonic() + 60
    while not java_in_session(run.pid) and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # the signal comes while the JVM scores
    os.killpg(run.pid, signal.SIGINT)
    try:
        out, err = run.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGKILL)
        raise
    assert run.returncode == 130
    assert err.strip() == "capeval score: interrupted", err

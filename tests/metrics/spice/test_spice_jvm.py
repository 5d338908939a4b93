"""Everything SPICE's scorer decides before and after the JVM, as pure functions: the Java version, the heap, the
command for each Java version, what a failed run means, the jar's output, the cache and the chunking."""

import json
import math
import sqlite3
from pathlib import Path

import pytest

from capeval.scoring import spice
from capeval.scoring.spice import (COLUMNS, SpiceJarError, caption_row, heap_megabytes, item_key, jvm_command, jvm_failure,
                                   mean_defined, parse_java_version, parse_output, score_in_chunks)

from fixtures import spice as spice_fixtures

NAN = float("nan")


@pytest.mark.parametrize("text, version", [
    ('openjdk version "17.0.15" 2025-04-15\nOpenJDK Runtime Environment', 17),
    ('java version "1.8.0_292"\nJava(TM) SE Runtime Environment', 8),
    ('openjdk version "1.7.0_95"', 7),
    ('openjdk version "21" 2023-09-19', 21),
    ('openjdk version "11.0.2-ea" 2019-01-15', 11),
    ('Picked up JAVA_TOOL_OPTIONS: -Xss2m\nopenjdk version "16.0.1"', 16),
])
def test_the_java_version_is_read_from_java_version(text, version):
    assert parse_java_version(text) == version


def test_an_unreadable_java_version_is_an_error():
    with pytest.raises(RuntimeError, match="could not read the Java version"):
        parse_java_version("bash: java: command not found")


def test_the_version_is_asked_once_per_executable(fake_java):
    import shutil

    log = fake_java("11.0.2")
    java = shutil.which("java")
    assert spice.java_version(java) == spice.java_version(java) == 11
    assert spice_fixtures.logged(log) == [{"args": ["-version"], "captions": None}]


@pytest.mark.parametrize("memory, heap", [(None, 8192), (64 * 2**30, 8192), (16 * 2**30, 8192), (12 * 2**30, 6144),
                                          (6 * 2**30, 3072), (2 * 2**30, 2048), (512 * 2**20, 2048)])
def test_the_heap_is_half_the_memory_between_2_and_8_gb(memory, heap):
    assert heap_megabytes(memory) == heap


def test_the_machine_memory_is_the_smaller_of_the_machine_and_its_cgroup(monkeypatch, tmp_path):
    monkeypatch.setattr(spice.os, "sysconf", lambda name: {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": 2**20}[name])  # 4 GiB
    limits = {"max": None, str(2**30): 2**30, str(2**40): 4 * 2**30}
    real_path = Path
    for text, expected in limits.items():
        limit = tmp_path / "memory.max"
        limit.write_text(text + "\n")
        monkeypatch.setattr(spice, "Path", lambda name, limit=limit: limit if name == "/sys/fs/cgroup/memory.max" else real_path(name))
        assert spice.machine_memory() == (expected or 4 * 2**30)
    monkeypatch.setattr(spice, "Path", lambda name: tmp_path / "absent")
    assert spice.machine_memory() == 4 * 2**30

    def no_sysconf(name):
        raise ValueError(name)

    monkeypatch.setattr(spice.os, "sysconf", no_sysconf)
    assert spice.machine_memory() is None


CLASSPATH = [Path("/x/spice-1.0.jar"), Path("/c/stanford-corenlp-3.6.0.jar"), Path("/c/stanford-corenlp-3.6.0-models.jar")]


@pytest.mark.parametrize("version, opens, main", [(8, False, "edu.anu.spice.SpiceScorer"), (14, False, "edu.anu.spice.SpiceScorer"),
                                                  (15, False, "SpiceJson.java"), (16, True, "SpiceJson.java"), (21, True, "SpiceJson.java")])
def test_the_command_for_each_java_version(version, opens, main):
    command = jvm_command("/usr/bin/java", version, 3072, CLASSPATH, Path("in.json"), Path("out.json"), synonyms=True)
    assert command[:2] == ["/usr/bin/java", "-Xmx3072m"]
    added = [arg for arg in command if arg.startswith("--add-opens")]
    assert bool(added) == opens
    if opens:
        assert added == [f"--add-opens={package}=ALL-UNNAMED" for package in spice.OPENED_PACKAGES]
        assert "java.base/java.lang" in spice.OPENED_PACKAGES and "java.base/java.util" in spice.OPENED_PACKAGES
    cp = command.index("-cp")
    assert command[cp + 1] == ":".join(map(str, CLASSPATH))
    assert Path(command[cp + 2]).name == main
    assert command[cp + 3:] == ["in.json", "-out", "out.json", "-subset", "-silent"]


def test_no_synonyms_passes_nosynsets_and_no_cache_option_reaches_the_jar():
    command = jvm_command("java", 17, 2048, CLASSPATH, Path("in.json"), Path("out.json"), synonyms=False)
    assert command[-1] == "-noSynsets" and "-cache" not in command and "-threads" not in command


def test_the_json_writer_ships_with_capeval_and_needs_no_javascript_engine():
    source = spice.json_writer().read_text()
    assert spice.json_writer().name == "SpiceJson.java" and "public class SpiceJson" in source
    assert "ScriptEngine" not in source and "toJSONString" in source


OOM = ('Parsing reference captions\nException in thread "main" java.lang.OutOfMemoryError: Java heap space\n'
       "\tat java.util.Arrays.copyOf(Arrays.java:3332)\n")
PARSER = ("Error: Could not score batched file input:\njava.lang.NullPointerException\n"
          "\tat edu.anu.spice.SpiceParser.parseAnnotation(SpiceParser.java:312)\n")
NO_CORENLP = ('Exception in thread "main" java.lang.NoClassDefFoundError: edu/stanford/nlp/semgraph/semgrex/SemgrexPattern\n'
              "\tat edu.anu.spice.SpiceParser.<clinit>(SpiceParser.java:64)\n\tat SpiceJson.main(SpiceJson.java:34)\n"
              "Caused by: java.lang.ClassNotFoundException: edu.stanford.nlp.semgraph.semgrex.SemgrexPattern\n\t... 9 more\n")
NO_COMPILER = ("Error: Could not find or load main class SpiceJson.java\n"
               "Caused by: java.lang.ClassNotFoundException: SpiceJson.java\n")


def test_out_of_memory_is_retried_smaller_and_says_the_heap():
    error = jvm_failure(1, OOM, 4096)
    assert error.retry and error.out_of_memory
    assert str(error) == ('the SPICE jar failed (exit status 1): Exception in thread "main" java.lang.OutOfMemoryError: '
                          "Java heap space (with a 4096 MB heap)")


def test_a_parser_error_is_retried_and_named_by_the_line_after_the_jars_own():
    error = jvm_failure(1, PARSER, 4096)
    assert error.retry and not error.out_of_memory
    assert str(error) == "the SPICE jar failed (exit status 1): java.lang.NullPointerException"


def test_the_reason_is_the_first_error_line_not_a_stack_frame_or_a_later_line():
    stderr = ("Parsing reference captions\njava.lang.IllegalStateException: no sentence\n"
              "\tat edu.anu.spice.SpiceParser.handleError(SpiceParser.java:9)\nThreads stopped\n")
    assert str(jvm_failure(1, stderr, 2048)).endswith(": java.lang.IllegalStateException: no sentence")
    assert str(jvm_failure(1, "Parsing reference captions\n\tat java.lang.Thread.run(Thread.java:750)\n", 2048)).endswith(
        ": Parsing reference captions")


def test_a_killed_jvm_with_nothing_said_is_retried():
    error = jvm_failure(-9, "", 2048)
    assert error.retry and str(error) == "the SPICE jar failed (exit status -9): no output"
    assert str(jvm_failure(1, "Parsing reference captions\n", 2048)).endswith(": Parsing reference captions")


def test_missing_corenlp_classes_are_not_retried_and_say_what_to_do():
    error = jvm_failure(1, NO_CORENLP, 4096)
    assert not error.retry
    assert "Caused by: java.lang.ClassNotFoundException: edu.stanford.nlp.semgraph.semgrex.SemgrexPattern" in str(error)
    assert "look incomplete" in str(error) and "capeval download spice" in str(error)


@pytest.mark.parametrize("stderr", ["java.lang.NoClassDefFoundError: edu/stanford/nlp/pipeline/StanfordCoreNLP",
                                    "Caused by: java.lang.ClassNotFoundException: edu.stanford.nlp.ling.IndexedWord"])
def test_either_missing_class_message_points_at_corenlp(stderr):
    assert "look incomplete" in str(jvm_failure(1, stderr, 4096))
    assert "look incomplete" not in str(jvm_failure(1, "java.lang.NoClassDefFoundError: org/json/simple/JSONAware", 4096))


def test_a_jre_without_the_compiler_says_to_install_a_jdk():
    error = jvm_failure(1, NO_COMPILER, 4096)
    assert not error.retry and "jdk.compiler" in str(error) and "Java 8-14" in str(error)
    assert "jdk.compiler" not in str(jvm_failure(1, NO_CORENLP, 4096))  # SpiceJson.java ran: its frame is in the trace
    assert "jdk.compiler" not in str(jvm_failure(1, "Error: Could not find or load main class edu.anu.spice.SpiceScorer", 4096))


@pytest.mark.parametrize("stderr", ["Error: Could not create the Java Virtual Machine.", "Unrecognized option: --add-opens",
                                    "Invalid maximum heap size: -Xmx9999999m", 'Unknown option "-cache"',
                                    "java.lang.UnsupportedClassVersionError: edu/anu/spice/SpiceScorer",
                                    "java.lang.ExceptionInInitializerError", "error: compilation failed"])
def test_a_jvm_that_cannot_run_the_jar_is_not_retried(stderr):
    assert not jvm_failure(1, stderr, 2048).retry


def recorded_output(count=3):
    return json.loads((spice_fixtures.ASSETS / "recorded_synsets.json").read_text())[:count]


def test_the_output_is_read_in_image_id_order():
    items = recorded_output()
    shuffled = json.dumps([items[2], items[0], items[1]], indent=2)
    assert parse_output(shuffled, 3) == [item["scores"] for item in items]


@pytest.mark.parametrize("text, message", [
    ("", "no readable JSON"),
    ('{"image_id": 0}', "not a list"),
    ('[{"image_id": 0, "scores": 1}]', "not a list"),
    ('[{"image_id": 0, "scores": {}}, {"image_id": 2, "scores": {}}]', r"image ids \[0, 2\], not 0..1"),
    ('[{"image_id": 0, "scores": {}}]', r"image ids \[0\], not 0..1"),
    ('[{"image_id": 0, "scores": {}}, {"image_id": 0, "scores": {}}]', r"image ids \[0\], not 0..1"),
])
def test_an_unexpected_output_is_an_error(text, message):
    with pytest.raises(ValueError, match=message):
        parse_output(text, 2)


def test_a_caption_row_follows_the_columns_and_reads_null_as_nan():
    row = caption_row(recorded_output(1)[0]["scores"])
    assert len(row) == len(COLUMNS) == 21
    assert COLUMNS[:6] == ("spice", "spice_precision", "spice_recall", "spice_object", "spice_object_precision", "spice_object_recall")
    values = dict(zip(COLUMNS, row))
    assert values["spice"] == pytest.approx(8 / 9) and values["spice_precision"] == 1.0 and values["spice_recall"] == 0.8
    assert values["spice_attribute"] == pytest.approx(2 / 3) and values["spice_color"] == 0.0
    assert math.isnan(values["spice_count"]) and math.isnan(values["spice_size_recall"])  # the jar's null
    assert all(math.isnan(value) for value in caption_row(None))


def test_the_mean_skips_undefined_values_as_spice_does():
    assert mean_defined([0.2, NAN, 0.4]) == pytest.approx(0.3)
    assert mean_defined([1.0]) == 1.0
    assert math.isnan(mean_defined([NAN, NAN]))


def test_the_cache_key_is_the_exact_text_and_what_shapes_the_result():
    key = item_key("a dog runs", ["a dog", "the dog runs"], True)
    assert key == item_key("a dog runs", ["a dog", "the dog runs"], True) and len(key) == 64
    others = [item_key("a dog runs ", ["a dog", "the dog runs"], True), item_key("a dog runs", ["the dog runs", "a dog"], True),
              item_key("a dog runs", ["a dog"], True), item_key("a dog runs", ["a dog", "the dog runs"], False),
              item_key("A dog runs", ["a dog", "the dog runs"], True)]
    assert len({key, *others}) == 6


def test_the_result_cache_keeps_results_between_instances(tmp_path):
    cache = spice.ResultCache(tmp_path / "spice" / "results.sqlite")
    assert cache.get(["a", "b"]) == {}
    records = {f"key{i}": {"All": {"f": i / 1000}} for i in range(2000)}  # more keys than one SELECT takes
    cache.put(records)
    again = spice.ResultCache(tmp_path / "spice" / "results.sqlite")
    assert again.get([*records, "absent", "key3"]) == records
    cache.put({"key3": {"All": {"f": 0.5}}})
    assert again.get(["key3"]) == {"key3": {"All": {"f": 0.5}}}


def test_an_unreadable_cache_is_reported_and_left_alone(tmp_path):
    path = tmp_path / "results.sqlite"
    path.write_bytes(b"not a database at all" * 100)
    cache = spice.ResultCache(path)
    with pytest.warns(UserWarning, match="unreadable"):
        assert cache.get(["a"]) == {}
    with pytest.warns(UserWarning, match="cannot be written"):
        cache.put({"a": {}})
    assert path.read_bytes() == b"not a database at all" * 100


def test_the_cache_is_one_sqlite_file_in_capevals_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPEVAL_CACHE", str(tmp_path))
    spice.result_cache().put({"k": {"All": {"f": 1.0}}})
    assert spice.result_cache().path == tmp_path / "spice" / "results-1.0.sqlite"
    assert sqlite3.connect(spice.result_cache().path).execute("SELECT key FROM scores").fetchall() == [("k",)]


def chunk_runner(bad=(), limit=None, calls=None):
    """A run that fails on a chunk holding a caption in ``bad``, or longer than ``limit`` (out of memory)."""

    def run(chunk):
        if calls is not None:
            calls.append([test for test, _ in chunk])
        if limit is not None and len(chunk) > limit:
            raise SpiceJarError("out of memory", retry=True, out_of_memory=True)
        if any(test in bad for test, _ in chunk):
            raise SpiceJarError("the parser failed", retry=True)
        return [{"All": {"f": float(test)}} for test, _ in chunk]

    return run


ITEMS = [(str(i), [str(i)]) for i in range(10)]


def test_chunks_are_scored_in_order_with_their_starts():
    calls, done = [], []
    failed = score_in_chunks(ITEMS, chunk_runner(calls=calls), chunk_size=4, on_scored=lambda start, r: done.append((start, r)))
    assert failed == {} and calls == [["0", "1", "2", "3"], ["4", "5", "6", "7"], ["8", "9"]]
    assert [(start, [r["All"]["f"] for r in results]) for start, results in done] == \
        [(0, [0.0, 1.0, 2.0, 3.0]), (4, [4.0, 5.0, 6.0, 7.0]), (8, [8.0, 9.0])]


def test_a_failed_chunk_is_retried_in_halves_down_to_the_bad_caption():
    calls, done = [], []
    failed = score_in_chunks(ITEMS, chunk_runner(bad={"5"}, calls=calls), chunk_size=8, on_scored=lambda s, r: done.append(s))
    assert failed == {5: "the parser failed"}
    assert calls == [[str(i) for i in range(8)], ["0", "1", "2", "3"], ["4", "5", "6", "7"], ["4", "5"], ["4"], ["5"],
                     ["6", "7"], ["8", "9"]]
    assert done == [0, 4, 6, 8]


def test_out_of_memory_halves_until_the_chunks_fit():
    calls = []
    failed = score_in_chunks(ITEMS, chunk_runner(limit=3, calls=calls), chunk_size=10, on_scored=lambda s, r: None)
    assert failed == {} and [len(call) for call in calls] == [10, 5, 2, 3, 5, 2, 3]


def test_a_jar_that_cannot_run_stops_at_once():
    calls = []

    def run(chunk):
        calls.append(chunk)
        raise SpiceJarError("NoClassDefFoundError", retry=False)

    with pytest.raises(SpiceJarError, match="NoClassDefFoundError"):
        score_in_chunks(ITEMS, run, chunk_size=4, on_scored=lambda s, r: None)
    assert len(calls) == 1


def test_too_many_captions_failing_alone_stop_the_scoring():
    bad = {str(i) for i in range(spice.MAX_FAILED_CAPTIONS)}
    assert len(score_in_chunks(ITEMS, chunk_runner(bad=bad), chunk_size=10, on_scored=lambda s, r: None)) == spice.MAX_FAILED_CAPTIONS
    with pytest.raises(SpiceJarError, match="6 captions failed even alone") as raised:
        score_in_chunks(ITEMS, chunk_runner(bad=bad | {"9"}), chunk_size=10, on_scored=lambda s, r: None)
    assert not raised.value.retry

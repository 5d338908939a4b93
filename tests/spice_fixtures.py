"""SPICE's test double, shared by ``metrics/spice`` and the cross-metric option tests: a fake ``java`` on PATH.

Stanford CoreNLP cannot be fetched here, so the tests run everything up to the JVM for real and put this file on
PATH as ``java`` (:func:`use_fake_java`). It answers ``java -version`` with the version the test asks for, checks
that the command is what the real JVM needs for that version (heap, ``--add-opens`` from Java 16, the class path with
the jar and both CoreNLP jars, ``SpiceJson.java`` from Java 15 or the jar's main class before), logs its arguments,
and replays the jar's recorded output for the captions it gets:

``assets/spice/parsed_tuples.json`` holds ten captions with their references and the tuples SPICE's parser gives
them, written by hand (CoreNLP is what cannot run here); ``recorded_synsets.json`` and ``recorded_no_synsets.json``
are what SPICE 1.0's own classes make of those tuples (scene graphs, WordNet synonyms from the jar's METEOR, tuple
matching, F-scores, json-simple's JSON: ``null`` for NaN), written by ``assets/spice/RecordTuples.java``.

Captions the tests use to break the jar: one containing ``<crash>`` fails its run (a parser error), with
``FAKE_JAVA_MAX_ITEMS=n`` a run of more than ``n`` captions runs out of heap, and ``FAKE_JAVA_BROKEN=1`` makes every
run fail as with CoreNLP's classes missing, and ``FAKE_JAVA_NO_OUTPUT=missing`` or ``empty`` makes a run exit with
status 0 having written no output, or an empty file.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from pathlib import Path

ASSETS = Path(__file__).resolve().parent / "assets" / "spice"
#: ``(candidate, references)`` pairs the bracket and synonym cases of the option tests use (PTB-tokenized, they are
#: recorded captions; untokenized, the bracket one is recorded too).
OPTION_PREDICTIONS = ["A dog (a puppy) runs on the grass.", "a man rides a bike"]
OPTION_REFERENCES = [["A puppy running on grass.", "A small dog on the lawn."], ["a man riding a bicycle", "a person on a bicycle"]]
CORENLP_JARS = ("stanford-corenlp-3.6.0.jar", "stanford-corenlp-3.6.0-models.jar")


def parsed_items() -> list[dict]:
    return json.loads((ASSETS / "parsed_tuples.json").read_text(encoding="utf-8"))


def recorded(synonyms: bool) -> dict[tuple[str, tuple[str, ...]], dict]:
    """The jar's ``scores`` object of each recorded ``(candidate, references)``."""
    output = json.loads((ASSETS / ("recorded_synsets.json" if synonyms else "recorded_no_synsets.json")).read_text())
    by_id = {item["image_id"]: item["scores"] for item in output}
    return {(item["test"], tuple(item["refs"])): by_id[index] for index, item in enumerate(parsed_items())}


def use_fake_java(folder: Path, monkeypatch, *, version: str = "17.0.15", corenlp: bool = True) -> Path:
    """Put the fake ``java`` first on PATH and capeval's cache in ``folder`` (with placeholder CoreNLP jars unless
    ``corenlp=False``); returns the log the fake writes each command to (a JSON object a line: its arguments, and the
    candidates of the input file it got)."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    java = bin_dir / "java"
    java.write_text(f"#!/bin/sh\nexec {sys.executable} {Path(__file__).resolve()} \"$@\"\n")
    java.chmod(java.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    cache = folder / "cache"
    if corenlp:
        jars = cache / "spice" / "stanford-corenlp-3.6.0"
        jars.mkdir(parents=True, exist_ok=True)
        for name in CORENLP_JARS:
            (jars / name).write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip
    log = folder / "java.log"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CAPEVAL_CACHE", str(cache))
    monkeypatch.setenv("FAKE_JAVA_VERSION", version)
    monkeypatch.setenv("FAKE_JAVA_LOG", str(log))
    return log


def logged(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def logged_runs(log: Path) -> list[list[str]]:
    """The scoring commands the fake ran (``-version`` left out)."""
    return [entry["args"] for entry in logged(log) if entry["args"] != ["-version"]]


def logged_captions(log: Path) -> list[list[str]]:
    """The candidates each scoring run got."""
    return [entry["captions"] for entry in logged(log) if entry["args"] != ["-version"]]


def write_log(args: list[str], captions: list[str] | None) -> None:
    if os.environ.get("FAKE_JAVA_LOG"):
        with open(os.environ["FAKE_JAVA_LOG"], "a") as log:
            log.write(json.dumps({"args": args, "captions": captions}) + "\n")


def major(version: str) -> int:
    first, _, rest = version.partition(".")
    return int(rest.split(".")[0]) if first == "1" else int(first)


def command_problem(args: list[str], version: int) -> str | None:
    """What is wrong with a scoring command for this Java version, as the real JVM or jar would refuse it."""
    if not re.fullmatch(r"-Xmx\d+m", args[0]):
        return f"Invalid maximum heap size: {args[0]}"
    position = 1
    opens = [arg for arg in args if arg.startswith("--add-opens=")]
    if (version >= 16) != bool(opens):
        return f"Unrecognized option: --add-opens on Java {version}" if opens else "InaccessibleObjectException: no --add-opens"
    position += len(opens)
    if args[position] != "-cp":
        return "Error: Could not find or load main class (no -cp)"
    classpath = args[position + 1].split(os.pathsep)
    names = [Path(entry).name for entry in classpath]
    if names[:1] != ["spice-1.0.jar"] or not set(CORENLP_JARS) <= set(names) or not all(Path(p).is_file() for p in classpath):
        return f"java.lang.NoClassDefFoundError: edu/stanford/nlp/semgraph/semgrex/SemgrexPattern (class path {classpath})"
    main = args[position + 2]
    wanted = "SpiceJson.java" if version >= 15 else "edu.anu.spice.SpiceScorer"
    if (Path(main).name if version >= 15 else main) != wanted or (version >= 15 and not Path(main).is_file()):
        return f"Error: Could not find or load main class {main}"
    rest = args[position + 4:]
    if not Path(args[position + 3]).is_file() or rest[:4] != ["-out", rest[1], "-subset", "-silent"] or rest[4:] not in ([], ["-noSynsets"]):
        return f"Unknown option in {rest}"
    return None


def fake_java(args: list[str]) -> int:
    version = os.environ.get("FAKE_JAVA_VERSION", "17.0.15")
    if args == ["-version"]:
        write_log(args, None)
        print(f'openjdk version "{version}" 2025-04-15\nOpenJDK Runtime Environment (build {version}+6)', file=sys.stderr)
        return 0
    problem = command_problem(args, major(version))
    if problem:
        write_log(args, None)
        print(problem, file=sys.stderr)
        return 1
    main = args.index("-out") - 2
    source, target = Path(args[main + 1]), Path(args[main + 3])
    items = json.loads(source.read_bytes().decode("ascii"))  # capeval writes \u escapes: the jar reads the platform's charset
    write_log(args, [item["test"] for item in items])
    if os.environ.get("FAKE_JAVA_BROKEN"):
        print('Exception in thread "main" java.lang.NoClassDefFoundError: edu/stanford/nlp/semgraph/semgrex/SemgrexPattern\n'
              "Caused by: java.lang.ClassNotFoundException: edu.stanford.nlp.semgraph.semgrex.SemgrexPattern", file=sys.stderr)
        return 1
    limit = int(os.environ.get("FAKE_JAVA_MAX_ITEMS", "0"))
    if limit and len(items) > limit:
        print('Parsing reference captions\nException in thread "main" java.lang.OutOfMemoryError: Java heap space\n'
              "\tat java.util.Arrays.copyOf(Arrays.java:3332)", file=sys.stderr)
        return 1
    records = recorded("-noSynsets" not in args)
    scores = []
    for item in items:
        if "<crash>" in item["test"]:
            print("Error: Could not score batched file input:\njava.lang.IllegalArgumentException: no sentence in "
                  f"{item['test']!r}\n\tat edu.anu.spice.SpiceParser.parseAnnotation(SpiceParser.java:312)", file=sys.stderr)
            return 1
        key = (item["test"], tuple(item["refs"]))
        if key not in records:
            print(f"Error: Could not score batched file input:\njava.lang.IllegalStateException: the fake java has no "
                  f"recorded output for {key}", file=sys.stderr)
            return 1
        scores.append({"image_id": item["image_id"], "scores": records[key]})
    if os.environ.get("FAKE_JAVA_NO_OUTPUT"):
        if os.environ["FAKE_JAVA_NO_OUTPUT"] == "empty":
            target.write_text("")
        return 0
    if major(version) >= 15:  # SpiceJson.java: the scorer's own JSON, as json-simple writes it
        target.write_text(json.dumps(scores, separators=(",", ":")))
    else:  # the jar's -out: pretty-printed by JavaScript's JSON.stringify(..., null, 2)
        target.write_text(json.dumps(scores, indent=2))
    print("SPICE evaluation took: 1.234 s")
    return 0


if __name__ == "__main__":
    sys.exit(fake_java(sys.argv[1:]))

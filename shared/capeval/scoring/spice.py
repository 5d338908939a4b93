"""SPICE 1.0 (Anderson et al., ECCV 2016) through the jar pycocoevalcap ships, run so that it works where users have Java.

The numbers are the jar's: capeval writes SPICE's input file, runs ``spice-1.0.jar`` with Stanford CoreNLP 3.6.0 and
reads the jar's JSON (per caption: the F-score, precision and recall of all tuples and of the object, attribute,
relation, colour, count and size tuples). The corpus SPICE is the mean of the per-caption F-scores, as pycocoevalcap
computes it. What users of every wrapper hit, and what capeval does instead:

* CoreNLP (the release archive, several hundred MB) is fetched by ``capeval download spice`` only, with a progress
  bar and its checksum checked, into capeval's cache (never into ``site-packages``, never silently while scoring);
  scoring without it is one line saying what to run (:data:`CORENLP_MISSING`);
* Java 15 removed the JavaScript engine the jar's ``-out`` writer needs, so there the jar scores everything and then
  fails: from Java 15 on, capeval runs the jar's scorer through ``SpiceJson.java`` (shipped in
  ``capeval/resources``, run in Java's source-file mode), which writes the same JSON without it;
  from Java 16 on the JVM also gets ``--add-opens`` for the serialisation libraries in the jar's class path;
* no LMDB cache (``-cache``: its native library fails on macOS/ARM, and on Java 16+): capeval keeps each caption's
  result in a plain SQLite file in its cache, keyed by the exact text sent to the jar and SPICE's version;
* the heap is sized from the machine (:func:`heap_megabytes`) instead of a fixed ``-Xmx8G``, and the captions go to
  the jar in chunks: a chunk that fails (out of memory, a caption the parser chokes on) is retried in halves, so
  only a caption that fails alone is left out, as NaN with a warning naming it, and the rest of the table stands.

>>> parse_java_version('openjdk version "17.0.15" 2025-04-15'), parse_java_version('java version "1.8.0_292"')
(17, 8)
>>> heap_megabytes(64 * 2**30), heap_megabytes(6 * 2**30), heap_megabytes(None)
(8192, 3072, 8192)
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
import warnings
import zipfile
from collections import deque
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Annotated, Callable, Sequence

from tqdm.auto import tqdm

from ..atomic import partial_file
from ..checkpoints import copy_with_progress, file_digest, is_url, resolve_checkpoint
from ..declaration import MERGE_ALL, OfflineRun, Opt
from ..models import ModelUnavailableError
from ..needs import JavaRuntime, UrlFile
from ..progress import SHOW_AFTER_SECONDS, progress_enabled
from ..settings import cache_dir
from .coco import CocoScorer, Tokenizer
from .protocol import Scores

SPICE_VERSION = "1.0"
#: Stanford CoreNLP 3.6.0 as its release page links it (the archive SPICE's own download script fetches).
CORENLP_URL = "https://nlp.stanford.edu/software/stanford-corenlp-full-2015-12-09.zip"
#: Stanford publishes no checksum for the archive. This SHA-1 is the one an independent installer pins for the same
#: archive (DeepDive's CoreNLP installer verifies the download against it); capeval checks it on every install.
CORENLP_SHA1 = "55c9d653eb30ace7d5a60eb3138e424f9442e539"
#: The two jars SPICE needs, and where the archive holds them.
CORENLP_JARS = {name: f"stanford-corenlp-full-2015-12-09/{name}"
                for name in ("stanford-corenlp-3.6.0.jar", "stanford-corenlp-3.6.0-models.jar")}
CORENLP_MISSING = ("SPICE needs Stanford CoreNLP 3.6.0, which is not installed: run `capeval download spice` "
                   "(a download of several hundred MB, once; `--from FILE` installs a stanford-corenlp-full-2015-12-09.zip you have)")
JAVA_MISSING = ("SPICE runs the Java jar of pycocoevalcap and needs a Java runtime, Java 8 or later, on PATH: install one "
                "(e.g. apt-get install default-jre-headless) or leave SPICE out")

#: The JVM version from which the jar's ``-out`` writer fails (no JavaScript engine) and ``SpiceJson.java`` writes instead.
NO_JAVASCRIPT_FROM = 15
#: The JVM version from which deep reflection into the JDK needs ``--add-opens``.
ADD_OPENS_FROM = 16
#: What the JVM opens to the jar's class path on Java 16+: what its serialisation libraries (fst, used by the LMDB
#: cache, and Guava) reach into by reflection.
OPENED_PACKAGES = ("java.base/java.lang", "java.base/java.lang.reflect", "java.base/java.io", "java.base/java.math",
                   "java.base/java.net", "java.base/java.nio", "java.base/java.text", "java.base/java.util",
                   "java.base/java.util.concurrent")
#: SPICE's recommended heap (its README runs ``-Xmx8G``), and the least capeval gives it.
MAX_HEAP_MB, MIN_HEAP_MB = 8192, 2048
#: Captions per JVM run: each run loads CoreNLP's models first, so runs are few and large.
CHUNK_CAPTIONS = 5000
#: How many captions may fail alone before capeval stops retrying (so many failing hints at a broken install).
MAX_FAILED_CAPTIONS = 5

#: The jar's tuple categories and capeval's names for their columns.
CATEGORIES = {"All": "spice", "Object": "spice_object", "Attribute": "spice_attribute", "Relation": "spice_relation",
              "Color": "spice_color", "Cardinality": "spice_count", "Size": "spice_size"}
#: Per category: the F-score, then precision and recall (the jar's ``f``, ``pr``, ``re``).
COLUMNS = tuple(name + suffix for name in CATEGORIES.values() for suffix in ("", "_precision", "_recall"))
_MEASURES = (("f", ""), ("pr", "_precision"), ("re", "_recall"))


# --- Stanford CoreNLP 3.6.0: installed once, by `capeval download spice` ---------------------------------------------

def corenlp_dir() -> Path:
    """Where CoreNLP's two jars are installed: ``<capeval cache>/spice/stanford-corenlp-3.6.0``."""
    return cache_dir() / "spice" / "stanford-corenlp-3.6.0"


def corenlp_jars() -> list[Path]:
    """The installed CoreNLP jars; :class:`~capeval.models.ModelUnavailableError` (:data:`CORENLP_MISSING`) when absent."""
    jars = [corenlp_dir() / name for name in CORENLP_JARS]
    if not all(jar.is_file() for jar in jars):
        raise ModelUnavailableError(CORENLP_MISSING)
    return jars


def install_corenlp(source: str | os.PathLike = CORENLP_URL, *, sha1: str | None = None) -> Path:
    """Install CoreNLP's two jars from the release archive (a URL, downloaded through capeval's checkpoint cache with a
    progress bar, or a local copy), refusing an archive whose SHA-1 is not ``sha1`` (default :data:`CORENLP_SHA1`);
    returns the folder.

    A downloaded archive is removed once its jars are out (they are most of it); each jar appears whole or not at all.
    """
    archive = resolve_checkpoint(source, what="Stanford CoreNLP 3.6.0 archive")
    sha1 = sha1 or CORENLP_SHA1
    found = file_digest(archive, "sha1")
    if found != sha1:
        if is_url(str(source)):
            archive.unlink()  # a later try downloads it afresh
        raise ModelUnavailableError(f"{source} has SHA-1 {found}, not {sha1} (stanford-corenlp-full-2015-12-09.zip): refused")
    try:
        with zipfile.ZipFile(archive) as zipped:
            for name, member in CORENLP_JARS.items():
                with zipped.open(member) as jar, partial_file(corenlp_dir() / name) as out:
                    copy_with_progress(jar, out, total=zipped.getinfo(member).file_size, desc=f"extracting {name}")
    except (zipfile.BadZipFile, KeyError) as error:
        raise ModelUnavailableError(f"{source} is not the CoreNLP 3.6.0 release archive ({error})") from error
    if is_url(str(source)):
        archive.unlink()
    return corenlp_dir()


@dataclass(frozen=True)
class CoreNlp(UrlFile):
    """Stanford CoreNLP 3.6.0's two jars, from the release archive (:func:`install_corenlp`)."""

    kind: str = field(default="weights", kw_only=True)

    def present(self) -> bool:
        return all((corenlp_dir() / name).is_file() for name in CORENLP_JARS)

    def fetch(self) -> None:
        install_corenlp(self.label)

    def install_from(self, path: Path) -> None:
        install_corenlp(path)



# --- The JVM -----------------------------------------------------------------------------------------------------------

def parse_java_version(text: str) -> int:
    """The major version in ``java -version``'s output (``1.8`` is 8).

    >>> parse_java_version('openjdk version "21" 2023-09-19'), parse_java_version('openjdk version "11.0.2-ea"')
    (21, 11)
    """
    match = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if match is None:
        raise RuntimeError(f"could not read the Java version from `java -version`: {text.strip()[:200]!r}")
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


@functools.lru_cache(maxsize=8)
def _java_version(java: str, modified: int) -> int:
    done = subprocess.run([java, "-version"], capture_output=True, text=True, errors="replace", timeout=120)
    return parse_java_version(done.stderr + done.stdout)


def java_version(java: str) -> int:
    """The major version of the ``java`` executable at this path (asked once per executable)."""
    return _java_version(java, os.stat(java).st_mtime_ns)


def machine_memory() -> int | None:
    """The memory this process may use, in bytes: the machine's, or a smaller cgroup limit (a container's)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows) or no such name
        return None
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
    except OSError:
        return total
    return min(total, int(limit)) if limit.isdigit() else total


def heap_megabytes(memory: int | None) -> int:
    """The JVM heap for SPICE: half of ``memory`` (bytes), between 2 and 8 GB (SPICE's recommended 8 GB when unknown)."""
    if memory is None:
        return MAX_HEAP_MB
    return max(MIN_HEAP_MB, min(MAX_HEAP_MB, memory // 2**21))


def spice_jar() -> Path:
    """pycocoevalcap's ``spice-1.0.jar`` (its ``lib/`` beside it holds the other libraries it names)."""
    try:
        import pycocoevalcap.spice
    except ImportError as error:
        raise ImportError("SPICE needs the optional pycocoevalcap package, which ships its jar: pip install capeval[spice]") from error
    return Path(list(pycocoevalcap.spice.__path__)[0]) / "spice-1.0.jar"


def json_writer() -> Path:
    """``SpiceJson.java``, which writes the jar's results on Java 15+ (see the module docstring)."""
    return Path(str(resources.files("capeval.resources") / "SpiceJson.java"))


def jvm_command(java: str, version: int, heap_mb: int, classpath: Sequence[Path], source: Path, target: Path, *,
                synonyms: bool) -> list[str]:
    """The command that scores ``source`` (SPICE's input JSON) into ``target`` (its output JSON).

    >>> jvm_command("java", 11, 4096, [Path("spice-1.0.jar")], Path("in.json"), Path("out.json"), synonyms=False)
    ['java', '-Xmx4096m', '-cp', 'spice-1.0.jar', 'edu.anu.spice.SpiceScorer', 'in.json', '-out', 'out.json', '-subset', '-silent', '-noSynsets']
    """
    command = [java, f"-Xmx{heap_mb}m"]
    if version >= ADD_OPENS_FROM:
        command += [f"--add-opens={package}=ALL-UNNAMED" for package in OPENED_PACKAGES]
    command += ["-cp", os.pathsep.join(str(path) for path in classpath)]
    command.append(str(json_writer()) if version >= NO_JAVASCRIPT_FROM else "edu.anu.spice.SpiceScorer")
    command += [str(source), "-out", str(target), "-subset", "-silent"]
    return command + ([] if synonyms else ["-noSynsets"])


class SpiceJarError(RuntimeError):
    """The jar failed on a chunk of captions. ``retry``: whether the failure may be the captions' (out of memory, a
    parser error), so smaller chunks may pass; not when the JVM or the jar cannot run at all."""

    def __init__(self, message: str, *, retry: bool, out_of_memory: bool = False):
        super().__init__(message)
        self.retry, self.out_of_memory = retry, out_of_memory


#: What the JVM says when it cannot run the jar at all (retrying smaller chunks cannot help).
CANNOT_RUN = ("NoClassDefFoundError", "ClassNotFoundException", "UnsupportedClassVersionError", "Could not find or load main class",
              "Could not create the Java Virtual Machine", "ExceptionInInitializerError", "error: compilation failed",
              "Unrecognized option", "Invalid maximum heap size", "Unknown option")


def jvm_failure(returncode: int, stderr: str, heap_mb: int) -> SpiceJarError:
    """The error for a failed JVM run, with the line of its output that says why.

    >>> str(jvm_failure(1, "Parsing\\nException in thread \\"main\\" java.lang.OutOfMemoryError: Java heap space\\n\\tat x", 4096))
    'the SPICE jar failed (exit status 1): Exception in thread "main" java.lang.OutOfMemoryError: Java heap space (with a 4096 MB heap)'
    """
    lines = [line.strip() for line in stderr.splitlines() if line.strip() and not line.startswith(("\tat ", "\t... "))]
    causes = [line for line in lines if line.startswith("Caused by:")]
    # The jar's own "Error: Could not score batched file input:" only announces the error on the next line.
    errors = [line for line in lines if ("Exception" in line or "Error" in line) and not line.startswith("Error: Could not score")]
    if causes:
        reason = causes[-1]  # the root cause
    elif errors:
        reason = errors[0]
    else:
        reason = lines[-1] if lines else "no output"
    out_of_memory = "OutOfMemoryError" in stderr
    message = f"the SPICE jar failed (exit status {returncode}): {reason}" + (f" (with a {heap_mb} MB heap)" if out_of_memory else "")
    if "SpiceJson.java" in stderr and "Could not find or load main class" in stderr:
        message += ("; on Java 15+ capeval runs the jar through SpiceJson.java in Java's source-file mode, which needs the "
                    "jdk.compiler module: install a full JDK, or use Java 8-14")
    elif "NoClassDefFoundError: edu/stanford" in stderr or "ClassNotFoundException: edu.stanford" in stderr:
        message += f"; CoreNLP's jars in {corenlp_dir()} look incomplete: delete them and run `capeval download spice`"
    return SpiceJarError(message, retry=not any(marker in stderr for marker in CANNOT_RUN), out_of_memory=out_of_memory)


# --- The jar's output -------------------------------------------------------------------------------------------------

def parse_output(text: str, count: int) -> list[dict]:
    """The per-caption ``scores`` objects of the jar's output for an input of ``count`` captions with image ids
    ``0 .. count-1``, in that order; ``ValueError`` when the output is not that.

    >>> out = '[{"image_id":0,"scores":{"All":{"tp":1,"fp":0,"fn":1,"f":0.6666666666666666,"pr":1.0,"re":0.5,"numImages":1}}}]'
    >>> parse_output(out, 1)[0]["All"]["f"]
    0.6666666666666666
    """
    try:
        items = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"the SPICE jar wrote no readable JSON ({error})") from error
    if not isinstance(items, list) or not all(isinstance(item, dict) and isinstance(item.get("scores"), dict) for item in items):
        raise ValueError("the SPICE jar's output is not a list of {image_id, scores} objects")
    by_id = {item.get("image_id"): item["scores"] for item in items}
    if sorted(by_id, key=str) != sorted(range(count), key=str) or len(items) != count:
        raise ValueError(f"the SPICE jar's output has image ids {sorted(by_id, key=str)[:10]}, not 0..{count - 1}")
    return [by_id[index] for index in range(count)]


def caption_row(scores: dict | None) -> list[float]:
    """One caption's values in :data:`COLUMNS` order from its ``scores`` object (``None``: a caption the jar could
    not score, all NaN). The jar writes ``null`` for an F-score, precision or recall with nothing to count (a
    category no reference tuple has): NaN, as pycocoevalcap makes it.

    >>> row = caption_row({"All": {"f": 0.5, "pr": 1.0, "re": 0.3333}, "Color": {"f": None, "pr": None, "re": None}})
    >>> row[:3], row[COLUMNS.index("spice_color")], row[COLUMNS.index("spice_object")]
    ([0.5, 1.0, 0.3333], nan, nan)
    """
    row = []
    for category in CATEGORIES:
        values = (scores or {}).get(category, {})
        row += [float("nan") if values.get(key) is None else float(values[key]) for key, _ in _MEASURES]
    return row


def mean_defined(values: Sequence[float]) -> float:
    """The mean over the values that are not NaN (NaN when none is): SPICE's own average over images skips a category
    an image's references lack.

    >>> mean_defined([0.5, float("nan"), 1.0]), mean_defined([float("nan")])
    (0.75, nan)
    """
    defined = [value for value in values if value == value]
    return sum(defined) / len(defined) if defined else float("nan")


# --- capeval's cache of the jar's results ----------------------------------------------------------------------------

def item_key(candidate: str, references: Sequence[str], synonyms: bool) -> str:
    """The cache key of one caption: the exact text the jar gets, its references and what shapes its result.

    >>> item_key("a dog", ["a dog runs"], True) == item_key("a dog", ["a dog runs"], False)
    False
    """
    text = json.dumps([f"spice-{SPICE_VERSION}", "corenlp-3.6.0", synonyms, candidate, list(references)], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResultCache:
    """Each caption's ``scores`` object from the jar, by :func:`item_key`, in one SQLite file of capeval's cache (plain
    files, no native library, safe for several processes). An unreadable file is reported once and left alone."""

    #: SQLite's limit on the parameters of one statement is 999 in old builds.
    BATCH = 900

    def __init__(self, path: Path):
        self.path = path

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path, timeout=60)
        connection.execute("CREATE TABLE IF NOT EXISTS scores (key TEXT PRIMARY KEY, scores TEXT NOT NULL)")
        return connection

    def get(self, keys: Sequence[str]) -> dict[str, dict]:
        found: dict[str, dict] = {}
        unique = list(dict.fromkeys(keys))
        try:
            connection = self._connect()
            try:
                for start in range(0, len(unique), self.BATCH):
                    batch = unique[start:start + self.BATCH]
                    rows = connection.execute(f"SELECT key, scores FROM scores WHERE key IN ({','.join('?' * len(batch))})", batch)
                    found.update((key, json.loads(scores)) for key, scores in rows)
            finally:
                connection.close()
        except sqlite3.Error as error:
            warnings.warn(f"SPICE's result cache {self.path} is unreadable ({error}); scoring without it (delete it to start afresh)")
        return found

    def put(self, results: dict[str, dict]) -> None:
        try:
            connection = self._connect()
            try:
                with connection:
                    connection.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?)",
                                           [(key, json.dumps(scores)) for key, scores in results.items()])
            finally:
                connection.close()
        except sqlite3.Error as error:
            warnings.warn(f"SPICE's result cache {self.path} cannot be written ({error}); results are not kept")


def result_cache() -> ResultCache:
    return ResultCache(cache_dir() / "spice" / f"results-{SPICE_VERSION}.sqlite")


# --- Running the jar in chunks ----------------------------------------------------------------------------------------

Item = tuple[str, list[str]]


def run_jar(items: Sequence[Item], command: Callable[[Path, Path], list[str]], heap_mb: int) -> list[dict]:
    """The jar's ``scores`` object for each ``(candidate, references)`` of ``items``, from one JVM run."""
    with tempfile.TemporaryDirectory(prefix="capeval-spice-") as folder:
        source, target = Path(folder) / "input.json", Path(folder) / "output.json"
        # ASCII with \\u escapes: the jar reads the file in the platform's charset, whatever it is.
        source.write_text(json.dumps([{"image_id": index, "test": test, "refs": refs} for index, (test, refs) in enumerate(items)]),
                          encoding="ascii")
        done = subprocess.run(command(source, target), cwd=folder, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              errors="replace")
        if done.returncode != 0 or not target.is_file() or target.stat().st_size == 0:
            raise jvm_failure(done.returncode, done.stderr, heap_mb)
        try:
            return parse_output(target.read_text(encoding="utf-8"), len(items))
        except ValueError as error:
            raise SpiceJarError(str(error), retry=False) from None


def score_in_chunks(items: Sequence[Item], run: Callable[[Sequence[Item]], list[dict]], *, chunk_size: int,
                    on_scored: Callable[[int, list[dict]], None]) -> dict[int, str]:
    """Score ``items`` in chunks of ``chunk_size`` with ``run``, passing each chunk's results to ``on_scored(start,
    results)``. A chunk that fails in a way smaller chunks may not is retried in halves; a caption that fails alone is
    left out. Returns the captions left out (index: why); stops early when more than :data:`MAX_FAILED_CAPTIONS` fail.

    >>> def run(chunk):
    ...     if any("bad" in test for test, _ in chunk):
    ...         raise SpiceJarError("the parser failed", retry=True)
    ...     return [{"All": {"f": 1.0}}] * len(chunk)
    >>> done = []
    >>> score_in_chunks([("a dog", ["a dog"]), ("bad", ["a cat"]), ("a cat", ["a cat"])], run, chunk_size=4,
    ...                 on_scored=lambda start, results: done.append((start, len(results))))
    {1: 'the parser failed'}
    >>> done
    [(0, 1), (2, 1)]
    """
    pending = deque((start, min(start + chunk_size, len(items))) for start in range(0, len(items), chunk_size))
    failed: dict[int, str] = {}
    while pending:
        start, end = pending.popleft()
        try:
            results = run(items[start:end])
        except SpiceJarError as error:
            if not error.retry:
                raise
            if end - start > 1:
                middle = (start + end) // 2
                pending.extendleft([(middle, end), (start, middle)])
                continue
            failed[start] = str(error)
            if len(failed) > MAX_FAILED_CAPTIONS:
                raise SpiceJarError(f"{len(failed)} captions failed even alone (the last: {error}); stopping: the jar or "
                                    "its setup is more likely at fault than the captions", retry=False) from None
            continue
        on_scored(start, results)
    return failed


def spice_ready() -> bool:
    """Whether SPICE can run here: Java on PATH, pycocoevalcap's jar and CoreNLP installed."""
    return spice_missing() is None


def spice_missing() -> str | None:
    """What SPICE lacks here (None: nothing), with what installs it: Java on PATH, pycocoevalcap's jar, CoreNLP.

    >>> from unittest import mock
    >>> with mock.patch("shutil.which", return_value=None):
    ...     spice_missing()
    'SPICE needs a Java runtime (Java 8 or later on PATH: apt-get install default-jre-headless)'
    """
    if shutil.which("java") is None:
        return "SPICE needs a Java runtime (Java 8 or later on PATH: apt-get install default-jre-headless)"
    try:
        if not spice_jar().is_file():
            return f"SPICE's jar is missing from pycocoevalcap ({spice_jar()}): pip install --force-reinstall pycocoevalcap"
        corenlp_jars()
    except (ImportError, ModelUnavailableError) as error:
        return str(error)
    return None


class SpiceScorer(CocoScorer):
    """SPICE 1.0 per caption through the jar: the F-score of all tuples (``spice``) and of the object, attribute,
    relation, colour, count and size tuples (``spice_object`` …), each with its precision and recall; NaN where the
    references hold no tuple of a category. The corpus values are the means over the captions where a value is
    defined (for ``spice``, every caption: pycocoevalcap's mean of the per-caption F-scores).

    Captions are PTB-tokenized first (``tokenizer``), as pycocoevalcap's COCO evaluation does before every metric.
    See the module docstring for how the jar is run (and :data:`CORENLP_MISSING` when CoreNLP is not installed).
    """

    metric, title = "spice", "SPICE"
    default_models = "SPICE 1.0 jar with Stanford CoreNLP 3.6.0 (`capeval download spice`)"
    faithful_to = "pycocoevalcap 1.2's jar: the numbers are the jar's"
    name = primary = "spice"
    column_names = COLUMNS
    merge = MERGE_ALL
    extras = ("spice",)
    system_packages = ("default-jre-headless",)
    needs = (JavaRuntime(), CoreNlp(CORENLP_URL, f"sha1:{CORENLP_SHA1}", what="Stanford CoreNLP 3.6.0"))
    offline_runs = (OfflineRun("SPICE", note="SPICE 1.0 jar with Stanford CoreNLP 3.6.0; the JVM loads CoreNLP's models first",
                               available=spice_ready),)
    #: Captions per JVM run (a failed run is retried in halves).
    chunk_size = CHUNK_CAPTIONS

    def __init__(self, *, tokenizer: Tokenizer = "ptb",
                 synonyms: Annotated[bool, Opt("match tuples through WordNet synonyms, as SPICE does by default; False "
                                               "passes `-noSynsets` (exact matches only)")] = True,
                 cache: Annotated[bool, Opt("keep each caption's result in capeval's cache (keyed by the exact text the jar "
                                            "gets), so a caption is parsed once; the same numbers either way")] = True):
        for option, value in (("synonyms", synonyms), ("cache", cache)):
            if not isinstance(value, bool):
                raise ValueError(f"{option} must be True or False, got {value!r}")
        self.synonyms, self.cache = synonyms, cache
        super().__init__(tokenizer=tokenizer)

    def score(self, predictions, references=None, *, images=None, region_features=None, batch_size=None, show_progress=None) -> Scores:
        candidates, refs = self.tokenized(predictions, references)
        keys = [item_key(candidate, caption_refs, self.synonyms) for candidate, caption_refs in zip(candidates, refs)]
        cache = result_cache() if self.cache else None
        results = cache.get(keys) if cache is not None else {}
        first: dict[str, int] = {}  # each caption the jar has to score, once
        for index, key in enumerate(keys):
            if key not in results:
                first.setdefault(key, index)
        if first:
            scored, failed = self.score_with_jar(candidates, refs, list(first.values()), keys, cache, show_progress=show_progress)
            results.update(scored)
            if failed:
                warnings.warn(self.failure_note(failed, predictions))
        rows = [caption_row(results.get(key)) for key in keys]
        return Scores(dict(zip(COLUMNS, map(list, zip(*rows)))), corpus=self.corpus_from_sufficient_statistics(rows),
                      sufficient_statistics=rows)

    def score_with_jar(self, candidates: list[str], refs: list[list[str]], todo: list[int], keys: list[str],
                       cache: ResultCache | None, *, show_progress: bool | None) -> tuple[dict[str, dict], dict[int, str]]:
        """Score the captions at ``todo`` with the jar, each chunk's results cached as it finishes (so an interrupted
        call keeps them): their results by key, and the captions that failed alone (index: why)."""
        jar = spice_jar()
        classpath = [jar, *corenlp_jars()]
        java = shutil.which("java")
        if java is None:
            raise ModelUnavailableError(JAVA_MISSING)
        version, heap = java_version(java), heap_megabytes(machine_memory())
        if version < 8:
            raise ModelUnavailableError(f"SPICE 1.0 needs Java 8 or later; `java` on PATH is Java {version}")
        scored: dict[str, dict] = {}
        with tqdm(total=len(todo), desc="SPICE", unit="caption", leave=False, delay=SHOW_AFTER_SECONDS,
                  disable=not progress_enabled(show_progress)) as bar:
            def on_scored(start: int, results: list[dict]) -> None:
                chunk = {keys[todo[start + offset]]: result for offset, result in enumerate(results)}
                scored.update(chunk)
                if cache is not None:
                    cache.put(chunk)
                bar.update(len(results))

            failed = score_in_chunks(
                [(candidates[index], refs[index]) for index in todo],
                lambda chunk: run_jar(chunk, lambda source, target: jvm_command(java, version, heap, classpath, source, target,
                                                                                synonyms=self.synonyms), heap),
                chunk_size=self.chunk_size, on_scored=on_scored)
        return scored, {todo[position]: why for position, why in failed.items()}

    @staticmethod
    def failure_note(failed: dict[int, str], predictions: Sequence[str]) -> str:
        named = "; ".join(f"#{index} {predictions[index][:60]!r}: {why}" for index, why in sorted(failed.items()))
        return (f"SPICE could not score {len(failed)} caption(s), even alone: their SPICE values are NaN and the corpus "
                f"values leave them out (they are not cached, so the next call tries them again): {named}")

    def corpus_from_sufficient_statistics(self, statistics) -> dict[str, float]:
        return {name: mean_defined([row[column] for row in statistics]) for column, name in enumerate(COLUMNS)}

    def options(self) -> dict:
        return {"version": SPICE_VERSION, "synonyms": self.synonyms, **super().options()}

"""The METEOR 1.5 jar (from pycocoevalcap) as a subprocess capeval owns.

pycocoevalcap's ``Meteor`` wrapper holds a lock while it talks to the JVM and never releases it when
the exchange fails (a newline inside a caption shifts the line protocol, the JVM runs out of heap,
Ctrl-C arrives), so every later call and the interpreter's exit block forever. :class:`MeteorProcess`
speaks the same ``-stdio`` protocol itself:

* every sentence is made one clean line first (:func:`meteor_line`): control, format and separator
  characters and METEOR's field separator ``|||`` cannot reach the jar;
* each answer is awaited with a deadline; past it the JVM is killed, and a killed, crashed or
  interrupted JVM (any exception, ``KeyboardInterrupt`` included) is discarded, so the next call
  starts a fresh one;
* sentences longer than :data:`MAX_WORDS` words are refused with an error naming them, since the
  aligner's memory grows with length and the JVM's heap is fixed (``-Xmx2G``, as pycocoevalcap);
* the JVM is killed at interpreter exit, and it exits by itself when its input closes (this process died).
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import os
import subprocess
import threading
import time
import unicodedata
import weakref
from pathlib import Path
from typing import Sequence

#: The JVM heap, as pycocoevalcap gives it.
HEAP = "2G"
#: The longest sentence (in words) sent to the jar; captions are ~10 words, and far longer ones risk the heap.
MAX_WORDS = 500
#: Seconds to wait for one answer, and extra seconds for the first one (the JVM loads its paraphrase table).
ANSWER_TIMEOUT, STARTUP_TIMEOUT = 120.0, 300.0

_LIVE: "weakref.WeakSet[MeteorProcess]" = weakref.WeakSet()


class MeteorError(RuntimeError):
    """The METEOR jar failed, crashed or timed out; the process was discarded and the next call starts a new one."""


def meteor_line(text: str) -> str:
    """``text`` as one line of METEOR's protocol: format characters (zero-width spaces, joiners) removed, other
    control and separator characters (newlines, tabs, U+2028) and ``|||`` made spaces, runs of spaces one space.

    >>> meteor_line("a dog\\nruns ||| fast\\u200b\\x00 ")
    'a dog runs fast'
    """
    if text.isascii() and text.isprintable():  # letters, digits, punctuation and spaces only
        return " ".join(text.replace("|||", " ").split())
    kept = []
    for char in text:
        category = unicodedata.category(char)
        if category == "Cf":
            continue
        kept.append(" " if category[0] in "CZ" else char)
    return " ".join("".join(kept).replace("|||", " ").split())


def check_lengths(candidates: Sequence[str], references: Sequence[Sequence[str]], max_words: int = MAX_WORDS) -> None:
    """``ValueError`` naming the first sentence longer than ``max_words`` words."""
    for i, (candidate, refs) in enumerate(zip(candidates, references)):
        for j, sentence in enumerate((candidate, *refs)):
            # Fewer characters than the limit are fewer words: most sentences are not split.
            if len(sentence) > max_words and len(sentence.split()) > max_words:
                name = f"references[{i}][{j - 1}]" if j else f"predictions[{i}]"
                raise ValueError(f"{name} has {len(sentence.split())} words after tokenization; METEOR takes at most "
                                 f"{max_words} per sentence (its aligner's work grows with length, and the jar's JVM heap is "
                                 f"fixed at {HEAP}): shorten it")


def meteor_inputs(candidates: Sequence[str], references: Sequence[Sequence[str]]) -> tuple[list[str], list[list[str]]]:
    """The sentences as METEOR scores them, whichever engine: each made one clean line (:func:`meteor_line`), none
    longer than :data:`MAX_WORDS` words (:func:`check_lengths`)."""
    lines = [meteor_line(c) for c in candidates]
    reference_lines = [[meteor_line(r) for r in refs] for refs in references]
    check_lengths(lines, reference_lines)
    return lines, reference_lines


class MeteorProcess:
    """One METEOR JVM speaking ``-stdio``, started on first use and restarted after any failure.

    ``score`` is thread-safe (calls take turns). ``timeout``: seconds to wait for each answer.
    """

    def __init__(self, jar: str | os.PathLike, *, timeout: float = ANSWER_TIMEOUT, startup_timeout: float = STARTUP_TIMEOUT):
        self.jar = Path(jar)
        self.timeout, self.startup_timeout = timeout, startup_timeout
        self._process: subprocess.Popen | None = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=20)
        self._deadline: float | None = None
        self._lock = threading.Lock()
        self._answered = False
        _LIVE.add(self)

    def _start(self) -> subprocess.Popen:
        command = ["java", f"-Xmx{HEAP}", "-Dfile.encoding=UTF-8", "-jar", str(self.jar), "-", "-", "-stdio", "-l", "en", "-norm"]
        process = subprocess.Popen(command, cwd=self.jar.parent, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
        self._stderr.clear()
        # Drain stderr (a full pipe would stall the JVM) and keep its tail for error messages.
        threading.Thread(target=self._drain_stderr, args=(process,), daemon=True).start()
        threading.Thread(target=self._watch, args=(process,), daemon=True).start()
        self._process = process
        self._answered = False  # until the first answer, a request may wait for the paraphrase table to load
        return process

    def start(self) -> None:
        """Start the JVM now unless one runs, without waiting for it: it loads METEOR's paraphrase table (~20 s)
        while the caller does other work, and the first ``score`` finds it (nearly) ready."""
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                self.close()
                self._start()

    def _drain_stderr(self, process: subprocess.Popen) -> None:
        for line in process.stderr or ():
            self._stderr.append(line.decode("utf-8", "replace").rstrip())

    def _watch(self, process: subprocess.Popen) -> None:
        """Kill the JVM once an answer is overdue; the blocked read then sees end-of-file."""
        while process.poll() is None:
            if self._process is process and self._deadline is not None and time.monotonic() > self._deadline:
                process.kill()
                return
            time.sleep(0.1)

    def close(self) -> None:
        """Kill the JVM (if running); the next ``score`` starts a new one."""
        process, self._process, self._deadline = self._process, None, None
        if process is not None:
            process.kill()
            process.wait()
            for stream in (process.stdin, process.stdout):
                with contextlib.suppress(OSError):  # unsent input to a dead JVM
                    if stream is not None:
                        stream.close()

    def _ask(self, process: subprocess.Popen, line: str, answers: int, *, patience: float) -> list[str]:
        """Send one line, return ``answers`` lines, each within ``patience`` seconds."""
        lines = []
        self._deadline = time.monotonic() + patience
        assert process.stdin is not None and process.stdout is not None  # opened with PIPE
        process.stdin.write(line.encode("utf-8") + b"\n")
        process.stdin.flush()
        for _ in range(answers):
            answer = process.stdout.readline()
            if not answer:
                overdue = self._deadline is not None and time.monotonic() > self._deadline
                raise MeteorError(f"the METEOR jar {'did not answer within the timeout and was killed' if overdue else 'exited'}"
                                  + (": " + " | ".join(self._stderr) if self._stderr else ""))
            lines.append(answer.decode("utf-8").strip())
            self._deadline = time.monotonic() + self.timeout
        self._deadline = None
        return lines

    def score(self, candidates: Sequence[str], references: Sequence[Sequence[str]]) -> tuple[float, list[float], list[list[float]]]:
        """METEOR's corpus aggregate, one score per candidate (sentences cleaned by :func:`meteor_line`) and each
        candidate's statistics vector (their element-wise sum is what the aggregate is computed from)."""
        candidates, references = meteor_inputs(candidates, references)

        def talk(process: subprocess.Popen, fresh: bool):
            stats: list[str] = []
            for candidate, refs in zip(candidates, references):
                patience = self.timeout + (self.startup_timeout if fresh and not stats else 0.0)
                stats += self._ask(process, " ||| ".join(("SCORE", *refs, candidate)), 1, patience=patience)
            answers = self._ask(process, " ||| ".join(("EVAL", *stats)), len(candidates) + 1, patience=self.timeout)
            return float(answers[-1]), [float(a) for a in answers[:-1]], [[float(v) for v in line.split()] for line in stats]

        return self._converse(talk)

    def aggregate(self, statistics: Sequence[Sequence[float]]) -> float:
        """METEOR's aggregate of a corpus from its candidates' statistics vectors (:meth:`score`'s third value,
        from any number of calls), as :meth:`score` computes it for the candidates of one call."""
        line = " ||| ".join(("EVAL", *(" ".join(repr(float(v)) for v in vector) for vector in statistics)))

        def talk(process: subprocess.Popen, fresh: bool) -> float:
            patience = self.timeout + (self.startup_timeout if fresh else 0.0)
            return float(self._ask(process, line, len(statistics) + 1, patience=patience)[-1])

        return self._converse(talk)

    def _converse(self, talk):
        """``talk(process, fresh)`` with the JVM, one conversation at a time; a JVM that died between calls is
        replaced, and any failure (a crash, a timeout, Ctrl-C) discards it, since its place in the protocol is unknown."""
        with self._lock:
            try:
                if self._process is not None and self._process.poll() is not None:
                    self.close()  # the JVM died between calls (killed, out of memory): start a new one
                process = self._start() if self._process is None else self._process
                answer = talk(process, not self._answered)
                self._answered = True
                return answer
            except BaseException as error:
                self.close()
                if isinstance(error, (OSError, ValueError)) and not isinstance(error, MeteorError):
                    raise MeteorError(f"the METEOR jar failed ({type(error).__name__}: {error})"
                                      + (": " + " | ".join(self._stderr) if self._stderr else "")) from error
                raise


@atexit.register
def _close_all() -> None:
    for meteor in list(_LIVE):
        meteor.close()

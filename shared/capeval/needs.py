"""What a metric needs beyond its extras, declared once on its scorer (:attr:`CaptionScorer.needs
<capeval.scoring.protocol.CaptionScorer.needs>`): model weights at a pinned revision, data files at a URL with their
checksum, NLTK's data, a spaCy pipeline, Stanford CoreNLP, METEOR's built paraphrase table, a Java runtime.

``capeval download`` fetches them (:func:`fetch`), ``capeval doctor`` says which are missing (:func:`missing`), and
everything lands under capeval's cache (``CAPEVAL_CACHE``), so one folder filled by ``capeval download --to DIR``
serves a machine without network once ``CAPEVAL_CACHE=DIR`` points at it:

- ``hub/``: HuggingFace checkpoints, in huggingface_hub's own cache layout (read before HuggingFace's own cache);
- ``downloads/``: files at plain URLs (:mod:`capeval.checkpoints`); ``spice/``: CoreNLP's jars; ``meteor/``: METEOR's
  table;
- ``nltk_data/``: NLTK's data (on NLTK's search path for capeval's own lookups, never NLTK's global folder);
- ``spacy/``: spaCy pipelines, unpacked from their released wheels.

>>> HubModel("bert-base-uncased").checksum, UrlFile("https://example.org/a/x.json", "sha256:ab").file_name
('revision 86b5e0934494bd15c9632b12f734a8a67f723594', 'x.json')
"""

from __future__ import annotations

import importlib.util
import shutil
import urllib.parse
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .models import ModelUnavailableError, hub_dir, hub_snapshot
from .text.data_folders import nltk_data_dir, spacy_dir, spacy_folder, use_nltk_data

#: The nltk_data repository's commit whose package archives capeval installs, and where they are.
NLTK_DATA_COMMIT = "550b6625bcef1f2abff2ff770a5a0d272c9c6b2a"
NLTK_PACKAGES_URL = f"https://raw.githubusercontent.com/nltk/nltk_data/{NLTK_DATA_COMMIT}/packages"

#: The Hub commit each checkpoint is fetched at. The Hub itself cannot be read from here, so a commit is pinned only
#: where public code names it as that repository's snapshot (huggingface_hub's ``models--<id>/snapshots/<commit>``
#: folder, or a ``revision=`` argument), found with a code search of public GitHub projects; the count says how many
#: independent projects name it. A repository no public code names a commit of stays at ``main``.
HUB_REVISIONS = {
    "bert-base-uncased": "86b5e0934494bd15c9632b12f734a8a67f723594",  # revision= and a pinned download script: 2
    "bert-base-cased": "cd5ef92a9fb2f889e972770a36d4ed042daf221e",  # snapshot folders: 3
    "bert-base-multilingual-cased": "3f076fdb1ab68d5b2880cb87a0886f315b8146f8",  # snapshot folders: 3
    "roberta-large": "722cf37b1afa9454edce342e7895e588b6ff1d59",  # snapshot folders: 8 (BERTScore setups among them)
    "distilbert-base-uncased": "12040accade4e8a0f71eabdb258fecc2e7e948be",  # snapshot folders: 5
    "t5-small": "df1b051c49625cf57a3d0d8d3863ed4d13564fe4",  # snapshot folders: 6
    "openai/clip-vit-base-patch32": "3d74acf9a28c67741b2f4f2ea7635f0aaf6f0268",  # snapshot folders and revision=: 8
    "sentence-transformers/all-mpnet-base-v2": "e8c3b32edf5434bc2275fc9bab85f82640a19130",  # snapshot folders: 6
    "princeton-nlp/sup-simcse-roberta-base": "4bf73c6b5df517f74188c5e9ec159b2208c89c08",  # snapshot folders: 3
    "llava-hf/llava-1.5-13b-hf": "5dda2880bda009266dda7c4baff660b95ca64540",  # snapshot folders: 2
    # At main: no public code names a commit of distilroberta-base, lizhuang144/flan-t5-base-VG-factual-sg,
    # hjkim811/EXPERT-llava-13b-lora, mrm8488/t5-base-finetuned-question-generation-ap or ThomasNLG/t5-qa_squad2neg-en.
}


@dataclass(frozen=True)
class Need:
    """One thing a metric needs; ``key`` names it across metrics (two metrics needing it share one fetch)."""

    #: What it is, as the doctor's table and the one-line messages name it.
    label: str
    #: ``"weights"``, ``"data"`` or ``"system"``.
    kind: str = field(default="data", kw_only=True)

    @property
    def key(self) -> str:
        return self.label

    @property
    def title(self) -> str:
        """How the doctor's table and the one-line messages name it."""
        return self.label

    @property
    def source(self) -> str:
        """Where it is fetched from."""
        return ""

    @property
    def checksum(self) -> str:
        """What the fetched copy is checked against (``"sha256:..."``, a revision), or ``""``."""
        return ""

    @property
    def file_name(self) -> str:
        """The name a copy the user brings has (``--from PATH/<file_name>``)."""
        return ""

    #: Whether ``capeval download`` can fetch it (a Java runtime or a pip package it cannot).
    fetchable = True

    def present(self) -> bool:
        raise NotImplementedError

    def fetch(self) -> None:
        raise NotImplementedError

    def install_from(self, path: Path) -> None:
        """Install a copy the user brings (``capeval download METRIC --from PATH``)."""
        raise NotImplementedError(f"{self.label} cannot be installed from a file")

    def fix(self, metric: str) -> str:
        """The command that provides it."""
        return f"capeval download {metric}"


@dataclass(frozen=True)
class HubModel(Need):
    """A HuggingFace checkpoint at a pinned revision (:data:`HUB_REVISIONS`, unless given), fetched by huggingface_hub
    into capeval's hub cache."""

    label: str = ""
    revision: str = ""
    kind: str = field(default="weights", kw_only=True)

    def __post_init__(self) -> None:
        if not self.revision:
            object.__setattr__(self, "revision", HUB_REVISIONS.get(self.label, "main"))

    @property
    def title(self) -> str:
        return f"{self.label} ({self.kind}, revision {self.revision[:12]})"

    @property
    def source(self) -> str:
        return f"https://huggingface.co/{self.label}"

    @property
    def checksum(self) -> str:
        return f"revision {self.revision}"

    @property
    def file_name(self) -> str:
        return self.label.split("/")[-1]

    def present(self) -> bool:
        if hub_snapshot(self.label) is not None:
            return True
        try:
            from huggingface_hub import try_to_load_from_cache
        except ImportError:  # no models extra: nothing can have put it in HuggingFace's cache for capeval to use
            return False
        return isinstance(try_to_load_from_cache(self.label, "config.json"), str)

    def fetch(self) -> None:
        from huggingface_hub import snapshot_download

        from .progress import library_bars

        try:
            with library_bars():
                snapshot_download(self.label, revision=self.revision, cache_dir=hub_dir())
        except Exception as error:  # noqa: BLE001 - huggingface_hub raises many types for "cannot be had"
            raise ModelUnavailableError(f"could not download {self.source}: {type(error).__name__}: {error}") from error

    def install_from(self, path: Path) -> None:
        """A checkpoint folder (config, weights, tokenizer) copied in as the pinned revision's snapshot."""
        if not (path / "config.json").is_file():
    
            raise ModelUnavailableError(f"{path} is no checkpoint folder of {self.label} (no config.json in it)")
        snapshot = hub_dir() / ("models--" + self.label.replace("/", "--")) / "snapshots" / self.revision
        shutil.copytree(path, snapshot, dirs_exist_ok=True)


@dataclass(frozen=True)
class UrlFile(Need):
    """A file at a plain URL, cached by :func:`capeval.checkpoints.resolve_checkpoint` (resumed when cut, checked
    against ``digest`` when one is published)."""

    label: str = ""
    digest: str = ""
    #: What the file is, for messages (the label is the URL).
    what: str = "data file"

    @property
    def title(self) -> str:
        return self.what

    @property
    def source(self) -> str:
        return self.label

    @property
    def checksum(self) -> str:
        return self.digest

    @property
    def file_name(self) -> str:
        return Path(urllib.parse.urlparse(self.label).path).name

    def cached(self) -> Path:
        from .checkpoints import cached_path_for

        return cached_path_for(self.label)

    def present(self) -> bool:
        return self.cached().is_file()

    def fetch(self) -> None:
        from .checkpoints import resolve_checkpoint

        resolve_checkpoint(self.label, what=self.what, checksum=self.digest or None, timeout=60.0)
        self.unpack(self.cached())

    def install_from(self, path: Path) -> None:
        from .atomic import partial_file
        from .checkpoints import check_file

        check_file(path, self.digest or None, what=str(path))
        with open(path, "rb") as source, partial_file(self.cached()) as out:
            shutil.copyfileobj(source, out, 1 << 20)
        self.unpack(self.cached())

    def unpack(self, downloaded: Path) -> None:
        """What to do with the file once it is here (a plain file: nothing)."""


@dataclass(frozen=True)
class NltkPackage(UrlFile):
    """One of NLTK's data packages at :data:`NLTK_DATA_COMMIT`, installed into capeval's NLTK data folder
    (unzipped, or kept as the zip NLTK reads in place)."""

    #: The resource NLTK looks up (``nltk.data.find``), and the package's folder in the nltk_data repository.
    resource: str = ""
    unzip: bool = True
    #: Another way the resource can be present (WordNet in Debian's folder, Punkt's tables in a Python package).
    found_elsewhere: Callable[[], bool] | None = field(default=None, compare=False)

    @property
    def folder(self) -> Path:
        return nltk_data_dir() / self.resource.split("/")[0]

    def present(self) -> bool:
        import nltk.data  # without NLTK, readiness counts it absent and names the missing extra

        use_nltk_data()
        try:
            nltk.data.find(self.resource)
            return True
        except LookupError:
            return self.found_elsewhere is not None and self.found_elsewhere()

    def unpack(self, archive: Path) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        if self.unzip:
            with zipfile.ZipFile(archive) as zipped:
                zipped.extractall(self.folder)
        else:
            shutil.copyfile(archive, self.folder / Path(self.label).name)


def nltk_package(subdir: str, name: str, sha256: str, resource: str, *, unzip: bool = True,
                 found_elsewhere: Callable[[], bool] | None = None) -> NltkPackage:
    """NLTK's package ``name`` (in the repository's ``packages/<subdir>/``) with the SHA-256 of its archive."""
    return NltkPackage(f"{NLTK_PACKAGES_URL}/{subdir}/{name}.zip", f"sha256:{sha256}", what=f"NLTK's {name} data",
                       resource=resource, unzip=unzip, found_elsewhere=found_elsewhere)


def _punkt_module() -> bool:
    return importlib.util.find_spec("punkt") is not None


def _debian_wordnet() -> bool:
    from .text.wordnet import WordNetUnavailableError, wordnet_source

    try:
        wordnet_source()
    except WordNetUnavailableError:
        return False
    return True


#: NLTK's English POS tagger (NLTK 3.9's name), Punkt's tables and WordNet 3.0, with their archives' SHA-256 at
#: :data:`NLTK_DATA_COMMIT`: the ``sha256_checksum`` NLTK's data index (``index.xml`` of nltk/nltk_data, which NLTK
#: 3.9's downloader checks) gives each package, recorded alike by independent public projects that pin these archives.
#: WordNet's archive is unchanged since 2015: the index's older MD5 ``checksum`` (b3f38606f626e54c6f060548546f71f0,
#: 10,775,600 bytes; index.xml at nltk_data 5db857e) names the same file.
NLTK_TAGGER = nltk_package("taggers", "averaged_perceptron_tagger_eng",
                           "6025f530624335c67d6547d44757b357b4e79bae030a0383e9887a92c1718f0b",
                           "taggers/averaged_perceptron_tagger_eng/")
NLTK_PUNKT = nltk_package("tokenizers", "punkt_tab", "e57f64187974277726a3417ca6f181ec5403676c717672eef6a748a7b20e0106",
                          "tokenizers/punkt_tab/english/", found_elsewhere=_punkt_module)
NLTK_WORDNET = nltk_package("corpora", "wordnet", "cbda5ea6eef7f36a97a43d4a75f85e07fccbb4f23657d27b4ccbc93e2646ab59",
                            "corpora/wordnet", unzip=False, found_elsewhere=_debian_wordnet)


@dataclass(frozen=True)
class SpacyWheel(UrlFile):
    """A spaCy pipeline from its released wheel, unpacked into capeval's spaCy folder (found there by
    :func:`capeval.text.spans.load_spacy`), unless spaCy already has it installed as a package."""

    pipeline: str = ""
    kind: str = field(default="weights", kw_only=True)

    def present(self) -> bool:
        return spacy_folder(self.pipeline) is not None or importlib.util.find_spec(self.pipeline) is not None

    def unpack(self, wheel: Path) -> None:
        with zipfile.ZipFile(wheel) as zipped:
            members = [name for name in zipped.namelist() if name.startswith(f"{self.pipeline}/")]
            zipped.extractall(spacy_dir(), members)


@dataclass(frozen=True)
class PipPackage(Need):
    """A package only pip installs (a spaCy pipeline published on the package index)."""

    label: str = ""
    requirement: str = ""
    kind: str = field(default="weights", kw_only=True)
    fetchable = False

    def present(self) -> bool:
        return importlib.util.find_spec(self.label) is not None

    def fix(self, metric: str) -> str:
        return f"pip install {self.requirement}"


@dataclass(frozen=True)
class JavaRuntime(Need):
    """A Java runtime on PATH."""

    label: str = "a Java runtime"
    kind: str = field(default="system", kw_only=True)
    fetchable = False

    def present(self) -> bool:
        return shutil.which("java") is not None

    def fix(self, metric: str) -> str:
        return "apt-get install default-jre-headless"


@dataclass(frozen=True)
class NotPublic(Need):
    """Weights nobody can download (the user passes their own copy through an option)."""

    how: str = ""
    kind: str = field(default="weights", kw_only=True)
    fetchable = False

    def present(self) -> bool:
        return False

    def fix(self, metric: str) -> str:
        return self.how


@dataclass(frozen=True)
class JudgeServer(Need):
    """An OpenAI-compatible server the user runs or subscribes to; capeval never picks one, so nothing is sent
    anywhere until ``base_url`` names it."""

    label: str = "a judge server (base_url=)"
    kind: str = field(default="system", kw_only=True)
    fetchable = False

    def present(self) -> bool:
        return False

    def fix(self, metric: str) -> str:
        return f"capeval score --metric '{metric}:base_url=URL' (an OpenAI-compatible endpoint, e.g. a local vLLM)"

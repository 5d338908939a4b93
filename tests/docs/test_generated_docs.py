"""The metric lists of the README, the docs and setup.cfg, and the cards' option tables, are what
scripts/write_cards.py writes from the registry; a file it cannot process is named with the reason, and the others are
still written."""

import configparser
import re
import shutil

import pytest

import capeval
from capeval.declaration import declared_options
from capeval.registry import MetricEntry
from capeval.reports.cards import BEGIN, END
from fixtures import REPO, load_script

write_cards = load_script("write_cards")

#: Every file write_cards.py reads and writes, for copies of the checkout.
WRITTEN = ["README.md", "setup.cfg", *write_cards.SECTIONS, *(f"metrics/{name}/README.md" for name in capeval.METRICS
                                                                if capeval.METRICS[name].folder is not None)]


def in_tree():
    return {name: entry.scorer_class() for name, entry in capeval.METRICS.items() if entry.folder is not None}


def test_every_generated_part_is_current():
    files, problems = write_cards.generate(REPO)
    assert problems == []
    stale = [str(path.relative_to(REPO)) for path, text in files.items() if path.read_text(encoding="utf-8") != text]
    assert stale == [], "run python scripts/write_cards.py"


def test_the_lists_name_every_metric_of_the_registry():
    metrics = in_tree()
    assert len(metrics) >= 17
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    first_line = readme.split("\n")[2]
    index = (REPO / "docs" / "metrics" / "index.md").read_text(encoding="utf-8")
    home = (REPO / "docs" / "index.md").read_text(encoding="utf-8")
    scorers = (REPO / "docs" / "api" / "scorers.md").read_text(encoding="utf-8")
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg")
    description = config["metadata"]["description"]
    (models_comment,) = re.findall(r"^# Every model metric \((.*)\)\.$", (REPO / "setup.cfg").read_text(encoding="utf-8"),
                                   re.MULTILINE)
    for name, scorer_class in metrics.items():
        assert scorer_class.title in first_line and scorer_class.title in home and scorer_class.title in description
        assert f"| [{scorer_class.title}](metrics/{name}/README.md) |" in readme
        assert f"| [{scorer_class.title}]({name}.md) |" in index
        assert f"::: {scorer_class.__module__}\n" in scorers
        assert scorer_class.faithful_to, f"{name} declares no faithful_to"
        assert (scorer_class.title in models_comment.split(", ")) == ("models" in scorer_class.extras), name


@pytest.fixture
def checkout(tmp_path):
    """A copy of the files write_cards.py writes."""
    for relative in WRITTEN:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / relative, tmp_path / relative)
    return tmp_path


def test_each_file_it_cannot_process_is_named_and_the_others_are_written(checkout, monkeypatch, capsys):
    card = checkout / "metrics" / "bleu" / "README.md"
    card.write_text(card.read_text(encoding="utf-8").replace(BEGIN, ""), encoding="utf-8")
    readme = checkout / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8").replace("<!-- /metrics-table -->", ""), encoding="utf-8")
    broken = MetricEntry("broken", "capeval.scoring.no_such_module:BrokenScorer", "metrics/broken")
    monkeypatch.setattr(write_cards, "METRICS", {**capeval.METRICS, "broken": broken})
    (checkout / "docs" / "index.md").unlink()
    setup = checkout / "setup.cfg"
    setup.write_text(setup.read_text(encoding="utf-8").replace("# Every model metric (", "# The model metrics ("), encoding="utf-8")
    rouge_card = checkout / "metrics" / "rouge" / "README.md"
    rouge_card.write_text(rouge_card.read_text(encoding="utf-8").replace("`'ptb'`", "`'stale'`"), encoding="utf-8")

    assert write_cards.main(["--repo", str(checkout)]) == 1
    out, err = capsys.readouterr()
    assert err.splitlines() == [
        "metrics/bleu/README.md: the card has no option-table markers: put the two lines <!-- options: written from the "
        "scorer's declaration by scripts/write_cards.py; do not edit --> and <!-- /options --> under its Options heading",
        "metrics/broken/README.md: not written, and broken is left out of the metric lists: its scorer "
        "capeval.scoring.no_such_module:BrokenScorer cannot be imported (ModuleNotFoundError: No module named "
        "'capeval.scoring.no_such_module')",
        "README.md: no <!-- metrics-table: ... --> and <!-- /metrics-table --> markers around the generated section",
        "docs/index.md: No such file or directory",
        r"setup.cfg: no line matching '^# Every model metric \\(.*\\)\\.$' for the models comment",
    ]
    assert "rewrote metrics/rouge/README.md" in out.splitlines()  # the others are written
    assert rouge_card.read_text(encoding="utf-8") == (REPO / "metrics" / "rouge" / "README.md").read_text(encoding="utf-8")


def test_check_names_the_stale_files_and_writes_nothing(checkout, capsys):
    setup = checkout / "setup.cfg"
    setup.write_text(setup.read_text(encoding="utf-8").replace("BLEU, ", ""), encoding="utf-8")
    before = setup.read_text(encoding="utf-8")
    assert write_cards.main(["--repo", str(checkout), "--check"]) == 1
    assert capsys.readouterr().err == "setup.cfg is stale: run python scripts/write_cards.py\n"
    assert setup.read_text(encoding="utf-8") == before
    assert write_cards.main(["--repo", str(checkout)]) == 0
    assert setup.read_text(encoding="utf-8") == (REPO / "setup.cfg").read_text(encoding="utf-8")


def hand_written_options(card: str, options: list[str]) -> list[str]:
    """The lines of ``card`` outside its generated table that list one of ``options`` as an options list does (a
    bullet, numbered item or table row opening with the option's name), which would go stale beside the table."""
    head, _, rest = card.partition(BEGIN)
    outside = head + rest.partition(END)[2]
    names = "|".join(map(re.escape, options))
    item = re.compile(rf"^[ \t]*(?:[-*+]|\d+\.|\|)[ \t]*(?:\*\*)?`(?:{names})`(?:\*\*)?[ \t]*(?:[:|(—–-]|$)", re.MULTILINE)
    return [outside[match.start():].split("\n", 1)[0] for match in item.finditer(outside)]


def test_no_card_lists_its_options_by_hand_beside_the_generated_table():
    for name, scorer_class in in_tree().items():
        card = (REPO / "metrics" / name / "README.md").read_text(encoding="utf-8")
        assert card.count(BEGIN) == 1 and card.count(END) == 1, name
        assert hand_written_options(card, [spec.name for spec in declared_options(scorer_class)]) == [], name


def test_a_hand_written_options_list_is_found():
    card = (f"### Options\n- `w` (float): the scale\n| `prefix` | text |\n- `w=2.0` names a value\n{BEGIN}\n"
            f"| `w` | float |\n{END}\n1. **`mode`**: how\nUse `w` with care.\n")
    assert hand_written_options(card, ["w", "prefix", "mode"]) == ["- `w` (float): the scale", "| `prefix` | text |",
                                                                   "1. **`mode`**: how"]


def test_a_single_title_is_the_list_and_help_opens_with_what_the_script_does(capsys):
    assert write_cards.title_list(["BLEU"]) == "BLEU"
    assert write_cards.title_list(["BLEU", "CIDEr-D"]) == "BLEU and CIDEr-D"
    with pytest.raises(SystemExit):
        write_cards.main(["--help"])
    assert "Write every part of the docs that comes from the metrics' declarations" in capsys.readouterr().out

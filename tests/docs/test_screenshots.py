"""The development docs show a screenshot of every Space (each registered metric's, the suite, the leaderboard),
taken by the browser test, and the pictures stay small."""

import re

from fixtures import REPO

from capeval.registry import Registry

SCREENSHOTS = REPO / "docs" / "screenshots"
#: All the pictures together, in bytes (a few hundred KiB).
MOST_BYTES = 600 * 1024


def shown_pictures() -> list[str]:
    text = (REPO / "docs" / "development.md").read_text(encoding="utf-8")
    section = text[text.index("\n## Screenshots\n"):]
    section = section[:section.index("\n## ", 1)]
    return re.findall(r"!\[[^\]]*\]\(screenshots/([\w-]+)\.png\)", section)


def test_every_space_has_its_screenshot_in_the_development_docs():
    expected = {"suite", "leaderboard", *Registry()}
    shown = shown_pictures()
    assert sorted(shown) == sorted(expected) and len(shown) == len(set(shown))
    assert {path.stem for path in SCREENSHOTS.glob("*.png")} == expected


def test_the_screenshots_are_small_pngs():
    pictures = sorted(SCREENSHOTS.glob("*.png"))
    assert all(path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for path in pictures)
    assert sum(path.stat().st_size for path in pictures) < MOST_BYTES

"""What the pages say about installing holds: METEOR needs no Java (only its jar engine does), and the README says where
setup_env.sh takes torch from and what pip installs where that index does not answer."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "metrics").glob("*/README.md"))]


def test_no_page_says_meteor_needs_java():
    claims = [f"{page.relative_to(ROOT)}: {match.group(0)}" for page in PAGES
              for match in re.finditer(r"METEOR[^.|\n]{0,20}\bneeds? Java", page.read_text(encoding="utf-8"))]
    assert claims == []


def test_the_readme_says_where_torch_comes_from_as_setup_env_does():
    script = (ROOT / "scripts" / "setup_env.sh").read_text(encoding="utf-8")
    index = re.search(r'CAPEVAL_TORCH_INDEX:-([^}"]+)', script).group(1)
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert f"PyTorch's CPU wheel index ({index}, added as an extra index) answers within 5 s" in readme
    assert "where it does not, pip's own index gives `torch==2.13.0` (on Linux x86-64 the CUDA build" in readme
    assert "timeout=5" in script and f"pip install -q torch==2.13.0 " in script
    assert f"pip install torch==2.13.0 --extra-index-url {index}" in readme

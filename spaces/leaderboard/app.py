"""Leaderboard Space: the benchmark harness's stored results as a filterable table and scatter plots.

`python spaces/leaderboard/app.py` shows `results.json` beside this file (scripts/publish_spaces.py copies the
checkout's results/baselines there), or, in a checkout, the stored baselines themselves.
"""

from pathlib import Path

from capeval.integrations.leaderboard import baseline_results
from capeval.integrations.leaderboard import build_leaderboard_space

SHIPPED = Path(__file__).parent / "results.json"

demo = build_leaderboard_space(SHIPPED if SHIPPED.is_file() else baseline_results())

if __name__ == "__main__":
    demo.launch()

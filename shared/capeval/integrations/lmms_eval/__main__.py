"""``python -m capeval.integrations.lmms_eval --path``: the folder to pass to lmms-eval's ``--include_path``;
``--list``: the task names it defines."""

from __future__ import annotations

import argparse
import sys

from . import task_names, tasks_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m capeval.integrations.lmms_eval",
                                     description="capeval's caption task configs for lmms-eval: "
                                                 'lmms-eval --include_path "$(python -m capeval.integrations.lmms_eval --path)" '
                                                 "--tasks capeval_coco2017_cap_val ...")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--path", action="store_true", help="print the folder of the task configs (for --include_path)")
    what.add_argument("--list", action="store_true", help="print the task names, one a line")
    args = parser.parse_args(argv)
    if args.path:
        print(tasks_path())
    else:
        print("\n".join(task_names()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

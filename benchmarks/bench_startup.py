"""Start-up benchmark: ``plumb --help`` on this tree and on an earlier commit.

    .venv/bin/python benchmarks/bench_startup.py [--base REV] [--runs 15]

Each run is a fresh interpreter that imports the command line of one tree and prints
the top-level help. Printed per tree: median wall and CPU seconds, and whether numpy,
git, scipy, pydantic or rich were imported.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.baseline import ROOT, checkout, describe, load_average
from ci.texttable import Column, table_text

CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
from plumb.cli import app
try:
    app(["--help"], prog_name="plumb")
except SystemExit:
    pass
roots = {m.split(".")[0] for m in sys.modules}
heavy = sorted(roots & {"numpy", "git", "scipy", "pydantic", "rich"})
sys.stderr.write(json.dumps(heavy))
"""


def time_help(tree: Path, runs: int) -> tuple[float, float, list[str]]:
    """Median wall and CPU seconds of ``plumb --help`` from ``tree``, and its heavy imports."""
    walls, cpus = [], []
    heavy: list[str] = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(tree)], capture_output=True, text=True, check=True
        )
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        heavy = json.loads(out.stderr.strip().splitlines()[-1])
    return statistics.median(walls), statistics.median(cpus), heavy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="HEAD~1", help="The earlier commit to compare with.")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    rows = []
    with checkout(args.base) as base:
        for label, tree in ((f"base {describe(args.base)}", base), ("this tree", ROOT)):
            wall, cpu, heavy = time_help(tree, args.runs)
            load = load_average()
            rows.append((label[:48], f"{wall:.3f}", f"{cpu:.3f}", load, ", ".join(heavy) or "-"))
    columns = (
        Column("tree"),
        Column("wall s", "right"),
        Column("CPU s", "right"),
        Column("load", "right"),
        Column("heavy imports"),
    )
    print(table_text(columns, rows), end="")


if __name__ == "__main__":
    main()

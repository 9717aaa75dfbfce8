"""Load and validate a fleet from its compact topology form vs from its records.

    .venv/bin/python benchmarks/bench_topology.py [--sizes 512 4096]

For each size both forms are generated (``genfleet.py`` with and without ``--compact``)
and each measurement runs in a fresh Python process (interpreter and imports included,
peak memory its own): ``load`` is ``load_fleet`` (parse, expand, schema, references,
settings, addresses), with the parse cache off (``PLUMB_CACHE_DIR=off``) and then warm
(a second run on a primed cache folder); ``validate`` is the load plus every built-in
policy, as ``plumb validate`` does, on the warm cache. Printed: inventory bytes and
lines of each form, then seconds and peak MB per measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.genfleet import generate_fleet  # noqa: E402
from ci.texttable import Column, table_text  # noqa: E402

CHILD = r"""
import json, resource, sys, time
from datetime import date
from pathlib import Path
mode, repo = sys.argv[1], Path(sys.argv[2])
started = time.perf_counter()
if mode == "load":
    from intent.fleet import load_fleet
    fleet = load_fleet(repo)
    count = len(fleet.devices) + len(fleet.links) + len(fleet.racks)
else:
    from plumb.cli import run_validation
    outcome = run_validation(repo, today=date(2026, 12, 1), repo_policies=False)
    assert outcome.exit_code() == 0, outcome.problems[:3]
    count = len(outcome.report.violations)
elapsed = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"s": round(elapsed, 2), "mb": round(peak), "count": count}))
"""


def run_child(mode: str, repo: Path, cache: str) -> dict[str, float]:
    env = {**os.environ, "PLUMB_CACHE_DIR": cache}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(repo)],
        capture_output=True, text=True, cwd=ROOT, env=env, check=True,
    )  # fmt: skip
    result: dict[str, float] = json.loads(done.stdout)
    return result


def size_of(repo: Path) -> tuple[int, int]:
    files = [p for p in (repo / "inventory").rglob("*.yaml")]
    return sum(p.stat().st_size for p in files), sum(len(p.read_text().splitlines()) for p in files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[512, 4096])
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for nodes in args.sizes:
            for form, compact in (("records", False), ("compact", True)):
                repo = Path(tmp) / f"{form}-{nodes}"
                generate_fleet(repo, nodes, compact=compact)
                cache = str(Path(tmp) / f"cache-{form}-{nodes}")
                cold = run_child("load", repo, "off")
                run_child("load", repo, cache)  # primes the cache
                warm = run_child("load", repo, cache)
                validate = run_child("validate", repo, cache)
                size, lines = size_of(repo)
                print(f"measured {form} {nodes}", file=sys.stderr, flush=True)
                rows.append(
                    (
                        nodes,
                        form,
                        f"{size / 1e6:.2f} MB {lines:,} l",
                        *(f"{r['s']:.2f} s {r['mb']:.0f} MB" for r in (cold, warm, validate)),
                    )
                )
    right = ("inventory", "load cold", "load warm", "validate warm")
    columns = (Column("nodes", "right"), Column("form"), *(Column(h, "right") for h in right))
    print(table_text(columns, rows), end="")


if __name__ == "__main__":
    main()

"""Scale benchmark: validate and plan at 32, 512 and 4,096 nodes.

    .venv/bin/python benchmarks/scale.py [--sizes 32 512 4096] [--only validate|plan]

For each size a rail-optimized fleet is generated (benchmarks/genfleet.py), then each
measurement runs in a fresh Python process so peak memory (ru_maxrss) is its own:

* ``validate``: load the repo (parse, schema, references, settings) and run every
  built-in policy, as ``plumb validate`` does;
* ``plan``: render desired state, observe every device of a lab fleet that still
  has work (older firmware, drift), diff, order and prove the order;
* ``no-op plan``: the same against a lab already at its intent (the plan is empty).

Printed: seconds, peak MB, and the growth ratio against the previous size beside
the node ratio (linear scaling keeps the two close).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.genfleet import generate_fleet  # noqa: E402

CHILD = r"""
import json, resource, sys, time
from datetime import date
from pathlib import Path
sys.path.insert(0, {root!r})
mode, repo = sys.argv[1], Path(sys.argv[2])
started = time.perf_counter()
if mode == "validate":
    from plumb.cli import run_validation
    outcome = run_validation(repo, today=date(2026, 12, 1), repo_policies=False)
    assert outcome.exit_code() == 0, outcome.problems[:3]
    extra = {{"violations": len(outcome.report.violations)}}
elif mode in ("plan", "noop"):
    from intent.fleet import load_fleet
    from reconciler.loop import observe_all
    from reconciler.plan import build_plan
    from reconciler.render import render_desired
    from reconciler.targets import Targets
    fleet = load_fleet(repo)
    loaded = time.perf_counter()
    targets = Targets.for_fleet(fleet)
    obs = observe_all(targets, list(fleet.devices))
    plan = build_plan(fleet, render_desired(fleet), {{n: o.state for n, o in obs.items()}})
    assert plan.refused is None, plan.refused
    if mode == "noop":
        assert plan.is_empty(), plan.change_count()
    extra = {{"changes": plan.change_count(), "steps": len(plan.steps),
              "load_s": round(loaded - started, 3)}}
elapsed = time.perf_counter() - started
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"seconds": elapsed, "peak_mb": peak_mb, **extra}}))
"""


def run_child(mode: str, repo: Path) -> dict[str, float]:
    code = CHILD.format(root=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code, mode, str(repo)], check=True,
                         capture_output=True, text=True)
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def make_lab(repo: Path, *, at_intent: bool) -> None:
    from intent.fleet import load_fleet
    from reconciler.drivers.lab import create_lab
    from reconciler.lab import lab_db_path
    from reconciler.state.labdb import LabStore

    fleet = load_fleet(repo)
    store = LabStore(lab_db_path(fleet))
    try:
        create_lab(store, fleet, seed=1, drift=0 if at_intent else 32,
                   older_firmware=not at_intent)
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[32, 512, 4096])
    parser.add_argument("--only", choices=["validate", "plan"], default=None)
    args = parser.parse_args()
    rows: list[tuple[str, int, dict[str, float]]] = []
    with tempfile.TemporaryDirectory(prefix="plumb-scale-") as tmp:
        for nodes in args.sizes:
            repo = Path(tmp) / f"fleet-{nodes}"
            started = time.perf_counter()
            summary = generate_fleet(repo, nodes)
            print(f"generated {nodes} nodes: {summary.links} links, {summary.records} records "
                  f"in {time.perf_counter() - started:.1f} s", flush=True)
            if args.only in (None, "validate"):
                rows.append(("validate", nodes, run_child("validate", repo)))
            if args.only in (None, "plan"):
                make_lab(repo, at_intent=False)
                rows.append(("plan", nodes, run_child("plan", repo)))
                make_lab(repo, at_intent=True)
                rows.append(("no-op plan", nodes, run_child("noop", repo)))
    print()
    print(f"{'measure':<12} {'nodes':>6} {'seconds':>9} {'peak MB':>9} {'time x':>8} "
          f"{'nodes x':>8}  detail")
    previous: dict[str, tuple[int, float]] = {}
    for measure, nodes, result in rows:
        growth, node_growth = "", ""
        if measure in previous:
            last_nodes, last_seconds = previous[measure]
            growth = f"{result['seconds'] / last_seconds:.1f}"
            node_growth = f"{nodes / last_nodes:.0f}"
        previous[measure] = (nodes, result["seconds"])
        detail = ", ".join(f"{k} {v}" for k, v in result.items() if k not in ("seconds",
                                                                               "peak_mb"))
        print(f"{measure:<12} {nodes:>6} {result['seconds']:>9.2f} {result['peak_mb']:>9.0f} "
              f"{growth:>8} {node_growth:>8}  {detail}")


if __name__ == "__main__":
    main()

"""CPU per `plumb serve` pass on an unchanged fleet: the first pass (load, validate,
render, observe, diff) against the next ones (observe and diff; the commit's
validation and render are reused), and resident memory across the passes.

    .venv/bin/python benchmarks/serve_pass.py [--nodes 4096] [--passes 10]

A generated fleet (benchmarks/genfleet.py) is committed to a git repository with a lab
at its intent; the controller runs in this process, its passes driven one by one.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.genfleet import generate_fleet  # noqa: E402
from benchmarks.scale import make_lab  # noqa: E402


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=4096)
    parser.add_argument("--passes", type=int, default=10)
    args = parser.parse_args()
    from serve.controller import Controller

    with tempfile.TemporaryDirectory(prefix="plumb-serve-pass-") as tmp:
        repo = Path(tmp) / "fleet"
        generate_fleet(repo, args.nodes)
        (repo / "plumb.yaml").write_text(
            (repo / "plumb.yaml").read_text()
            + "serve:\n  interval_seconds: 3600\n  drift:\n    - mode: warn\n"
        )
        git = ["git", "-c", "user.name=b", "-c", "user.email=b@b.invalid"]
        remote = Path(tmp) / "remote.git"
        subprocess.run([*git, "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
        subprocess.run([*git, "init", "-q", "-b", "main"], cwd=repo, check=True)
        subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
        subprocess.run([*git, "commit", "-q", "-m", "fleet"], cwd=repo, check=True)
        subprocess.run([*git, "remote", "add", "origin", str(remote)], cwd=repo, check=True)
        subprocess.run([*git, "push", "-q", "origin", "main"], cwd=repo, check=True)
        make_lab(repo, at_intent=True)
        controller = Controller(repo, "bench@serve")
        try:
            rows = []
            for number in range(1, args.passes + 1):
                controller._next_pass = 0.0
                wall, cpu = time.perf_counter(), time.process_time()
                controller.turn()
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                assert controller.status.last_error is None, controller.status.last_error
                rows.append((number, wall, cpu, _rss_mb(), controller.intent.reused))
        finally:
            controller.close()
    print(f"plumb serve passes on an unchanged {args.nodes}-node fleet (lab at intent)")
    print("pass  wall s  CPU s   RSS MB  reused")
    for number, wall, cpu, rss, reused in rows:
        print(f"{number:>4}  {wall:>6.2f}  {cpu:>5.2f}  {rss:>7.0f}  {reused:>6}")
    later = rows[1:]
    if later:
        mean = sum(r[2] for r in later) / len(later)
        print(f"first pass {rows[0][2]:.2f} CPU s; later passes {mean:.2f} CPU s on average")


if __name__ == "__main__":
    main()

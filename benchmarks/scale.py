"""Scale benchmark: validate and plan at 32, 512 and 4,096 nodes.

    .venv/bin/python benchmarks/scale.py [--sizes 32 512 4096] [--only validate|plan|rollout]
                                         [--base REV] [--this REV] [--repeat N]
                                         [--commands] [--compact-from NODES]

For each size a rail-optimized fleet is generated (benchmarks/genfleet.py), then each
measurement runs in a fresh Python process so peak memory (its VmHWM) is its own:

* ``validate``: load the repo (parse, schema, references, settings) and run every
  built-in policy, as ``plumb validate`` does; ``validate cold`` is the first run on a
  fleet, with an empty parse cache (``inventory.parsecache``), ``validate`` the next;
* ``plan``: render desired state, observe every device of a lab fleet that still
  has work (older firmware, drift), diff, order and prove the order;
* ``no-op plan``: the same against a lab already at its intent (the plan is empty);
* ``rollout plan``: the HX8 firmware rollout over every GPU node (strata, canary,
  waves within the caps, price, bake), timed without the load.

Printed: seconds, CPU seconds, peak MB, the machine's load average when the
measurement ended, and the CPU growth per doubling of the fleet against the previous
size (2.0 is linear). With ``--base REV`` every measurement
also runs on that earlier commit (``git archive`` into a temporary folder), on the
same generated fleet, right before this tree's: the two rows compare side by side.
``--repeat N`` runs each warm measure N times and keeps the run with the fewest CPU
seconds: on a shared machine the slower runs lost time to other processes (``$ validate
cold`` too, each run with an empty parse cache of its own).
``--commands`` also times each measure as the whole ``plumb ...`` command a user runs
(rows starting with ``$``: the process's CPU seconds from its own accounting, its
VmHWM), beside the library path, ``$ validate cold`` with an empty parse cache of its
own; then each command's figure beside its goal (:data:`GOALS`), pass or fail.
``--compact-from NODES`` writes fleets of that size and more in the compact topology
form (``genfleet.py --compact``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import checkout, describe  # noqa: E402
from benchmarks.genfleet import generate_fleet  # noqa: E402
from ci.texttable import Column, table_text  # noqa: E402

CHILD = r"""
import json, resource, sys, time
from datetime import date
from pathlib import Path
mode, repo = sys.argv[1], Path(sys.argv[2])
sys.path.insert(0, sys.argv[3])
started, cpu_started = time.perf_counter(), time.process_time()
if mode == "validate":
    from plumb.cli import run_validation
    outcome = run_validation(repo, today=date(2026, 12, 1), repo_policies=False)
    assert outcome.exit_code() == 0, outcome.problems[:3]
    extra = {"violations": len(outcome.report.violations)}
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
    observed = {n: o.state for n, o in obs.items()}
    planning = time.perf_counter()
    plan = build_plan(fleet, render_desired(fleet), observed)
    planned = time.perf_counter()
    assert plan.refused is None, plan.refused
    if mode == "noop":
        assert plan.is_empty(), plan.change_count()
    extra = {"changes": plan.change_count(), "steps": len(plan.steps),
              "load_s": round(loaded - started, 3),
              "render_plan_s": round(planned - planning, 3)}
elif mode == "rollout":
    from benchmarks.bench_rollouts import SPEC, firmware_changes
    from intent.fleet import load_fleet
    from rollouts.load import load_rollout
    from rollouts.planning import plan_changes
    fleet = load_fleet(repo)
    spec = load_rollout(repo, SPEC).spec
    changes = firmware_changes(fleet)
    extra = {"load_s": round(time.perf_counter() - started, 3)}
    started, cpu_started = time.perf_counter(), time.process_time()  # the planning alone
    plan = plan_changes(fleet, spec, changes, selected=tuple(changes))
    extra["waves"] = len(plan.waves.waves)
elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
status = open("/proc/self/status").read().splitlines()
peak_mb = next(int(l.split()[1]) for l in status if l.startswith("VmHWM:")) / 1024
print(json.dumps({"seconds": elapsed, "cpu": round(cpu, 2), "peak_mb": peak_mb, **extra}))
"""


Row = tuple[str, str, int, dict[str, float]]  # measure, tree, nodes, result

COMMAND = r"""
import atexit, os, sys
def _hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            os.write(2, f"\nbench-vmhwm-kb {line.split()[1]}\n".encode())
atexit.register(_hwm)
sys.path.insert(0, sys.argv[1])
sys.argv = ["plumb", *sys.argv[2:]]
from plumb.cli import main
main()
"""
"""``plumb ARGS`` as a user runs it (the console script's entry point), importing plumb
from the tree measured."""

COMMANDS = {
    "validate": ("validate", "{repo}"),
    "plan": ("plan", "{repo}"),
    "noop": ("plan", "{repo}"),
    "rollout": ("rollout", "plan", "{spec}", "{repo}"),
}


STATE_FILES = ("plumb.db", "plumb.db-wal", "plumb.db-shm", "plumb.db.history")
_state_of: dict[Path, str] = {}  # repo -> whose state database is in place


def _use_state(repo: Path, tree: Path) -> None:
    """Put ``tree``'s own state database in place: two plumb versions may not share one
    (the newer upgrades its schema, and the older then refuses it as too new)."""
    here = repo / ".plumb"
    mine = str(abs(hash(tree)))
    holder = _state_of.get(repo)
    if holder == mine:
        return
    if holder is not None:
        kept = here / f"bench-state-{holder}"
        kept.mkdir(parents=True, exist_ok=True)
        for name in STATE_FILES:
            if (here / name).exists():
                (here / name).rename(kept / name)
    saved = here / f"bench-state-{mine}"
    for name in STATE_FILES:
        if (saved / name).exists():
            (saved / name).rename(here / name)
    _state_of[repo] = mine


def run_command(
    mode: str, repo: Path, tree: Path = ROOT, repeat: int = 1, *, cold: bool = False
) -> dict[str, float]:
    """The whole command in its own process: wall and CPU seconds (user + system) and
    peak RSS of that process, from the kernel's accounting of that child (``wait4``);
    the run with the fewest CPU seconds of ``repeat``. ``cold``: with a parse cache of
    its own, empty."""
    from benchmarks.bench_rollouts import SPEC

    argv = [a.format(repo=repo, spec=SPEC) for a in COMMANDS[mode]]
    best: dict[str, float] | None = None
    _use_state(repo, tree)
    for _ in range(repeat):
        env = {**os.environ, "PLUMB_ACTOR": "bench@scale"}
        empty = tempfile.TemporaryDirectory(prefix="plumb-scale-cold-") if cold else None
        if empty is not None:
            env["PLUMB_CACHE_DIR"] = empty.name
        started = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-c", COMMAND, str(tree), *argv],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
        )
        assert process.stderr is not None
        errors = process.stderr.read()
        _, status, usage = os.wait4(process.pid, 0)  # this child's own accounting
        process.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        if empty is not None:
            empty.cleanup()
        if process.returncode != 0:
            raise RuntimeError(f"plumb {' '.join(argv)}: {errors.decode()[-2000:]}")
        hwm = [line for line in errors.decode().splitlines() if "bench-vmhwm-kb" in line]
        result = {
            "seconds": wall,
            "cpu": round(usage.ru_utime + usage.ru_stime, 2),
            # VmHWM of the process itself: ru_maxrss would carry the parent's peak over exec
            "peak_mb": int(hwm[-1].split()[1]) / 1024 if hwm else float("nan"),
            "load": round(os.getloadavg()[0], 2),
        }
        if best is None or result["cpu"] < best["cpu"]:
            best = result
    assert best is not None
    if repeat > 1:
        best["runs"] = repeat
    return best


def run_child(mode: str, repo: Path, tree: Path = ROOT, repeat: int = 1) -> dict[str, float]:
    """The measurement in a fresh interpreter importing plumb from ``tree``, ``repeat``
    times: the run with the fewest CPU seconds is kept (on a shared machine the others
    lost time to other processes), with ``runs`` set. The parse cache is the run's own
    (``PLUMB_CACHE_DIR``, see :func:`main`)."""
    best: dict[str, float] | None = None
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", CHILD, mode, str(repo), str(tree)],
            check=True,
            capture_output=True,
            text=True,
        )
        result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
        result["load"] = round(os.getloadavg()[0], 2)
        if best is None or result["cpu"] < best["cpu"]:
            best = result
    assert best is not None
    if repeat > 1:
        best["runs"] = repeat
    return best


LAB = r"""
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from intent.fleet import load_fleet
from lab.driver import create_lab
from lab.fleet import lab_db_path
from lab.store import LabStore
fleet, at_intent = load_fleet(Path(sys.argv[2])), sys.argv[3] == "intent"
path = lab_db_path(fleet)
for old in path.parent.glob(f"{path.name}*"):
    old.unlink()
store = LabStore(path)
try:
    create_lab(store, fleet, seed=1, drift=0 if at_intent else 32, older_firmware=not at_intent)
finally:
    store.close()
"""
"""A fresh lab database written by the tree measured: two trees' lab databases may be of
different schema versions (the state is the same: the same seed)."""


def make_lab(repo: Path, *, at_intent: bool, tree: Path = ROOT) -> None:
    state = "intent" if at_intent else "work"
    subprocess.run([sys.executable, "-c", LAB, str(tree), str(repo), state], check=True)


class Rows(list[Row]):
    """The rows so far; each is printed as it comes, so a long run shows progress."""

    def append(self, row: Row) -> None:
        super().append(row)
        measure, label, nodes, result = row
        print(f"  {measure} {label} {nodes}: {json.dumps(result)}", flush=True)


def warm(
    rows: list[Row],
    args: argparse.Namespace,
    repo: Path,
    nodes: int,
    what: tuple[str, str, str, Path],
) -> None:
    """One warm measure (``what``: row name, child mode, tree label, tree) on the
    library path and, with --commands, as the whole command (``$`` rows)."""
    measure, mode, label, tree = what
    rows.append((measure, label, nodes, run_child(mode, repo, tree, args.repeat)))
    if args.commands:
        rows.append((f"$ {measure}", label, nodes, run_command(mode, repo, tree, args.repeat)))


def measure_all(args: argparse.Namespace, trees: list[tuple[str, Path]]) -> list[Row]:
    """Every measurement at every size, on each tree in turn (the same fleet for both)."""
    rows = Rows()
    with tempfile.TemporaryDirectory(prefix="plumb-scale-") as tmp:
        for nodes in args.sizes:
            repo = Path(tmp) / f"fleet-{nodes}"
            started = time.perf_counter()
            compact = args.compact_from is not None and nodes >= args.compact_from
            summary = generate_fleet(repo, nodes, compact=compact)
            print(
                f"generated {nodes} nodes{' (compact topology)' if compact else ''}: "
                f"{summary.links} links, {summary.records} records "
                f"in {time.perf_counter() - started:.1f} s",
                flush=True,
            )

            if args.only in (None, "validate"):
                for label, tree in trees:
                    rows.append(("validate cold", label, nodes, run_child("validate", repo, tree)))
                    if args.commands:
                        cold = run_command("validate", repo, tree, args.repeat, cold=True)
                        rows.append(("$ validate cold", label, nodes, cold))
                    warm(rows, args, repo, nodes, ("validate", "validate", label, tree))
            if args.only in (None, "plan"):
                for label, tree in trees:
                    make_lab(repo, at_intent=False, tree=tree)
                    warm(rows, args, repo, nodes, ("plan", "plan", label, tree))
                for label, tree in trees:
                    make_lab(repo, at_intent=True, tree=tree)
                    warm(rows, args, repo, nodes, ("no-op plan", "noop", label, tree))
            if args.only in (None, "rollout"):
                for label, tree in trees:
                    if args.commands:
                        make_lab(repo, at_intent=False, tree=tree)  # the rollout has work
                    warm(rows, args, repo, nodes, ("rollout plan", "rollout", label, tree))
    return rows


def per_doubling(cpu: float, last_cpu: float, nodes: int, last_nodes: int) -> float:
    """CPU growth per doubling of the fleet between two sizes: 2.0 is linear."""
    return float((cpu / last_cpu) ** (1 / math.log2(nodes / last_nodes)))


def growth_of(rows: list[Row]) -> dict[tuple[str, str, int], float]:
    """Each row's CPU growth per doubling against the same measure and tree at the
    previous size."""
    found: dict[tuple[str, str, int], float] = {}
    previous: dict[tuple[str, str], tuple[int, float]] = {}
    for measure, label, nodes, result in rows:
        last = previous.get((measure, label))
        if last is not None and last[1] > 0 and nodes > last[0]:
            found[measure, label, nodes] = per_doubling(result["cpu"], last[1], nodes, last[0])
        previous[measure, label] = (nodes, result["cpu"])
    return found


GOALS: tuple[tuple[str, int, str, float], ...] = (
    ("$ validate", 4096, "cpu", 2.0),
    ("$ validate cold", 4096, "cpu", 4.0),
    ("$ plan", 4096, "cpu", 3.0),
    ("$ no-op plan", 4096, "cpu", 2.5),
    ("$ rollout plan", 4096, "cpu", 2.0),
    ("$ validate", 4096, "peak_mb", 300),
    ("$ validate", 16384, "cpu", 8.0),
    ("$ validate cold", 16384, "cpu", 16.0),
    ("$ plan", 16384, "cpu", 12.0),
    ("$ validate", 16384, "peak_mb", 1024),
    ("$ plan", 16384, "peak_mb", 1024),
    ("$ validate", 16384, "doubling", 2.1),
    ("$ validate cold", 16384, "doubling", 2.1),
    ("$ plan", 16384, "doubling", 2.1),
)
"""(measure, nodes, figure, limit): each whole command's goal, a figure under its limit
(``doubling``: CPU growth per doubling of the fleet against the previous size)."""

_FIGURE = {"cpu": "CPU s", "peak_mb": "peak MB", "doubling": "CPU x per doubling"}


def goal_rows(rows: list[Row]) -> list[tuple[str, ...]]:
    """One line per goal measured in ``rows``: this tree's figure (and the base's) beside
    the limit, and whether this tree meets it."""
    growth = growth_of(rows)
    figures: dict[tuple[str, str, int, str], float] = {}
    for measure, label, nodes, result in rows:
        for key in ("cpu", "peak_mb"):
            figures[measure, label, nodes, key] = result[key]
        if (measure, label, nodes) in growth:
            figures[measure, label, nodes, "doubling"] = growth[measure, label, nodes]
    out = []
    for measure, nodes, figure, limit in GOALS:
        this = figures.get((measure, "this", nodes, figure))
        if this is None:
            continue
        base = figures.get((measure, "base", nodes, figure))
        out.append(
            (
                measure.lstrip("$ "),
                f"{nodes:,}",
                _FIGURE[figure],
                "" if base is None else f"{base:.2f}",
                f"{this:.2f}",
                f"< {limit:g}" if figure != "doubling" else f"<= {limit:g}",
                "pass" if this < limit or (figure == "doubling" and this <= limit) else "FAIL",
            )
        )
    return out


def print_rows(rows: list[Row]) -> None:
    table = []
    previous: dict[tuple[str, str], int] = {}
    growth = growth_of(rows)
    for measure, label, nodes, result in rows:
        growth_cell, node_growth = "", ""
        if (measure, label) in previous:
            node_growth = f"{nodes / previous[measure, label]:.0f}"
        if (measure, label, nodes) in growth:
            growth_cell = f"{growth[measure, label, nodes]:.2f}"
        previous[measure, label] = nodes
        detail = ", ".join(
            f"{k} {v}" for k, v in result.items() if k not in ("seconds", "cpu", "peak_mb", "load")
        )
        table.append(
            (
                measure,
                label,
                nodes,
                f"{result['seconds']:.2f}",
                f"{result['cpu']:.2f}",
                f"{result['peak_mb']:.0f}",
                f"{result['load']:.2f}",
                node_growth,
                growth_cell,
                detail,
            )
        )
    numbers = ("nodes", "seconds", "CPU s", "peak MB", "load", "nodes x", "CPU x per doubling")
    columns = (Column("measure"), Column("tree"), *(Column(h, "right") for h in numbers))
    print(table_text((*columns, Column("detail")), table), end="")
    goals = goal_rows(rows)
    if goals:
        print("\nGoals of the whole commands (rows starting with `$`):")
        heads = ("base", "this", "goal", "verdict")
        columns = (
            Column("command"),
            Column("nodes", "right"),
            Column("figure"),
            *(Column(h, "right") for h in heads),
        )
        print(table_text(columns, goals), end="")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[32, 512, 4096])
    parser.add_argument("--only", choices=["validate", "plan", "rollout"], default=None)
    parser.add_argument("--base", default=None, help="Also measure this earlier commit.")
    parser.add_argument(
        "--this", default=None, help="Measure this commit instead of the working tree."
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="Run each warm measure this many times and keep the one with the fewest CPU "
        "seconds (the cold validate of the library path runs once: its second run would find "
        "the cache warm; `$ validate cold` gets an empty cache each run).",
    )
    parser.add_argument(
        "--commands",
        action="store_true",
        help="Also time each measure as the whole `plumb ...` command a user runs (rows"
        " starting with `$`), beside the library path.",
    )
    parser.add_argument(
        "--compact-from",
        type=int,
        default=None,
        help="Write fleets of this many nodes and more in the compact topology form"
        " (one inventory/topology.yaml of rules), not one record per rack, device, cable.",
    )
    args = parser.parse_args()
    # Each tree's modules are compiled once and their bytecode kept, as an installed
    # plumb's are: a command measured is not one that compiles its own source.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    with contextlib.ExitStack() as stack:
        # A parse cache of this run's own: the first validate of each size finds it cold.
        os.environ["PLUMB_CACHE_DIR"] = stack.enter_context(
            tempfile.TemporaryDirectory(prefix="plumb-scale-cache-")
        )
        trees = [("this", ROOT if args.this is None else stack.enter_context(checkout(args.this)))]
        if args.base is not None:
            print(f"base: {describe(args.base)}")
            if args.this is not None:
                print(f"this: {describe(args.this)}")
            trees.insert(0, ("base", stack.enter_context(checkout(args.base))))
        rows = measure_all(args, trees)
    print()
    print_rows(rows)


if __name__ == "__main__":
    main()

"""The base install at work: plumb runs in a fresh interpreter in which no module of any
extra can be imported (a meta path finder refuses them, as if they were not installed).
validate, review, plan against a snapshot, schema, summary, --help, the lab and the
pre-commit hook work; a command that needs an extra prints one line naming it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from inventory.extras import EXTRAS
from lab.fleet import snapshot_document
from reconciler.render import render_desired
from reconciler.settings import as_desired_state
from tests.fleetcopy import FleetCopy, copy_orion
from tests.projectdeps import ROOT, declared, modules_of

NOT_INSTALLED = """
import sys

refused = frozenset(sys.argv[1].split(","))


class NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in refused:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NotInstalled())
sys.argv = ["plumb", *sys.argv[2:]]
from plumb.cli import main

main()
"""


@cache
def extra_modules() -> frozenset[str]:
    """The top-level modules of every distribution that only extras declare (the table's
    and the rest their packages bring: ansible, psycopg_binary, ...)."""
    listed = declared()
    base = {m for d, where in listed.items() if where == "base" for m in modules_of(d)}
    extras = {m for d, where in listed.items() if where != "base" for m in modules_of(d)}
    return frozenset((extras | {m for e in EXTRAS for m in e.modules}) - base)


@dataclass(frozen=True)
class Run:
    exit_code: int
    stdout: str
    stderr: str


def plumb(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Run:
    """`plumb ARGS` from ``cwd`` with every module of every extra missing."""
    done = subprocess.run(
        [sys.executable, "-c", NOT_INSTALLED, ",".join(sorted(extra_modules())), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    return Run(done.returncode, done.stdout, done.stderr)


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def change(tmp_path_factory: pytest.TempPathFactory) -> tuple[FleetCopy, Path]:
    """ORION in a git repository with one commit on top (BGP maximum_paths 64 -> 48 on
    the 12 switches), and a snapshot of the fleet as it was before it."""
    fleet = copy_orion(tmp_path_factory.mktemp("light"))
    git(fleet.path, "init", "-q", "-b", "main")
    git(fleet.path, "add", "-A")
    git(fleet.path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "orion")
    states = {name: as_desired_state(s) for name, s in render_desired(fleet.load()).items()}
    snapshot = fleet.path.parent / "before.json"
    taken = datetime(2026, 12, 1, tzinfo=UTC)
    snapshot.write_text(json.dumps(snapshot_document("orion", states, taken)))
    fleet.replace("intent/bgp.yaml", "maximum_paths: 64", "maximum_paths: 48")
    git(fleet.path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "paths")
    return fleet, snapshot


def test_the_refused_modules_are_the_extras() -> None:
    """Every module of the table is refused, and none the base needs."""
    refused = extra_modules()
    assert {m for e in EXTRAS for m in e.modules} <= refused
    assert refused.isdisjoint({"pydantic", "ruamel", "typer", "rich", "git"})


def test_help_and_version(tmp_path: Path) -> None:
    """--help lists every command, the optional ones too; --version answers."""
    done = plumb(tmp_path, "--help")
    assert done.exit_code == 0, done.stderr
    assert "\n  serve " in done.stdout and "\n  rollout " in done.stdout
    assert plumb(tmp_path, "--version").stdout.startswith("plumb ")


def test_validate(change: tuple[FleetCopy, Path]) -> None:
    """validate checks the fleet by schema and policy."""
    done = plumb(change[0].path, "validate", ".")
    assert done.exit_code == 0, done.stderr
    from policies import builtin as _builtin  # noqa: F401  (registers the built-in policies)
    from service.validation import builtin_policies

    assert done.stdout.startswith(f"ok: orion: {len(builtin_policies())} policies, 0 deny")


def test_schema(tmp_path: Path) -> None:
    """schema prints the JSON Schema of every file kind."""
    done = plumb(tmp_path, "schema")
    assert done.exit_code == 0, done.stderr
    assert {"plumb", "inventory", "intent", "rollout"} <= set(json.loads(done.stdout))


def test_summary(change: tuple[FleetCopy, Path]) -> None:
    """summary counts what the fleet declares."""
    done = plumb(change[0].path, "summary", ".", "--format", "json")
    assert done.exit_code == 0, done.stderr
    doc = json.loads(done.stdout)
    assert (doc["fleet"], doc["gpus"], doc["devices"]["gpu-node"]) == ("orion", 256, 32)
    assert doc["links"]["host-leaf"] + doc["links"]["leaf-spine"] == 512


def test_plan_against_a_snapshot(change: tuple[FleetCopy, Path]) -> None:
    """plan --against plans from the recorded states: the 12 switches' maximum_paths."""
    fleet, snapshot = change
    done = plumb(fleet.path, "plan", ".", "--against", str(snapshot), "--format", "json")
    assert done.exit_code == 0, done.stderr
    summary = json.loads(done.stdout)["summary"]
    assert (summary["changes"], summary["devices_changing"]) == (12, 12)


def test_review_plans_the_rollout_with_its_bake(change: tuple[FleetCopy, Path]) -> None:
    """review of the commit passes, plans its rollout and sizes the waves' bakes (the
    Poisson arithmetic that needs no scipy)."""
    done = plumb(change[0].path, "review", ".", "--base", "HEAD~1", "-f", "json")
    assert done.exit_code == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["verdict"] == "pass"
    assert doc["plan"]["summary"]["changes"] == 12
    [rollout] = doc["rollouts"]
    assert rollout["plan"]["targets"]["planned"] == 12
    bake = rollout["plan"]["waves"][0]["bake"]
    assert bake["critical_count"] >= 1 and 0.0 < bake["false_alarm"] < 1.0


def test_the_lab_plans_applies_and_plans_a_rollout(tmp_path: Path) -> None:
    """A lab fleet is made and planned (a plan in a pipe draws no progress bar), a
    rollout over it is planned with its bakes sized, and the plan is applied."""
    fleet = copy_orion(tmp_path)
    assert plumb(fleet.path, "lab", "init", ".").exit_code == 0
    done = plumb(fleet.path, "plan", ".")
    assert done.exit_code == 0 and done.stderr == ""
    assert "243 change(s) on 45 of 45 device(s)" in done.stdout
    rollout = plumb(fleet.path, "rollout", "plan", "firmware-hx8-2026-09", ".")
    assert rollout.exit_code == 0, rollout.stderr
    assert "bake: " in rollout.stdout
    applied = plumb(fleet.path, "apply", ".", "--yes")
    assert applied.exit_code == 0, applied.stderr
    assert "45 applied" in applied.stdout


def test_the_pre_commit_hook_runs(change: tuple[FleetCopy, Path]) -> None:
    """The hook asks pre-commit for plumb alone (no additional dependencies) and its
    command works without any extra."""
    [hook] = YAML(typ="safe").load(ROOT / ".pre-commit-hooks.yaml")
    assert hook["language"] == "python" and "additional_dependencies" not in hook
    program, *args = hook["entry"].split()
    assert program == "plumb"
    done = plumb(change[0].path, *args, ".")
    assert done.exit_code == 0, done.stderr


# Rules put before ORION's catch-all lab rule (the first match wins).
SSH_RULES = "  - {driver: eos, platforms: [eos]}\n  - {driver: sonic, platforms: [sonic]}\n"
HOST_RULE = "  - {driver: ansible, roles: [gpu-node]}\n"
PG_STATE = "state:\n  backend: postgresql\n"
PG_URL = {"PLUMB_STATE_URL": "postgresql://plumb@127.0.0.1:9/orion"}


NEEDS_AN_EXTRA = [
    ("", None, ["rollback", "firmware-hx8-2026-09-1", "."], "rollouts", 2),
    ("", None, ["lab", "defect", ".", "--clear"], "rollouts", 2),
    ("", None, ["demo"], "rollouts", 2),
    ("", None, ["serve", ".", "--once"], "serve", 2),
    ("", None, ["inventory", "import", "netbox", "http://127.0.0.1:9", "."], "netbox", 2),
    (PG_STATE, PG_URL, ["freeze", ".", "--reason", "x"], "postgres", 2),
    (SSH_RULES, None, ["plan", "."], "ssh", 2),
    (SSH_RULES, None, ["drift", "."], "ssh", 1),
    (HOST_RULE, None, ["plan", ".", "--select", "role=gpu-node"], "hosts", 2),
]


@pytest.mark.parametrize(
    ("config", "env", "args", "extra", "code"),
    [pytest.param(*case, id=f"{case[3]}: {' '.join(case[2][:2])}") for case in NEEDS_AN_EXTRA],
)
def test_a_command_that_needs_an_extra_says_which(
    tmp_path: Path,
    config: str,
    env: dict[str, str] | None,
    args: list[str],
    extra: str,
    code: int,
) -> None:
    """One line names the command and the extra; exit 2 (1 where 2 means drift)."""
    fleet = copy_orion(tmp_path)
    if config.startswith("  - "):
        fleet.replace("plumb.yaml", "  - driver: lab ", f"{config}  - driver: lab ")
    else:
        fleet.append("plumb.yaml", config)
    done = plumb(fleet.path, *args, env=env)
    assert done.stderr.splitlines() == [
        f"plumb {args[0]} needs the {extra} extra: pip install 'plumb[{extra}]'"
    ]
    assert (done.exit_code, done.stdout) == (code, "")


def test_an_unknown_command_is_still_unknown(tmp_path: Path) -> None:
    """A mistyped command is "No such command", not a missing extra of some module."""
    done = plumb(tmp_path, "rollouts")
    assert done.exit_code == 2
    assert "No such command 'rollouts'" in done.stderr and "extra" not in done.stderr

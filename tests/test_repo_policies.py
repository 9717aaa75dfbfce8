"""A fleet repo's own policies (``policies/*.py``): they register beside the built-ins
and run like them; a broken one is an input or engine error, never a silent pass; one
cannot replace a built-in; ``--no-repo-policies`` does not execute them."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from plumb.cli import app
from policies import builtin as _builtin  # noqa: F401  (registers the built-in policies)
from policies.engine import BUILTIN
from policies.repo import load_repo_policies
from service.validation import builtin_policies
from tests.fleetcopy import FleetCopy

LEAF_NAMES = '''\
"""Fleet convention: leaves are called leaf-<something>."""

from inventory.models import Role
from policies.engine import Finding, policy


@policy(
    "orion.leaf-names",
    title="Every leaf name starts with leaf-",
    rationale="Dashboards and runbooks find leaves by this prefix.",
    remediation="Rename the device to leaf-<rail>.",
)
def leaf_names(fleet):
    for device in fleet.of_role(Role.leaf):
        if not device.name.startswith("leaf-"):
            yield Finding(
                device.name,
                f"leaf {device.name} does not start with leaf-",
                (fleet.where.devices[device.name],),
                (device.name,),
            )
'''

RAISES_AT_EVALUATION = """\
from policies.engine import policy


@policy("orion.cmdb", title="Matches the CMDB", rationale="r", remediation="x")
def matches_cmdb(fleet):
    raise ConnectionError("cmdb.example: connection refused")
"""

EXITS_AT_EVALUATION = """\
import sys

from policies.engine import policy


@policy("orion.quit", title="Quits", rationale="r", remediation="x")
def quits(fleet):
    sys.exit(0)
"""

REUSES_BUILTIN_ID = """\
from policies.engine import policy


@policy("mtu.defined", title="Mine", rationale="r", remediation="x")
def mine(fleet):
    return []
"""

TOR_LEAF = (
    "  - {name: tor-x1, role: leaf, vendor: arista, model: 7060DX5-64S, platform: eos,"
    " rack: net-01, mgmt: 198.18.1.99, rail: 0}\n"
)


@dataclass(frozen=True)
class Run:
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads(self.stdout)
        return doc


def validate(fleet: FleetCopy, *options: str) -> Run:
    """``plumb validate`` in-process, from the directory holding the fleet."""
    with contextlib.chdir(fleet.path.parent):
        result = CliRunner().invoke(app, ["validate", fleet.path.name, *options])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Run(result.exit_code, result.stdout, result.stderr)


def add_tor_leaf(fleet: FleetCopy) -> None:
    """A leaf named against the convention, with the ASN and router id it needs."""
    fleet.append("inventory/devices/leaves.yaml", TOR_LEAF)
    fleet.replace(
        "intent/bgp.yaml", "    leaf-r7: 64608\n", "    leaf-r7: 64608\n    tor-x1: 64609\n"
    )
    fleet.replace(
        "intent/bgp.yaml",
        "    leaf-r7: 10.255.0.12\n",
        "    leaf-r7: 10.255.0.12\n    tor-x1: 10.255.0.13\n",
    )


def line_of(fleet: FleetCopy, relative: str, needle: str) -> int:
    text = (fleet.path / relative).read_text()
    return text.count("\n", 0, text.index(needle)) + 1


def test_repo_policy_registers_and_runs_through_the_console_script(orion: FleetCopy) -> None:
    """A repo policy importing policies.engine is loaded by the installed plumb and runs."""
    orion.write("policies/naming.py", LEAF_NAMES)
    env = {k: v for k, v in os.environ.items() if k != "PLUMB_DEBUG"}
    done = subprocess.run(
        [str(Path(sys.executable).with_name("plumb")), "validate", "orion", "-f", "json"],
        cwd=orion.path.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert "orion.leaf-names" in [p["id"] for p in doc["policies"]]
    assert doc["summary"]["policies"] == len(builtin_policies()) + 1


def test_repo_policy_finding_fails_validation_at_its_location(orion: FleetCopy) -> None:
    """A repo policy's finding is a deny violation at the location it gives."""
    orion.write("policies/naming.py", LEAF_NAMES)
    add_tor_leaf(orion)
    run = validate(orion, "-f", "json")
    assert run.exit_code == 1
    [violation] = run.json()["violations"]
    assert violation["policy"] == "orion.leaf-names"
    assert violation["message"] == "leaf tor-x1 does not start with leaf-"
    line = line_of(orion, "inventory/devices/leaves.yaml", "{name: tor-x1")
    assert violation["locations"] == [
        {"file": "orion/inventory/devices/leaves.yaml", "line": line, "col": 5}
    ]


def test_repo_policy_finding_can_be_waived(orion: FleetCopy) -> None:
    """Waivers apply to repo policies exactly as to built-in ones."""
    orion.write("policies/naming.py", LEAF_NAMES)
    add_tor_leaf(orion)
    orion.write(
        "policies/waivers.yaml",
        "waivers:\n  - {policy: orion.leaf-names, subject: tor-x1, reason: lab switch,"
        " expires: 2099-01-01}\n",
    )
    run = validate(orion, "-f", "json")
    assert run.exit_code == 0
    assert [v["subject"] for v in run.json()["waived"]] == ["tor-x1"]


def test_syntax_error_in_repo_policy_is_located(orion: FleetCopy) -> None:
    """A repo policy that does not parse is an input error at its file and line."""
    orion.write("policies/naming.py", "from policies.engine import policy\n\ndef broken(:\n")
    run = validate(orion)
    assert run.exit_code == 2
    assert run.stderr.startswith("orion/policies/naming.py:3:12: syntax error: ")


def test_repo_policy_raising_on_import_is_located(orion: FleetCopy) -> None:
    """A repo policy that raises while loading is an input error at the raising line."""
    orion.write("policies/naming.py", "import os\n\nos.environ['PLUMB_CMDB_TOKEN']\n")
    run = validate(orion)
    assert run.exit_code == 2
    assert run.stderr.startswith(
        "orion/policies/naming.py:3:1: loading failed: KeyError: 'PLUMB_CMDB_TOKEN'\n"
    )


def test_repo_policy_exiting_on_import_is_not_a_pass(orion: FleetCopy) -> None:
    """A repo policy calling sys.exit(0) while loading cannot end validation as a pass."""
    orion.write("policies/naming.py", "import sys\n\nsys.exit(0)\n")
    run = validate(orion)
    assert run.exit_code == 2
    assert run.stderr.startswith("orion/policies/naming.py:3:1: loading failed: SystemExit: 0\n")


def test_repo_policy_raising_at_evaluation_is_an_engine_error(orion: FleetCopy) -> None:
    """A repo policy that raises while checking is an engine error: exit 2, never a pass."""
    orion.write("policies/cmdb.py", RAISES_AT_EVALUATION)
    run = validate(orion)
    assert run.exit_code == 2
    assert (
        "ERROR orion.cmdb: the policy raised ConnectionError: cmdb.example: connection refused; "
        "treated as an engine error, not a pass\n"
    ) in run.stdout


def test_repo_policy_exiting_at_evaluation_is_an_engine_error(orion: FleetCopy) -> None:
    """A repo check calling sys.exit(0) is an engine error, not the end of a passing run."""
    orion.write("policies/quit.py", EXITS_AT_EVALUATION)
    orion.replace("intent/mtu.yaml", "host: 9000 ", "host: 9200 ")
    run = validate(orion)
    assert run.exit_code == 2
    assert (
        "ERROR orion.quit: the policy raised RuntimeError: the policy called sys.exit(0); "
        "treated as an engine error, not a pass\n"
    ) in run.stdout
    assert ", 256 deny, " in run.stdout.splitlines()[-1]


def test_repo_policy_cannot_reuse_a_builtin_id(orion: FleetCopy) -> None:
    """A repo policy registering a built-in's id is refused at its decorator line."""
    orion.write("policies/mine.py", REUSES_BUILTIN_ID)
    run = validate(orion)
    assert run.exit_code == 2
    line = line_of(orion, "policies/mine.py", "@policy")
    assert run.stderr.startswith(
        f"orion/policies/mine.py:{line}:1: policy mtu.defined is already a built-in policy\n"
    )


def test_two_repo_policies_cannot_share_an_id(orion: FleetCopy) -> None:
    """The same id registered by two repo files is refused at the second registration."""
    orion.write("policies/a.py", LEAF_NAMES)
    orion.write("policies/b.py", LEAF_NAMES)
    run = validate(orion)
    assert run.exit_code == 2
    line = line_of(orion, "policies/b.py", "@policy")
    assert (
        f"orion/policies/b.py:{line}:1: loading failed: "
        "ValueError: policy orion.leaf-names is registered twice\n"
    ) in run.stderr


def test_repo_policy_symlinked_from_outside_is_refused(orion: FleetCopy) -> None:
    """A policies/*.py symlink that leaves the repo is not executed."""
    outside = orion.path.parent / "elsewhere.py"
    outside.write_text("raise SystemExit('executed')\n")
    (orion.path / "policies" / "linked.py").symlink_to(outside)
    run = validate(orion)
    assert run.exit_code == 2
    assert run.stderr.startswith(
        f"orion/policies/linked.py:1:1: points outside the fleet repo (to {outside.resolve()})\n"
    )


def test_no_repo_policies_skips_them(orion: FleetCopy) -> None:
    """With --no-repo-policies the repo's Python is not executed, broken or not."""
    orion.write("policies/naming.py", "raise SystemExit('executed')\n")
    orion.write("policies/cmdb.py", RAISES_AT_EVALUATION)
    run = validate(orion, "--no-repo-policies", "-f", "json")
    assert run.exit_code == 0
    assert run.json()["summary"]["policies"] == len(builtin_policies())


def test_loading_repo_policies_leaves_the_builtins_alone(orion: FleetCopy) -> None:
    """Repo policies go to a registry of their own; loading twice gives the same result."""
    orion.write("policies/naming.py", LEAF_NAMES)
    builtin_ids = set(BUILTIN.policies)
    first = load_repo_policies(orion.path)
    second = load_repo_policies(orion.path)
    assert [p.id for p in first] == [p.id for p in second] == ["orion.leaf-names"]
    assert set(BUILTIN.policies) == builtin_ids

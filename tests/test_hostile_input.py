"""Broken and hostile fleet repos through the real ``plumb validate``: every one exits 2
with ``file:line:col: message`` lines pointing at the YAML, never a traceback, quickly.

The wrong-type cases and the usage errors run the installed console script in a
subprocess (what a user or a CI job sees, tracebacks included); the rest run the same
typer app in-process to keep the suite fast. Both run from the directory holding the
fleet copy, so locations read ``orion/<file>:<line>:<col>``.
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plumb.cli import app
from tests.fleetcopy import FleetCopy

PLUMB = Path(sys.executable).with_name("plumb")
TIME_LIMIT_S = 5.0  # CPU seconds: bounded work, whatever else the machine is doing


@dataclass(frozen=True)
class Run:
    exit_code: int
    stdout: str
    stderr: str
    seconds: float  # CPU time the run used (its process, or this one in-process)


def plumb_process(cwd: Path, *args: str) -> Run:
    """Run the console script as a user would, from ``cwd``."""
    env = {k: v for k, v in os.environ.items() if k != "PLUMB_DEBUG"}
    start = _children_cpu()
    done = subprocess.run(
        [str(PLUMB), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    return Run(done.returncode, done.stdout, done.stderr, _children_cpu() - start)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def plumb_in_process(cwd: Path, *args: str) -> Run:
    """Run the typer app in this process, from ``cwd``."""
    start = time.process_time()
    with contextlib.chdir(cwd):
        result = CliRunner().invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Run(result.exit_code, result.stdout, result.stderr, time.process_time() - start)


def validate(fleet: FleetCopy, *, in_process: bool = True) -> Run:
    runner = plumb_in_process if in_process else plumb_process
    return runner(fleet.path.parent, "validate", fleet.path.name)


def at(fleet: FleetCopy, relative: str, needle: str, nth: int = 1) -> str:
    """``orion/<relative>:line:col`` of the ``nth`` occurrence of ``needle`` in the file."""
    text = (fleet.path / relative).read_text()
    index = -1
    for _ in range(nth):
        index = text.index(needle, index + 1)
    line = text.count("\n", 0, index) + 1
    col = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"{fleet.path.name}/{relative}:{line}:{col}"


def repo_relative(location: str) -> str:
    """The same location as the fleet repo itself names it (inside messages)."""
    return location.split("/", 1)[1]


def assert_rejected(run: Run) -> None:
    assert run.exit_code == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    assert run.seconds < TIME_LIMIT_S
    assert re.search(r"^error: \d+ problem\(s\) in the fleet repo", run.stderr, re.M)


def reported(run: Run, location: str) -> list[str]:
    """The messages reported at exactly ``location``."""
    prefix = f"{location}: "
    return [line[len(prefix) :] for line in run.stderr.splitlines() if line.startswith(prefix)]


# -- one value or one file wrong --------------------------------------------------------


@pytest.mark.parametrize(
    ("relative", "old", "new", "needle", "expected"),
    [
        (
            "intent/mtu.yaml",
            "host: 9000 ",
            'host: "9000" ',
            '"9000"',
            "mtu.host-leaf.host: Input should be a valid integer (got '9000')",
        ),
        (
            "intent/mtu.yaml",
            "host: 9000 ",
            "host: 9000.5 ",
            "9000.5",
            "mtu.host-leaf.host: Input should be a valid integer (got 9000.5)",
        ),
        (
            "intent/mtu.yaml",
            "host: 9000 ",
            "host: true ",
            "true",
            "mtu.host-leaf.host: expected a number, got true",
        ),
        (
            "inventory/devices/nodes.yaml",
            "speed_gbps: 400, rail: 0",
            "speed_gbps: fast, rail: 0",
            "fast",
            "devices.0.nics.0.speed_gbps: Input should be a valid integer (got 'fast')",
        ),
    ],
    ids=["quoted-int", "float", "bool", "word"],
)
def test_wrong_type_is_located(
    orion: FleetCopy, relative: str, old: str, new: str, needle: str, expected: str
) -> None:
    """A value of the wrong type is reported at the value, with the key path and what came."""
    orion.replace(relative, old, new)
    run = validate(orion, in_process=False)
    assert_rejected(run)
    assert expected in reported(run, at(orion, relative, needle))


def test_unknown_top_level_key_lists_allowed_keys(orion: FleetCopy) -> None:
    """A top-level typo is reported at the key with every allowed section listed."""
    orion.append("intent/mtu.yaml", "mut: {}\n")
    run = validate(orion)
    assert_rejected(run)
    assert reported(run, at(orion, "intent/mtu.yaml", "mut:")) == [
        "mut: unknown key 'mut' (allowed: addressing, bgp, devices, firmware, groups, mtu, qos)"
    ]


def test_unknown_nested_key_lists_allowed_keys(orion: FleetCopy) -> None:
    """A typo inside a section names the key path and the keys allowed at that level."""
    orion.replace("intent/mtu.yaml", "rdma: 4096", "rdma_mtu: 4096")
    run = validate(orion)
    assert_rejected(run)
    assert reported(run, at(orion, "intent/mtu.yaml", "rdma_mtu")) == [
        "mtu.host-leaf.rdma_mtu: unknown key 'rdma_mtu' (allowed: host, rdma, switch_port)"
    ]


def test_duplicate_key_names_the_first_line(orion: FleetCopy) -> None:
    """A key given twice in one mapping is an error at the second, naming the first line."""
    orion.replace(
        "intent/qos.yaml", "  cnp_priority: 6\n", "  cnp_priority: 6\n  roce_priority: 4\n"
    )
    first_line = at(orion, "intent/qos.yaml", "roce_priority").split(":")[1]
    run = validate(orion)
    assert_rejected(run)
    assert reported(run, at(orion, "intent/qos.yaml", "roce_priority", nth=2)) == [
        f"duplicate key 'roce_priority' (first defined at line {first_line})"
    ]


@pytest.mark.parametrize(
    ("relative", "old", "new", "needle", "expected"),
    [
        (
            "intent/mtu.yaml",
            "switch_port: 9214   # leaf",
            "switch_port: 99999   # leaf",
            "99999",
            "mtu.host-leaf.switch_port: Input should be less than or equal to 9216 (got 99999)",
        ),
        (
            "intent/qos.yaml",
            "{dscp: 26, priority: 3}",
            "{dscp: 26, priority: 9}",
            "9}",
            "qos.dscp_map.0.priority: Input should be less than or equal to 7 (got 9)",
        ),
        (
            "inventory/links/backend.yaml",
            "length_m: 4.7}",
            "length_m: -4.7}",
            "-4.7",
            "links.0.length_m: Input should be greater than 0 (got -4.7)",
        ),
    ],
    ids=["mtu", "priority", "cable-length"],
)
def test_out_of_range_number_is_located(
    orion: FleetCopy, relative: str, old: str, new: str, needle: str, expected: str
) -> None:
    """A number outside its range is reported at the value with the bound it broke."""
    orion.replace(relative, old, new)
    run = validate(orion)
    assert_rejected(run)
    assert expected in reported(run, at(orion, relative, needle))


@pytest.mark.parametrize(
    ("content", "location", "expected"),
    [
        (b"", "1:1", "file is empty"),
        (b"# only a comment\n", "1:1", "file is empty"),
        (b"- mtu\n- qos\n", "1:1", "expected a mapping at the top of the file"),
        (b"mtu: {}\n# caf\xe9\n", "2:6", "not UTF-8: byte 0xe9"),
        (b"mtu:\n  host-leaf: {host: 9000\nqos: {}\n", "3:4", "YAML syntax: "),
        (b"mtu: {}\n---\nqos: {}\n", "2:1", "more than one YAML document in one file"),
        (b"mtu: !!python/object:os.system {}\n", "1:6", "is not allowed; plumb files hold"),
        (b"mtu: 0x" + b"f" * 5000 + b"\n", "1:6", "integer is too large"),
    ],
    ids=["empty", "comment-only", "list", "non-utf8", "syntax", "two-docs", "tag", "huge-int"],
)
def test_unreadable_file_is_located(
    orion: FleetCopy, content: bytes, location: str, expected: str
) -> None:
    """A file that is not one plain YAML mapping is reported at the spot that broke it."""
    orion.write("intent/mtu.yaml", content)
    run = validate(orion)
    assert_rejected(run)
    messages = reported(run, f"orion/intent/mtu.yaml:{location}")
    assert any(expected in message for message in messages), run.stderr


def test_alias_bomb_stops_at_the_expansion_limit(orion: FleetCopy) -> None:
    """A billion-laughs file in intent/ is refused at an alias line, in bounded time."""
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]")
    orion.write("intent/lol.yaml", "\n".join(lines) + "\n")
    run = validate(orion)
    assert_rejected(run)
    found = re.findall(
        r"^orion/intent/lol\.yaml:(\d+):\d+: aliases expand to more", run.stderr, re.M
    )
    assert len(found) == 1 and 1 < int(found[0]) <= len(lines)


def test_symlink_leaving_the_repo_is_refused(orion: FleetCopy) -> None:
    """An inventory file that is a symlink to a file outside the repo is not read."""
    secret = orion.path.parent / "secret.yaml"
    secret.write_text("racks: []\n")
    (orion.path / "inventory" / "evil.yaml").symlink_to(secret)
    run = validate(orion)
    assert_rejected(run)
    assert reported(run, "orion/inventory/evil.yaml:1:1") == [
        f"points outside the fleet repo (to {secret.resolve()})"
    ]


def test_symlinked_directory_leaving_the_repo_is_refused(orion: FleetCopy) -> None:
    """A directory symlink out of inventory/ is an error, not silently skipped."""
    outside = orion.path.parent / "elsewhere"
    outside.mkdir()
    (outside / "racks.yaml").write_text("racks: []\n")
    (orion.path / "inventory" / "shared").symlink_to(outside)
    run = validate(orion)
    assert_rejected(run)
    assert reported(run, "orion/inventory/shared:1:1") == [
        f"points outside the fleet repo (to {outside.resolve()})"
    ]


def test_oversize_file_is_refused_before_reading(orion: FleetCopy) -> None:
    """A 50 MB file in intent/ is refused by its size, without being parsed."""
    with open(orion.path / "intent" / "huge.yaml", "wb") as sparse:
        sparse.truncate(50 * 1024 * 1024)
    run = validate(orion)
    assert_rejected(run)
    assert reported(run, "orion/intent/huge.yaml:1:1") == [
        "file is 52,428,800 bytes; the limit is 33,554,432 (split it into several files)"
    ]


@pytest.mark.parametrize(
    ("target", "why"),
    [("orion", "orion is not a fleet repo: no plumb.yaml"), ("no-such-dir", ": no such directory")],
)
@pytest.mark.parametrize("command", ["validate", "summary"])
def test_directory_without_plumb_yaml_is_not_a_fleet_repo(
    orion: FleetCopy, target: str, why: str, command: str
) -> None:
    """A directory without plumb.yaml is not a fleet repo, and a missing one no such
    directory: said as an error, at no made-up file:line."""
    (orion.path / "plumb.yaml").unlink()
    run = plumb_process(orion.path.parent, command, target)
    assert run.exit_code == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    assert f"error: {orion.path.parent / target}{why.removeprefix(target)}" in run.stderr
    assert "plumb.yaml:1:1" not in run.stderr and ":0:0" not in run.stderr


def test_unknown_format_is_a_usage_error(orion: FleetCopy) -> None:
    """An unknown --format exits 2 and lists the formats there are."""
    run = plumb_process(orion.path.parent, "validate", "orion", "--format", "yaml")
    assert run.exit_code == 2
    assert "Traceback" not in run.stdout + run.stderr
    assert "unknown format 'yaml' (choose from text, json, sarif, junit, github)" in run.stderr


def test_every_problem_is_reported_at_once(orion: FleetCopy) -> None:
    """Problems in several files (syntax, schema, bytes, cabling) all come out in one run."""
    orion.append("intent/mtu.yaml", "mut: {}\n")
    orion.write("intent/qos.yaml", "qos: {roce_priority: 3\n")
    orion.write("intent/devices.yaml", b"devices: {}\n# \xff\n")
    orion.append(
        "inventory/links/backend.yaml",
        "  - {a: gpu-n99, a_port: eth0, b: leaf-r0, b_port: Ethernet99, class: host-leaf,"
        " length_m: 3.0}\n",
    )
    run = validate(orion)
    assert_rejected(run)
    assert reported(run, at(orion, "intent/mtu.yaml", "mut:"))
    assert [m for m in run.stderr.splitlines() if m.startswith("orion/intent/qos.yaml:")]
    assert reported(run, "orion/intent/devices.yaml:2:3")
    assert reported(run, at(orion, "inventory/links/backend.yaml", "{a: gpu-n99"))
    assert "error: 4 problem(s) in the fleet repo" in run.stderr


# -- cross-references ------------------------------------------------------------------


def cable(a: str, a_port: str) -> str:
    """A flow-style link entry from ``a:a_port`` to leaf-r0 port Ethernet99 (unused)."""
    return (
        f"{{a: {a}, a_port: {a_port}, b: leaf-r0, b_port: Ethernet99, class: host-leaf, "
        "length_m: 3.0}"
    )


def test_link_to_unknown_device_is_located(orion: FleetCopy) -> None:
    """A cable whose end names no device is reported at the cable's line."""
    orion.append("inventory/links/backend.yaml", f"  - {cable('gpu-n99', 'eth0')}\n")
    run = validate(orion)
    assert_rejected(run)
    assert reported(run, at(orion, "inventory/links/backend.yaml", cable("gpu-n99", "eth0"))) == [
        "link end gpu-n99:eth0: no device 'gpu-n99'"
    ]


def test_host_port_must_be_one_of_its_nics(orion: FleetCopy) -> None:
    """A cable on a port the host does not have is an error listing the host's NICs."""
    orion.append("inventory/links/backend.yaml", f"  - {cable('gpu-n01', 'eth9')}\n")
    run = validate(orion)
    assert_rejected(run)
    assert reported(run, at(orion, "inventory/links/backend.yaml", cable("gpu-n01", "eth9"))) == [
        "gpu-n01 has no NIC 'eth9' (its NICs: eth0, eth1, eth2, eth3, eth4, eth5, eth6, eth7, fe0)"
    ]


def test_port_cabled_twice_names_both_lines(orion: FleetCopy) -> None:
    """A port on two cables is reported at the second cable, naming the first."""
    first = at(orion, "inventory/links/backend.yaml", "{a: gpu-n01, a_port: eth0,")
    orion.append("inventory/links/backend.yaml", f"  - {cable('gpu-n01', 'eth0')}\n")
    run = validate(orion)
    assert_rejected(run)
    assert reported(run, at(orion, "inventory/links/backend.yaml", cable("gpu-n01", "eth0"))) == [
        f"port gpu-n01:eth0 is already cabled at {repo_relative(first)}"
    ]


def test_same_field_from_two_files_names_both(orion: FleetCopy) -> None:
    """Two files setting one device's field at the same scope name both files and lines."""
    orion.set_device_overrides("  leaf-r3:\n    bgp: {asn: 64999}\n")
    first = at(orion, "intent/bgp.yaml", "64604")
    run = validate(orion)
    assert_rejected(run)
    assert reported(run, at(orion, "intent/devices.yaml", "64999")) == [
        f"bgp.asn of leaf-r3 is already set at {repo_relative(first)} (same device scope): "
        "every field has exactly one source"
    ]


def test_two_groups_setting_one_field_of_one_device_clash(orion: FleetCopy) -> None:
    """Two groups selecting the same device for the same field is an error naming both."""
    first = at(orion, "intent/groups.yaml", "hx8-2026.09")
    orion.append(
        "intent/groups.yaml",
        "  - name: n07-pinned\n    match: {names: [gpu-n07]}\n"
        "    set: {firmware: {bundle: hx8-2026.06}}\n",
    )
    run = validate(orion)
    assert_rejected(run)
    assert reported(run, at(orion, "intent/groups.yaml", "hx8-2026.06")) == [
        f"firmware.bundle of gpu-n07 is set by both group hx8-nodes ({repo_relative(first)}) "
        "and group n07-pinned: two groups select the same device for the same field"
    ]


def test_unknown_bundle_is_reported_once_per_line(orion: FleetCopy) -> None:
    """A group naming an unknown bundle is one problem at that line, not one per device."""
    orion.replace("intent/groups.yaml", "bundle: hx8-2026.09", "bundle: hx8-2099.01")
    run = validate(orion)
    assert_rejected(run)
    assert reported(run, at(orion, "intent/groups.yaml", "hx8-2099.01")) == [
        "no bundle 'hx8-2099.01' (known: eos-4.31.2F, eos-4.32.2F, hx8-2026.06, hx8-2026.09, "
        "sonic-202405, sonic-202411); used by gpu-n01, gpu-n02, gpu-n03 and 29 more"
    ]

"""``plumb validate``: exit codes from the outcome (0 clean, 1 deny, 2 bad input or
usage), where each stream goes, ``--output``, ``--today`` and waivers, and that no
error reaches the user as a traceback."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

import plumb.cli
from inventory.problems import InputError, Location, Problem
from plumb.cli import app
from policies import builtin as _builtin  # noqa: F401  (registers the built-in policies)
from service.validation import builtin_policies
from tests.fleetcopy import FleetCopy

ROOT = Path(__file__).resolve().parent.parent
POLICIES = len(builtin_policies())
WAIVER = """\
waivers:
  - policy: mtu.host-fits-port
    subject: "gpu-n*:eth*"
    reason: host MTU trial on the backend, ticket NET-4411
    expires: 2027-01-15
"""


@dataclass(frozen=True)
class Run:
    exit_code: int
    stdout: str
    stderr: str


def plumb_in(cwd: Path, *args: str) -> Run:
    """The typer app in-process, from ``cwd``."""
    with contextlib.chdir(cwd):
        result = CliRunner().invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Run(result.exit_code, result.stdout, result.stderr)


def validate(fleet: FleetCopy, *options: str) -> Run:
    return plumb_in(fleet.path.parent, "validate", fleet.path.name, *options)


def break_host_mtu(fleet: FleetCopy) -> None:
    fleet.replace("intent/mtu.yaml", "host: 9000 ", "host: 9200 ")


def test_example_fleet_is_clean_through_the_console_script() -> None:
    """examples/orion validates with exit 0 and one ok line on stdout, nothing on stderr."""
    env = {k: v for k, v in os.environ.items() if k != "PLUMB_DEBUG"}
    done = subprocess.run(
        [str(Path(sys.executable).with_name("plumb")), "validate", "examples/orion"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        f"ok: orion: {POLICIES} policies, 0 deny, 0 warn, 0 waived, 0 engine errors\n"
    )


def test_deny_violation_exits_1_with_the_report_on_stdout(orion: FleetCopy) -> None:
    """A deny violation exits 1; the report goes to stdout."""
    break_host_mtu(orion)
    run = validate(orion)
    assert run.exit_code == 1
    assert run.stderr == ""
    assert run.stdout.startswith("DENY mtu.host-fits-port: ")


def test_input_problems_exit_2_on_stderr(orion: FleetCopy) -> None:
    """A fleet that does not load exits 2 with its problems on stderr, stdout empty."""
    orion.replace("intent/mtu.yaml", "host: 9000 ", "host: nine-thousand ")
    run = validate(orion)
    assert run.exit_code == 2
    assert run.stdout == ""
    assert run.stderr.startswith("orion/intent/mtu.yaml:7:11: mtu.host-leaf.host: ")


def test_path_defaults_to_the_working_directory(orion: FleetCopy) -> None:
    """Without a path, the fleet repo is the current directory."""
    break_host_mtu(orion)
    run = plumb_in(orion.path, "validate", "--format", "github")
    assert run.exit_code == 1
    assert run.stdout.startswith("::error file=intent/mtu.yaml,line=7,col=11,")


def test_output_writes_the_same_report(orion: FleetCopy, tmp_path: Path) -> None:
    """--output writes exactly what is printed, in the chosen format."""
    break_host_mtu(orion)
    report = tmp_path / "report.sarif"
    run = validate(orion, "--format", "sarif", "--output", str(report))
    assert run.exit_code == 1
    assert report.read_text() == run.stdout


def test_unwritable_output_is_a_usage_error(orion: FleetCopy, tmp_path: Path) -> None:
    """An --output path that cannot be written exits 2 with a message, not an internal error."""
    run = validate(orion, "--output", str(tmp_path / "missing-dir" / "report.txt"))
    assert run.exit_code == 2
    assert run.stderr.startswith("error: cannot write --output ")
    assert "No such file or directory" in run.stderr


def test_today_must_be_a_date(orion: FleetCopy) -> None:
    """--today that is not YYYY-MM-DD exits 2 and says what it wanted."""
    run = validate(orion, "--today", "15/01/2027")
    assert run.exit_code == 2
    assert run.stderr == "error: --today '15/01/2027' is not a date (YYYY-MM-DD)\n"


def test_waiver_in_force_moves_violations_aside(orion: FleetCopy) -> None:
    """Violations matched by a waiver in force are counted as waived and exit 0."""
    break_host_mtu(orion)
    orion.write("policies/waivers.yaml", WAIVER)
    run = validate(orion, "--today", "2027-01-15")
    assert run.exit_code == 0
    assert run.stdout == (
        f"ok: orion: {POLICIES} policies, 0 deny, 0 warn, 256 waived, 0 engine errors\n"
    )


def test_expired_waiver_fails_at_its_own_line(orion: FleetCopy) -> None:
    """The day after its expiry a waiver waives nothing and is a deny at its own line."""
    break_host_mtu(orion)
    orion.write("policies/waivers.yaml", WAIVER)
    run = validate(orion, "--today", "2027-01-16")
    assert run.exit_code == 1
    assert "DENY waiver.expired: waivers must not be expired (1)\n" in run.stdout
    assert (
        "  orion/policies/waivers.yaml:2:5: waiver for mtu.host-fits-port on gpu-n*:eth* "
        "expired on 2027-01-15 (host MTU trial on the backend, ticket NET-4411)\n"
    ) in run.stdout
    assert ", 257 deny, 0 warn, 0 waived," in run.stdout.splitlines()[-1]


def test_unexpected_error_is_one_line_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bug in plumb prints one line and exits 70 (3 is a held rollout); PLUMB_DEBUG=1
    shows the traceback."""

    def explode() -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(plumb.cli, "app", explode)
    monkeypatch.delenv("PLUMB_DEBUG", raising=False)
    with pytest.raises(SystemExit) as exited:
        plumb.cli.main()
    assert exited.value.code == 70
    assert capsys.readouterr().err == (
        "plumb: internal error: RuntimeError: disk on fire\n"
        "(set PLUMB_DEBUG=1 to see the traceback)\n"
    )
    monkeypatch.setenv("PLUMB_DEBUG", "1")
    with pytest.raises(RuntimeError, match="disk on fire"):
        plumb.cli.main()


def test_plumb_debug_zero_keeps_the_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """PLUMB_DEBUG=0 (as off, false, no) is off: still one line and exit 70."""

    def explode() -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(plumb.cli, "app", explode)
    monkeypatch.setenv("PLUMB_DEBUG", "0")
    with pytest.raises(SystemExit) as exited:
        plumb.cli.main()
    assert exited.value.code == 70
    assert "internal error: RuntimeError: disk on fire" in capsys.readouterr().err


def test_input_error_escaping_a_command_is_printed_located(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An InputError that reaches the entry point prints its problems and exits 2."""

    def refuse() -> None:
        raise InputError([Problem(Location("intent/mtu.yaml", 3, 5), "bad value")])

    monkeypatch.setattr(plumb.cli, "app", refuse)
    with pytest.raises(SystemExit) as exited:
        plumb.cli.main()
    assert exited.value.code == 2
    assert capsys.readouterr().err == "intent/mtu.yaml:3:5: bad value\n"

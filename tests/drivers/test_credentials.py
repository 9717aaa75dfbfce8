"""Switch credentials and host keys: credentials come from the environment or a private
file outside the repo, never show up anywhere plumb writes, and an unknown or changed
host key stops the driver for good."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from reconciler.drivers.ssh_exec import MASK, Result, SessionLog
from reconciler.drivers.switch_access import Credentials, load_credentials
from reconciler.errors import DeviceAuthError, Handling, HostKeyMismatch, classify
from reconciler.targets import TargetError, Targets
from tests.drivers.conftest import FleetRun, Switches
from tests.fleetcopy import copy_orion
from tests.switchsim import Fault


def every_file(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


# -- where credentials come from ------------------------------------------------------------


def test_credentials_come_from_the_named_environment_variables() -> None:
    """Defaults PLUMB_SWITCH_USERNAME / _PASSWORD; a rule may name other variables."""
    env = {"PLUMB_SWITCH_USERNAME": "ops", "PLUMB_SWITCH_PASSWORD": "pw1", "OTHER": "pw2"}
    assert load_credentials({}, Path("/repo"), env) == Credentials("ops", "pw1")
    named = load_credentials({"password_env": "OTHER"}, Path("/repo"), env)
    assert named.password == "pw2"


def test_missing_credentials_name_the_variable_not_a_value(tmp_path: Path) -> None:
    """Without credentials the factory fails, naming what to set."""
    copy = copy_orion(tmp_path)
    copy.set_drivers("drivers:\n  - driver: eos\n    platforms: [eos]\n")
    saved = {k: os.environ.pop(k, None) for k in ("PLUMB_SWITCH_USERNAME", "PLUMB_SWITCH_PASSWORD")}
    try:
        with pytest.raises(TargetError, match="PLUMB_SWITCH_USERNAME"):
            Targets.for_fleet(copy.load()).driver("leaf-r0")
    finally:
        os.environ.update({k: v for k, v in saved.items() if v is not None})


def write_secret_file(path: Path, mode: int = 0o600) -> Path:
    path.write_text(json.dumps({"username": "ops", "password": "from-file-pw"}))
    path.chmod(mode)
    return path


def test_a_private_credentials_file_outside_the_repo_is_used(tmp_path: Path) -> None:
    """A 0600 JSON file outside the fleet repo supplies username and password."""
    secret = write_secret_file(tmp_path / "switch-creds.json")
    found = load_credentials({"credentials_file": str(secret)}, tmp_path / "repo", {})
    assert found == Credentials("ops", "from-file-pw")


def test_a_credentials_file_inside_the_repo_is_refused(tmp_path: Path) -> None:
    """Credentials inside the fleet repo (even through a symlink) would end up in git."""
    repo = tmp_path / "repo"
    repo.mkdir()
    inside = write_secret_file(repo / "creds.json")
    with pytest.raises(ValueError, match="inside the fleet repo"):
        load_credentials({"credentials_file": str(inside)}, repo, {})
    link = tmp_path / "link.json"
    link.symlink_to(inside)
    with pytest.raises(ValueError, match="inside the fleet repo"):
        load_credentials({"credentials_file": str(link)}, repo, {})


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644])
def test_a_credentials_file_others_can_read_is_refused(tmp_path: Path, mode: int) -> None:
    """Group- or world-readable credentials are refused, with the fix in the message."""
    secret = write_secret_file(tmp_path / "creds.json", mode)
    with pytest.raises(ValueError, match="chmod 600"):
        load_credentials({"credentials_file": str(secret)}, tmp_path / "repo", {})


def test_credentials_never_show_in_their_repr() -> None:
    """A Credentials object printed or logged shows the username only."""
    shown = repr(Credentials("ops", "hunter2-secret", "enable-secret"))
    assert "ops" in shown and "hunter2" not in shown and "enable-secret" not in shown


# -- host keys --------------------------------------------------------------------------------


def test_a_changed_host_key_is_a_terminal_mismatch(switches: Switches) -> None:
    """A switch presenting another key than known_hosts holds: HostKeyMismatch, terminal."""
    ref = switches.add("eos")
    switches.sim.set_fault(ref.name, Fault(host_key_changed=True))
    with pytest.raises(HostKeyMismatch) as caught:
        switches.driver("eos").observe(ref)
    assert classify(caught.value) is Handling.terminal


def test_an_unknown_host_is_refused_unless_strict_checking_is_off(switches: Switches) -> None:
    """With ssh_strict (the default) a host missing from known_hosts is refused."""
    ref = switches.add("eos")
    empty = switches.tmp / "empty_known_hosts"
    empty.touch()
    with pytest.raises(HostKeyMismatch, match="not found in known_hosts"):
        switches.driver("eos", known_hosts=str(empty)).observe(ref)
    with pytest.raises(HostKeyMismatch, match="does not exist"):
        switches.driver("eos", known_hosts=str(switches.tmp / "missing")).observe(ref)
    lax = switches.driver("eos", known_hosts=str(empty), ssh_strict=False)
    assert lax.observe(ref)["system/hostname"] == ref.name


# -- credentials never leak -------------------------------------------------------------------


def test_a_refused_login_does_not_echo_the_password(switches: Switches) -> None:
    """Authentication errors carry no secret, neither the right nor the wrong one."""
    ref = switches.add("eos")
    with pytest.raises(DeviceAuthError) as caught:
        switches.driver("eos", password="wrong-but-secret-pw").observe(ref)
    text = f"{caught.value} {caught.value.__cause__}"
    assert "wrong-but-secret-pw" not in text and switches.password not in text


def test_observe_output_holds_no_credentials(switches: Switches) -> None:
    """The observed state is device data only."""
    ref = switches.add("sonic")
    state = switches.driver("sonic").observe(ref)
    assert switches.password not in json.dumps(state) and "plumb-ops" not in json.dumps(state)


def test_nothing_plumb_wrote_holds_the_password(fleet_run: FleetRun) -> None:
    """After plan, apply and plan: no CLI output, plan JSON, state or lab DB, audit log or
    netmiko session log contains the switch password."""
    secret = fleet_run.password.encode()
    for name, run in fleet_run.runs.items():
        assert fleet_run.password not in run.output, name
    written = every_file(fleet_run.state_dir)
    assert any(p.name.endswith(".db") for p in written)
    logs = every_file(fleet_run.outside / "logs")
    assert {p.stem for p in logs} >= {"leaf-r0", "leaf-r1", "spine-1"}
    assert all(p.stat().st_size > 0 for p in logs)
    for path in written + logs:
        assert secret not in path.read_bytes(), path


def test_session_logs_are_private(fleet_run: FleetRun) -> None:
    """netmiko session logs are created readable by their owner only."""
    folder = fleet_run.outside / "logs"
    assert folder.stat().st_mode & 0o077 == 0
    assert all(p.stat().st_mode & 0o077 == 0 for p in every_file(folder))


def test_a_sonic_session_log_holds_each_command_its_status_and_output(
    switches: Switches,
) -> None:
    """With session_log_dir, every exec command is appended to <device>.log with its exit
    status and output (a refused one too), owner-only, and never the password."""
    ref = switches.add("sonic")
    folder = switches.tmp / "logs"
    driver = switches.driver("sonic", session_log_dir=str(folder))
    driver.observe(ref)
    with driver.exec.session(ref) as session:
        assert session.run("no-such-command").status == 127
    driver.close()
    switches.driver("sonic", session_log_dir=str(folder)).observe(ref)  # a later run
    log = folder / f"{ref.name}.log"
    text = log.read_text()
    assert text.count("$ show version") == 2  # appended, not replaced
    assert "[exit status 0]" in text and "SONiC Software Version" in text
    assert "$ no-such-command\n[exit status 127]\n" in text and "command not found" in text
    assert "as plumb-ops" in text and switches.password not in text
    assert folder.stat().st_mode & 0o777 == 0o700 and log.stat().st_mode & 0o777 == 0o600


def test_no_session_log_is_written_without_the_option(switches: Switches) -> None:
    """Without session_log_dir the SONiC driver writes no file at all."""
    ref = switches.add("sonic")
    before = set(every_file(switches.tmp))
    switches.driver("sonic").observe(ref)
    assert set(every_file(switches.tmp)) == before


def test_a_session_log_masks_every_secret_wherever_it_appears(tmp_path: Path) -> None:
    """A secret echoed in a command, its output, its error stream or an exception is
    masked (the longer secret first, so no tail of it survives), and a log file made
    with wider rights is narrowed to its owner."""
    log = SessionLog(tmp_path / "logs", "leaf-9", ("pw-1", "pw-1-enable"))
    (tmp_path / "logs").mkdir(mode=0o700)
    log.path.write_text("earlier run\n")
    log.path.chmod(0o644)
    log.command("echo pw-1-enable", Result("pw-1\n", "bad pw-1-enable", 1))
    log.command("show version", TimeoutError("no answer; pw-1"))
    text = log.path.read_text()
    assert "pw-1" not in text
    assert f"$ echo {MASK}\n[exit status 1]\n[stdout]\n{MASK}\n[stderr]\nbad {MASK}\n" in text
    assert f"[no exit status: TimeoutError: no answer; {MASK}]" in text
    assert text.startswith("earlier run\n")
    assert log.path.stat().st_mode & 0o777 == 0o600

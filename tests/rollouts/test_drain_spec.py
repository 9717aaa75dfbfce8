"""The spec's ``drain`` and ``acceptance``, the site-command drainer and the local
command runner (real processes, real timeouts)."""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from rollouts.commands import LocalCommands
from rollouts.drain import CommandDrainer
from rollouts.spec import AcceptanceRun, DrainCommands, DrainVia, OnTimeout, RolloutSpec


def _spec(**extra: Any) -> RolloutSpec:
    return RolloutSpec.model_validate({"name": "x", "targets": {"select": "gpu-n*"}, **extra})


def test_drain_true_is_the_lab_drain_and_false_is_none() -> None:
    assert _spec(drain=True).drain is not None
    assert _spec(drain=True).drain.via is DrainVia.lab  # type: ignore[union-attr]
    assert _spec(drain=False).drain is None and not _spec().drains


def test_a_slurm_drain_with_its_timeout() -> None:
    drain = _spec(drain={"via": "slurm", "timeout_minutes": 30, "on_timeout": "cancel"}).drain
    assert drain is not None
    assert (drain.via, drain.timeout_minutes, drain.on_timeout) == (
        DrainVia.slurm,
        30.0,
        OnTimeout.cancel,
    )


def test_via_command_needs_its_commands_and_only_it() -> None:
    with pytest.raises(ValidationError, match="exactly when via is command"):
        _spec(drain={"via": "command"})
    commands = {"drain": "d {node}", "drained": "c {node}", "resume": "r {node}"}
    with pytest.raises(ValidationError, match="exactly when via is command"):
        _spec(drain={"via": "slurm", "command": commands})
    assert _spec(drain={"via": "command", "command": commands}).drains


def test_acceptance_per_role_needs_a_drain() -> None:
    hook = {"gpu-node": {"command": "dcgmi diag -r 2", "timeout_seconds": 900}}
    with pytest.raises(ValidationError, match="only a drained node runs acceptance"):
        _spec(acceptance=hook)
    spec = _spec(drain=True, acceptance=hook)
    assert [(r.value, a.run) for r, a in spec.acceptance.items()] == [
        ("gpu-node", AcceptanceRun.node)
    ]
    with pytest.raises(ValidationError):
        _spec(drain=True, acceptance={"gpu-nodes": hook["gpu-node"]})


def test_the_command_drainer_runs_the_sites_commands(tmp_path: Path) -> None:
    """Drain writes the reason, drained checks a file, resume removes it; a failing
    command is the node's error."""
    py = sys.executable
    write = "import sys,pathlib; pathlib.Path(sys.argv[1]).write_text(sys.argv[2])"
    check = "import sys,pathlib; sys.exit(0 if pathlib.Path(sys.argv[1]).exists() else 3)"
    remove = "import sys,pathlib; pathlib.Path(sys.argv[1]).unlink()"
    where = f"{tmp_path}/{{node}}"
    drainer = CommandDrainer(
        DrainCommands(
            drain=f'{py} -c "{write}" {where} "{{reason}}"',
            drained=f'{py} -c "{check}" {where}',
            resume=f'{py} -c "{remove}" {where}',
        ),
        LocalCommands(),
    )
    assert drainer.claim("r1", ["n1"], "plumb rollout r1: wave 1") == {"n1": None}
    assert (tmp_path / "n1").read_text() == "plumb rollout r1: wave 1"
    assert drainer.drained("r1", ["n1", "n2"]) == {"n1": True, "n2": False}
    assert drainer.release("r1", ["n1"]) == {"n1": None}
    failed = drainer.release("r1", ["n1"])["n1"]
    assert failed is not None and "exit status 1" in failed and "FileNotFoundError" in failed


def test_a_command_past_its_timeout_is_killed_with_its_children(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    script = f"sleep 300 & echo $! > {pidfile}; sleep 300"
    result = LocalCommands().run("n1", ["sh", "-c", script], 0.3)
    assert result.exit_status is None and result.error == "timed out after 0.3 s"
    stat = Path(f"/proc/{int(pidfile.read_text())}/stat")

    def gone() -> bool:  # exited (a zombie only waits for init to reap it)
        with contextlib.suppress(OSError):
            return stat.read_text().split(") ")[1].startswith(("Z", "X"))
        return True

    for _ in range(300):  # SIGKILL lands at once; the loop only bounds a broken kill
        if gone():
            break
        time.sleep(0.1)
    assert gone(), "the command's background child outlived its timeout"


def test_a_missing_program_is_an_error_not_an_exception() -> None:
    result = LocalCommands().run("n1", ["/nonexistent/acceptance"], 5)
    assert not result.ok and (result.error or "").startswith("could not run")

"""Commands a rollout runs outside the reconciler: a site's drain commands, Slurm's
clients, acceptance tests. :class:`CommandRunner` is the contract (run one command for
one node, with a timeout); :class:`LocalCommands` runs it on this machine and is the
only place in ``rollouts`` that starts a process. Command lines from a spec are split
like a shell would and never run through one.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class CommandResult:
    """How one command ended: ``exit_status`` None when it could not run or timed out
    (``error`` says which)."""

    argv: tuple[str, ...]
    exit_status: int | None
    stdout: str
    stderr: str
    seconds: float
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.exit_status == 0

    def why(self) -> str:
        """One line on a failure: the error, else the exit status and the last line."""
        if self.error is not None:
            return self.error
        last = (self.stderr.strip() or self.stdout.strip()).splitlines()[-1:] or [""]
        return f"exit status {self.exit_status}" + (f": {last[0][:200]}" if last[0] else "")


class CommandRunner(Protocol):
    """Runs a command for a node (on the node itself, or here)."""

    def run(self, node: str, argv: Sequence[str], timeout: float) -> CommandResult: ...


def command_argv(line: str, values: Mapping[str, str]) -> list[str]:
    """Split a spec's command line and fill ``{node}``, ``{reason}`` ... in each word
    (a value never splits into more words, whatever it holds)."""
    words = shlex.split(line)
    out: list[str] = []
    for word in words:
        for key, value in values.items():
            word = word.replace("{" + key + "}", value)
        out.append(word)
    return out


def figures(output: str) -> dict[str, float | str]:
    """``key=value`` lines of an acceptance test's output: numbers as numbers (a unit
    after the number is dropped: ``busbw=389.2 GB/s`` gives 389.2), the rest as text."""
    found: dict[str, float | str] = {}
    for line in output.splitlines():
        key, sep, value = line.strip().partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or not key.replace("_", "").replace(".", "").isalnum():
            continue
        head = value.split()[0] if value.split() else ""
        try:
            found[key] = float(head)
        except ValueError:
            found[key] = value[:200]
    return found


class LocalCommands:
    """Runs commands on this machine, in their own session (a timeout kills the whole
    process group), with the environment plumb runs in."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self.env = dict(env) if env is not None else None

    def run(self, node: str, argv: Sequence[str], timeout: float) -> CommandResult:
        started = time.monotonic()
        env = None if self.env is None else {**os.environ, **self.env}
        try:
            process = subprocess.Popen(
                list(argv),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                text=True,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            return CommandResult(
                tuple(argv), None, "", "", time.monotonic() - started, f"could not run: {exc}"
            )
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
            return CommandResult(
                tuple(argv),
                None,
                out,
                err,
                time.monotonic() - started,
                f"timed out after {timeout:g} s",
            )
        return CommandResult(
            tuple(argv),
            process.returncode,
            out,
            err,
            time.monotonic() - started,
        )

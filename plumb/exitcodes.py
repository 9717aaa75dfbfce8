"""Every command's exit codes, in one table: docs/exit-codes.md is rendered from it
and a test checks each command's code against it.

The same number means the same thing in every command, with one documented
exception: where exit 2 means "changes pending" (``plan --detailed-exitcode``,
``drift``), bad input and usage errors exit 1 instead (plumb/pendingcmd.py).
"""

from __future__ import annotations

OK, NO, BAD_INPUT, HELD, INTERNAL, INTERRUPTED, TERMINATED = 0, 1, 2, 3, 70, 130, 143

MEANING = {
    OK: "success: done, clean, nothing pending",
    NO: "the policies, the plan or a safety rule say no: a deny violation, a refused or"
    " stale plan, a held lease, a freeze, an aborted rollout, a failed or unknown device",
    BAD_INPUT: "bad input or usage: every problem as file:line:col, or one `error:` line",
    HELD: "a rollout stopped where a person decides: a held wave or one awaiting promotion"
    " (resume or promote later)",
    INTERNAL: "an internal error in plumb itself: one line, no traceback (PLUMB_DEBUG=1 shows"
    " it); never a policy or device outcome",
    INTERRUPTED: "interrupted (Ctrl-C): no further device started; what was written is said",
    TERMINATED: "terminated (SIGTERM): as 130",
}
EVERY = (OK, BAD_INPUT, INTERNAL, INTERRUPTED, TERMINATED)
"""Codes any command may exit with."""

PENDING = "2 means changes pending (drift found); bad input or usage exits 1"

COMMANDS: dict[str, tuple[tuple[int, ...], str]] = {
    "validate": ((NO,), "1: a deny violation (an expired waiver counts)"),
    "schema": ((), ""),
    "summary": ((), ""),
    "review": ((NO,), "1: the change breaks a policy or its plan is refused"),
    "snapshot": ((NO,), "1: a device could not be observed"),
    "plan": ((NO,), "1: refused or unknown devices; with --detailed-exitcode " + PENDING),
    "apply": ((NO,), "1: not applied in full (refused, stale, frozen, lease held, a device)"),
    "drift": ((NO,), PENDING + "; 1 also when a device is unknown"),
    "freeze": ((), ""),
    "unfreeze": ((), ""),
    "audit show": ((), ""),
    "audit verify": ((NO,), "1: the hash chain does not verify"),
    "lease show": ((), ""),
    "lease break": ((), ""),
    "pins list": ((), ""),
    "pins release": ((), ""),
    "state migrate": ((NO,), "1: the target database refuses or cannot be reached"),
    "state upgrade": ((), ""),
    "state new-history": ((NO,), "1: the database is there: its history goes on"),
    "inventory export": ((), ""),
    "inventory expand": ((), ""),
    "inventory import": ((NO,), "1: drift under --check, or a record NetBox and git disagree on"),
    "lab init": ((), ""),
    "lab reset": ((), ""),
    "lab show": ((), ""),
    "lab fault": ((), ""),
    "lab miscable": ((), ""),
    "lab clock": ((), ""),
    "lab defect": ((), ""),
    "lab down": ((), ""),
    "verify": ((NO,), "1: a BGP session down, a path black-holed or not probed"),
    "rollout plan": ((NO,), "1: the spec cannot be planned within its caps"),
    "rollout start": ((NO, HELD), "1 aborted or refused; 3 held or awaiting promotion"),
    "rollout resume": ((NO, HELD), "1 aborted or refused; 3 held again"),
    "rollout promote": ((NO, HELD), "1 refused; 3 waits for the next promotion"),
    "rollout approve": ((NO,), "1: refused (not committed, already active)"),
    "rollout abort": ((NO,), "1: nothing to abort"),
    "rollout status": ((NO,), "1: no such rollout recorded"),
    "rollout list": ((), ""),
    "rollback": ((NO,), "1: a target not restored (failed, kept at intent, not attempted)"),
    "serve": ((NO,), "1: the state database cannot be opened"),
    "demo": ((NO,), "1: a step of the demo did not go as shown"),
}


def allowed(command: str) -> set[int]:
    """The codes ``command`` may exit with."""
    return set(EVERY) | set(COMMANDS[command][0])


def table_markdown() -> str:
    """docs/exit-codes.md's tables."""
    lines = ["| code | meaning |", "| --- | --- |"]
    lines += [f"| `{code}` | {text} |" for code, text in MEANING.items()]
    lines += ["", "| command | besides 0, 2, 70, 130, 143 |", "| --- | --- |"]
    for command, (_codes, text) in COMMANDS.items():
        lines.append(f"| `plumb {command}` | {text or '-'} |")
    return "\n".join(lines) + "\n"

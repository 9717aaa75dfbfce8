"""What a dialect shell answers to one input line.

A shell turns a line into a `Reply`: the text to print and what the SSH
session must do next (print the prompt, close, drop the TCP connection, or
reboot the device).  Shells never touch the network; the session loop in
`server` carries out the action.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Action(enum.Enum):
    """What the session does after printing a reply."""

    PROMPT = "prompt"
    CLOSE = "close"
    DROP = "drop"
    REBOOT = "reboot"


@dataclass(frozen=True)
class Reply:
    """Output of one command, the follow-up action and how long to withhold it."""

    text: str = ""
    action: Action = Action.PROMPT
    delay: float = 0.0


class CliError(Exception):
    """A command was refused; the message is printed verbatim."""


def invalid(detail: str = "") -> CliError:
    """An EOS-style ``% Invalid input`` error, optionally with a reason."""
    return CliError(f"% Invalid input ({detail})" if detail else "% Invalid input")

"""What the service floor refuses with: one exception the front doors turn into their
own output (the CLI prints ``error: message`` and exits ``code``; the controller logs
it and carries on with its next turn)."""

from __future__ import annotations


class ServiceError(Exception):
    """An operation refused or impossible; ``message`` says why. ``code`` follows the
    CLI's table: 1 the plan or a rule says no, 2 bad input or usage."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.message = message
        self.code = code

"""Commands whose exit 2 means "changes pending" (``plan --detailed-exitcode``,
``drift``): their usage errors exit 1, so a typo never reads as pending changes.

Click rejects an unknown option or a bad value while parsing, before the command
runs, with its usage-error code 2; these command classes give such errors 1.
"""

from __future__ import annotations

from typer import _click
from typer._click.exceptions import UsageError
from typer.core import TyperCommand


class _PendingCommand(TyperCommand):
    pending_flag: str | None = None
    """The flag that makes exit 2 mean pending changes; None: it always does."""

    def parse_args(self, ctx: _click.Context, args: list[str]) -> list[str]:
        pending = self.pending_flag is None or self.pending_flag in args
        try:
            return super().parse_args(ctx, args)
        except UsageError as exc:
            if pending:
                exc.exit_code = 1
            raise


class DriftCommand(_PendingCommand):
    """``drift``: exit 2 always means drift."""


class DetailedExitCommand(_PendingCommand):
    """``plan``: exit 2 means changes pending with ``--detailed-exitcode``."""

    pending_flag = "--detailed-exitcode"

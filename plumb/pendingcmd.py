"""Commands whose exit 2 means "changes pending" (``plan --detailed-exitcode``,
``drift``): their usage errors exit 1, so a typo never reads as pending changes.

Click rejects an unknown option or a bad value while parsing, before the command
runs, with its usage-error code 2; these command classes give such errors 1. So do
:func:`error_exit_code` for what the entry point turns into an exit (a damaged state
file, bad input raised past the command) and :class:`PendingAwareGroup` for a bad
global option before the command's name (``plumb --bogus drift``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import typer
from typer import _click
from typer._click.exceptions import UsageError
from typer.core import TyperCommand, TyperGroup

from service.errors import ServiceError

_WORDS = "plumb.words"  # the command line's words, kept in the context for exit codes


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


def means_pending(args: Sequence[str]) -> bool:
    """Whether exit 2 of this command line means changes pending: ``drift``, or ``plan``
    with ``--detailed-exitcode``. Read from the raw words, as a line that failed to parse
    has nothing better; a word that only looks like the command makes an error exit 1,
    which is still an error, never "pending"."""
    return "drift" in args or ("plan" in args and "--detailed-exitcode" in args)


def error_exit_code(args: Sequence[str]) -> int:
    """The exit code of bad input or a usage error for this command line: 1 where 2
    means changes pending, else 2."""
    return 1 if means_pending(args) else 2


class PendingAwareGroup(TyperGroup):
    """A group whose own usage errors (a bad global option) exit 1 when the command line
    is one whose exit 2 means changes pending; and where a refusal of the service floor
    (:class:`~service.errors.ServiceError`) becomes ``error: message`` and its exit."""

    def parse_args(self, ctx: _click.Context, args: list[str]) -> list[str]:
        words = list(args)
        ctx.meta[_WORDS] = words
        try:
            return super().parse_args(ctx, args)
        except UsageError as exc:
            exc.exit_code = error_exit_code(words)
            raise

    def invoke(self, ctx: _click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as exc:  # typer turns it into a silent exit 130
            from reconciler.loop import interrupted_apply

            stopped = interrupted_apply(exc)
            if stopped is not None:
                from ci.planfmt import interrupted_text

                _click.echo(interrupted_text(stopped), err=True, nl=False)
            else:
                _click.echo("interrupted", err=True)
            raise
        except ServiceError as exc:
            _click.echo(f"error: {exc.message}", err=True)
            code = error_exit_code(ctx.meta.get(_WORDS, ())) if exc.code == 2 else exc.code
            raise typer.Exit(code) from None


class DriftCommand(_PendingCommand):
    """``drift``: exit 2 always means drift."""


class DetailedExitCommand(_PendingCommand):
    """``plan``: exit 2 means changes pending with ``--detailed-exitcode``."""

    pending_flag = "--detailed-exitcode"

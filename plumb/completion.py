"""Shell completion of values a user would otherwise look up (``--format``:
:func:`plumb.app.complete_formats`): rollout spec names (``rollouts/*.yaml`` of the
fleet repo) and rollout ids (read from the SQLite state without writing to it,
:mod:`reconciler.state.peek`). A completion never fails: whatever cannot be read
completes to nothing."""

from __future__ import annotations

from pathlib import Path

from typer import _click as click

from plumb.app import CONFIG_FILE, HERE, fleet_root


def _repo(ctx: click.Context) -> Path:
    given = ctx.params.get("path")
    return fleet_root(Path(given) if given else HERE)


def spec_names(ctx: click.Context, incomplete: str) -> list[str]:
    """The rollout specs of the fleet repo, by name."""
    folder = _repo(ctx) / "rollouts"
    try:
        names = sorted(p.stem for p in folder.glob("*.yaml"))
    except OSError:
        return []
    return [n for n in names if n.startswith(incomplete)]


def rollout_ids(ctx: click.Context, incomplete: str) -> list[str]:
    """The rollouts journaled in the fleet's SQLite state, newest first."""
    from intent.models import PlumbConfig
    from inventory.loadfile import load_document
    from inventory.validation import validate_document
    from reconciler.state.location import sqlite_path
    from reconciler.state.peek import rollout_ids_of

    try:
        root = _repo(ctx)
        config = validate_document(load_document(root, Path(CONFIG_FILE)), PlumbConfig)
        if config.state.backend != "sqlite":
            return []  # no server is contacted to complete a word
        found = rollout_ids_of(sqlite_path(root, config))
    except Exception:
        return []
    return [r for r in found if r.startswith(incomplete)]

"""Alembic's environment script for the state schema, run by
:func:`reconciler.state.upgrade.run_revisions` (never from the ``alembic`` command
line): the connection comes in the config's attributes, already inside the one
transaction that holds the database's single-writer lock, so Alembic neither begins nor
commits one of its own."""

from __future__ import annotations

from alembic import context

from reconciler.state.version import REVISION_TABLE

attributes = context.config.attributes
context.configure(
    connection=attributes["connection"],
    version_table=REVISION_TABLE,
    on_version_apply=attributes.get("on_version_apply", ()),
)
with context.begin_transaction():
    context.run_migrations()

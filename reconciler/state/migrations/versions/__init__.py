"""One Alembic revision per state schema version (see :mod:`reconciler.state.migrations`)."""

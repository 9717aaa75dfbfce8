"""The state schema's history as Alembic revisions, shipped inside the package and run
by :mod:`reconciler.state.upgrade` (Alembic is configured in code: no ``alembic.ini``).

``versions/`` holds one revision per schema version, in one line: revision ``0001``
is version 1, and so on; each is the step from the version before it, on both
backends, and is never changed once released (a database may be at any of them). A
dialect difference is written in the revision that needs it, both variants side by
side (the triggers). Revisions ``0001``-``0005`` are the versions plumb created
before it used Alembic, statement for statement, so a database from then is upgraded
from where it stands.

A new schema change is a new revision ``NNNN`` whose ``down_revision`` is the last
one, the same change in :mod:`reconciler.state.schema`, and
:data:`reconciler.state.version.HEAD` moved to ``NNNN``; the tests check all three
agree, on both backends. ``env.py`` is Alembic's environment script.
"""

from __future__ import annotations

from pathlib import Path

SCRIPT_LOCATION = Path(__file__).resolve().parent

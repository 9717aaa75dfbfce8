"""The expanded form of a fleet repo's compact inventory files, as YAML text.

``plumb inventory expand`` calls :func:`expanded_files`: every ``inventory/**/*.yaml``
with a ``topology:`` section is read (and so expanded, see :mod:`inventory.topology`)
and written back as ordinary records beside the file's own, the section left out.
Such a file can replace its compact original: the fleet loads the same.
"""

from __future__ import annotations

from pathlib import Path

from inventory.loadfile import load_document
from inventory.problems import InputError, Problem
from inventory.topology_doc import ExpandedDocument
from inventory.topology_emit import records_text

HEADER = (
    "# yaml-language-server: $schema={up}schemas/inventory.schema.json\n"
    "# Expanded from the topology: section of {path} by `plumb inventory expand`.\n"
)


def expanded_files(root: Path) -> dict[str, str]:
    """Repo-relative path -> expanded text, for each inventory file with a topology;
    InputError lists the problems of every file that does not expand."""
    folder = root / "inventory"
    found = (
        sorted(p.relative_to(root) for p in folder.rglob("*") if p.suffix in (".yaml", ".yml"))
        if folder.is_dir()
        else []
    )
    texts: dict[str, str] = {}
    problems: list[Problem] = []
    for relative in found:
        try:
            doc = load_document(root, relative)
        except InputError as exc:
            problems.extend(exc.problems)
            continue
        if isinstance(doc, ExpandedDocument):
            path = relative.as_posix()
            header = HEADER.format(up="../" * path.count("/"), path=path)
            texts[path] = records_text(doc.data, header)
    if problems:
        raise InputError(problems)
    return texts

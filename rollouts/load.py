"""Read ``rollouts/NAME.yaml`` with the located loader: every problem reads
``file:line:col: message``.

Beyond the schema (:class:`~rollouts.spec.RolloutFile`), the loader checks what the
schema cannot: the ``targets.select`` expression parses, and every extra stratum
attribute is one plumb knows. The spec is then pure data for the planner.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from inventory.loadfile import load_document
from inventory.problems import InputError, Location, Problem
from inventory.source import Document
from inventory.validation import validate_document
from reconciler.select import SelectError, parse_select
from rollouts.spec import RolloutFile, RolloutSpec
from rollouts.topology import ATTRIBUTES

ROLLOUTS_DIR = "rollouts"


class LoadedSpec(NamedTuple):
    """A rollout spec and the document it came from (``doc.where(...)`` locates a value)."""

    spec: RolloutSpec
    doc: Document

    def where(self, *keys: str | int) -> Location:
        """Location of ``rollout.<keys>`` in the spec file."""
        return self.doc.where("rollout", *keys)


def known_specs(root: Path) -> list[str]:
    folder = root / ROLLOUTS_DIR
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.iterdir() if p.suffix in (".yaml", ".yml"))


def spec_path(root: Path, name_or_path: str) -> Path:
    """The repo-relative file of a spec given by name (``rollouts/NAME.yaml``) or path."""
    looks_like_path = "/" in name_or_path or name_or_path.endswith((".yaml", ".yml"))
    if not looks_like_path:
        return Path(ROLLOUTS_DIR) / f"{name_or_path}.yaml"
    given = Path(name_or_path)
    candidates = [given] if given.is_absolute() else [Path.cwd() / given, root / given]
    for candidate in candidates:
        if candidate.exists():
            resolved = candidate.resolve()
            try:
                return resolved.relative_to(root.resolve())
            except ValueError:
                raise InputError(
                    [
                        Problem(
                            Location(name_or_path, 1, 1), "a rollout spec must be in the fleet repo"
                        )
                    ]
                ) from None
    return given


def load_rollout(root: Path, name_or_path: str) -> LoadedSpec:
    """Load and check one rollout spec; raise InputError listing every problem."""
    relative = spec_path(root, name_or_path)
    if not (root / relative).exists():
        known = ", ".join(known_specs(root)) or "none"
        raise InputError(
            [
                Problem(
                    Location(relative.as_posix(), 1, 1),
                    f"no rollout spec {name_or_path!r} (specs in {ROLLOUTS_DIR}/: {known})",
                )
            ]
        )
    doc = load_document(root, relative)
    spec = validate_document(doc, RolloutFile).rollout
    loaded = LoadedSpec(spec, doc)
    problems = _check(loaded)
    if problems:
        raise InputError(problems)
    return loaded


def _check(loaded: LoadedSpec) -> list[Problem]:
    spec = loaded.spec
    problems: list[Problem] = []
    try:
        parse_select(spec.targets.select)
    except SelectError as exc:
        problems.append(Problem(loaded.where("targets", "select"), f"targets.select: {exc}"))
    for i, name in enumerate(spec.strata.extra_attributes):
        if not name.startswith("label.") and name not in ATTRIBUTES:
            problems.append(
                Problem(
                    loaded.where("strata", "extra_attributes", i),
                    f"strata.extra_attributes.{i}: unknown attribute {name!r} "
                    f"(known: {', '.join(ATTRIBUTES)}, label.<key>)",
                )
            )
    return problems

"""Expand an inventory file's compact ``topology:`` section into ordinary records.

This sits between parsing and schema validation: :func:`expand_document` turns a
parsed :class:`~inventory.source.Document` whose top level has ``topology:`` into an
:class:`~inventory.topology_doc.ExpandedDocument` holding the file's hand-written
racks, devices and links followed by the generated ones. The result is validated,
cross-checked and evaluated by policies exactly like a file of hand-written records;
only the locations differ (they point at the rule or exception and name the record).

Order of work, all pure: check the section's schema; expand each rule in file order
(loops outermost first); refuse a record a rule generates twice or two rules both
generate (first one kept); apply the exceptions (remove, or set fields), refusing one
that matches nothing or contradicts another. Removing a device also removes the
generated cables that end on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from inventory.problems import InputError, Problem
from inventory.source import Document, Key, LocEntry
from inventory.topology_doc import SECTIONS, Change, ExpandedDocument, RuleRef
from inventory.topology_exceptions import apply_exceptions
from inventory.topology_model import Topology
from inventory.topology_rules import Generated, expand_rule
from inventory.validation import problems_from


class _Wrapped(BaseModel):
    """``{topology: ...}`` so schema errors carry the section's own key path."""

    topology: Topology


def expand_document(doc: Document) -> Document:
    """``doc`` with its topology expanded (unchanged when it has none); InputError
    lists every problem of the section."""
    data = doc.data
    if not isinstance(data, dict) or "topology" not in data:
        return doc
    try:
        topology = _Wrapped.model_validate({"topology": data["topology"]}).topology
    except ValidationError as exc:
        raise InputError(problems_from(doc, _Wrapped, exc)) from None
    problems: list[Problem] = []
    generated = Generated()
    for section, rules in (
        ("racks", topology.racks),
        ("devices", topology.devices),
        ("links", topology.links),
    ):
        seen_rules: dict[str, int] = {}
        for i, rule in enumerate(rules):
            keys: tuple[Key, ...] = ("topology", section, i)
            if rule.rule in seen_rules:
                problems.append(
                    Problem(
                        doc.where(*keys, "rule"),
                        f"rule {rule.rule!r} is already defined at line "
                        f"{doc.where('topology', section, seen_rules[rule.rule]).line}",
                    )
                )
                continue
            seen_rules[rule.rule] = i
            problems.extend(expand_rule(doc, section, keys, rule, topology.constants, generated))
    changes, removed = apply_exceptions(doc, topology.exceptions, generated, problems)
    if problems:
        raise InputError(problems)
    return _assemble(doc, generated, changes, removed)


def _assemble(
    doc: Document,
    generated: Generated,
    changes: Mapping[tuple[str, int], Change],
    removed: Mapping[str, set[int]],
) -> ExpandedDocument:
    """The document with generated records after the hand-written ones in each section."""
    data: dict[str, Any] = {k: v for k, v in doc.data.items() if k != "topology"}
    root_pos, root_tree, root_key = doc.locs
    # the section's locations stay: generated records point into it
    tree: dict[Any, LocEntry] = dict(root_tree) if isinstance(root_tree, dict) else {}
    hand: dict[str, int] = {}
    rules: dict[str, list[RuleRef]] = {}
    moved: dict[tuple[str, int], Change] = {}
    topology_entry = root_tree.get("topology") if isinstance(root_tree, dict) else None
    for section in SECTIONS:
        records = generated.records[section]
        if not records:
            continue
        written = data.get(section)
        if written is not None and not isinstance(written, list):
            continue  # the schema reports the section; nothing to add to
        written = written or []
        gone = removed.get(section, set())
        refs = generated.rules[section]
        hand[section] = len(written)
        if not gone:  # the usual case: every generated record stays where it is
            data[section] = [*written, *records]
            rules[section] = refs
            moved.update((key, change) for key, change in changes.items() if key[0] == section)
        else:
            keep = [i for i in range(len(records)) if i not in gone]
            data[section] = [*written, *(records[i] for i in keep)]
            rules[section] = [refs[i] for i in keep]
            for new, old in enumerate(keep):
                change = changes.get((section, old))
                if change is not None:
                    moved[(section, new)] = change
        tree[section] = _section_locs(
            doc, section, tree.get(section), topology_entry, rules[section]
        )
    return ExpandedDocument(
        doc.path, data, (root_pos, tree, root_key), hand=hand, rules=rules, changes=moved
    )


def _section_locs(
    doc: Document,
    section: str,
    written: LocEntry | None,
    topology_entry: LocEntry | None,
    refs: list[RuleRef],
) -> LocEntry:
    """Location entries for a merged section: each generated record at its rule, so a
    reader walking the raw location tree still lands on the right line."""
    anchor = written or topology_entry or doc.locs
    items = list(written[1]) if written is not None and isinstance(written[1], list) else []
    last: RuleRef | None = None
    entry: LocEntry = anchor
    for ref in refs:
        if ref is not last:  # a rule's records are consecutive: one entry each run
            where = doc.where(*ref.keys)
            packed = ((where.line - 1) << 16) | min(where.col - 1, 0xFFFF)
            entry, last = (packed, None, packed), ref
        items.append(entry)
    return (anchor[0], items, anchor[2])

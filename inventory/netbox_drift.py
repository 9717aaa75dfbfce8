"""What differs between the fleet repo's inventory and NetBox, record by record.

After :mod:`inventory.netbox_map`: ``read_repo_records`` reads every inventory file
(the disk edge); ``compare`` is pure. A record is a rack (by name), a device (by name)
or a link (by its two ends, in either order). Records in the files the import owns
(see :mod:`inventory.netbox_write`) are *added*, *removed* or *changed* by an import;
a record kept in another inventory file is *plumb-only* (left alone, not drift), unless
NetBox holds it too, which is a *conflict*: after an import it would be defined twice.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inventory.loadfile import load_document
from inventory.netbox_map import Imported
from inventory.netbox_write import FileChange, is_owned

KINDS = ("rack", "device", "link")
_SECTIONS = {"racks": "rack", "devices": "device", "links": "link"}


@dataclass(frozen=True)
class RepoRecord:
    kind: str
    key: str
    record: Mapping[str, Any]
    where: str  # file:line:col
    owned: bool


@dataclass(frozen=True)
class RecordDiff:
    kind: str
    key: str
    change: str  # added | removed | changed | conflict | plumb-only
    fields: tuple[tuple[str, Any, Any], ...] = ()  # (field, in plumb, in NetBox)
    where: str | None = None

    @property
    def is_drift(self) -> bool:
        return self.change != "plumb-only"


@dataclass(frozen=True)
class DriftReport:
    counts: Mapping[str, int]  # records NetBox holds, per kind
    records: tuple[RecordDiff, ...]
    files: tuple[FileChange, ...]
    skipped: tuple[str, ...]

    @property
    def in_sync(self) -> bool:
        return not self.files and not any(r.change == "conflict" for r in self.records)


def record_key(kind: str, record: Mapping[str, Any]) -> str:
    if kind != "link":
        return str(record.get("name"))
    ends = sorted(
        [
            (str(record.get("a")), str(record.get("a_port"))),
            (str(record.get("b")), str(record.get("b_port"))),
        ]
    )
    return " -- ".join(f"{device}:{port}" for device, port in ends)


def _plain(value: Any) -> Any:
    """Drop unset (null) values so ``rail: null`` and no ``rail`` compare equal."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def read_repo_records(root: Path) -> list[RepoRecord]:
    """Every rack, device and link in ``inventory/**/*.yaml`` (raises InputError)."""
    base = root / "inventory"
    paths = (
        sorted(p for p in base.rglob("*") if p.suffix in (".yaml", ".yml"))
        if base.is_dir()
        else []
    )
    found: list[RepoRecord] = []
    for path in paths:
        relative = path.relative_to(root)
        doc = load_document(root, relative)
        if not isinstance(doc.data, Mapping):
            continue
        for section, kind in _SECTIONS.items():
            items = doc.data.get(section)
            if not isinstance(items, list):
                continue
            for index, item in enumerate(items):
                if isinstance(item, Mapping):
                    found.append(
                        RepoRecord(
                            kind,
                            record_key(kind, item),
                            _plain(item),
                            str(doc.where(section, index)),
                            is_owned(relative.as_posix()),
                        )
                    )
    return found


def _field_changes(
    old: Mapping[str, Any], new: Mapping[str, Any]
) -> tuple[tuple[str, Any, Any], ...]:
    names = sorted(set(old) | set(new))
    return tuple((n, old.get(n), new.get(n)) for n in names if old.get(n) != new.get(n))


def compare(
    repo: Iterable[RepoRecord],
    imported: Imported,
    files: Iterable[FileChange],
) -> DriftReport:
    """The record-level differences between the repo and what NetBox holds."""
    incoming = {
        "rack": imported.racks,
        "device": imported.devices,
        "link": imported.links,
    }
    repo = list(repo)
    diffs: list[RecordDiff] = []
    for kind in KINDS:
        owned = {r.key: r for r in repo if r.kind == kind and r.owned}
        other = {r.key: r for r in repo if r.kind == kind and not r.owned}
        new = {record_key(kind, r): _plain(r) for r in incoming[kind]}
        for key, record in new.items():
            if key in other:
                diffs.append(RecordDiff(kind, key, "conflict", where=other[key].where))
            elif key not in owned:
                diffs.append(RecordDiff(kind, key, "added"))
            elif changed := _field_changes(owned[key].record, record):
                diffs.append(RecordDiff(kind, key, "changed", changed, owned[key].where))
        for key, held in owned.items():
            if key not in new:
                diffs.append(RecordDiff(kind, key, "removed", where=held.where))
        for key, held in other.items():
            if key not in new:
                diffs.append(RecordDiff(kind, key, "plumb-only", where=held.where))
    return DriftReport(
        counts={f"{kind}s": len(incoming[kind]) for kind in KINDS},
        records=tuple(diffs),
        files=tuple(files),
        skipped=imported.skipped,
    )


_SIGN = {"added": "+", "removed": "-", "changed": "~", "conflict": "!", "plumb-only": "="}


def _short(value: Any) -> str:
    text = "(none)" if value is None else str(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def drift_lines(report: DriftReport) -> list[str]:
    """The report as text, one difference per line."""
    lines: list[str] = []
    for diff in report.records:
        head = f"{_SIGN[diff.change]} {diff.kind} {diff.key}"
        if diff.change == "added":
            lines.append(f"{head}: in NetBox, not in plumb")
        elif diff.change == "removed":
            lines.append(f"{head}: in plumb ({diff.where}), not in NetBox")
        elif diff.change == "conflict":
            lines.append(f"{head}: in NetBox and kept by hand at {diff.where}; remove one")
        elif diff.change == "plumb-only":
            lines.append(f"{head}: only in plumb ({diff.where}), left as it is")
        else:
            changes = "; ".join(
                f"{name} {_short(old)} -> {_short(new)}" for name, old, new in diff.fields
            )
            lines.append(f"{head}: {changes}")
    lines += [f"  skipped {message}" for message in report.skipped]
    lines += [f"  {change.action} {change.path}" for change in report.files]
    return lines


def drift_json(report: DriftReport) -> dict[str, Any]:
    return {
        "in_sync": report.in_sync,
        "netbox": dict(report.counts),
        "records": [
            {
                "kind": d.kind,
                "key": d.key,
                "change": d.change,
                "where": d.where,
                "fields": [{"field": n, "plumb": o, "netbox": v} for n, o, v in d.fields],
            }
            for d in report.records
        ],
        "files": [{"path": f.path, "action": f.action} for f in report.files],
        "skipped": list(report.skipped),
    }

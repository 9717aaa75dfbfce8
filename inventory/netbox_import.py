"""One NetBox import, end to end: read NetBox, map, lay out, compare, write.

The sequence behind ``plumb inventory import netbox``: the token and the REST reads
(:mod:`inventory.netbox_fetch`), the mapping (:mod:`inventory.netbox_map`), the files
(:mod:`inventory.netbox_write`) and the drift report (:mod:`inventory.netbox_drift`).
Every failure becomes :class:`ImportFailed` with the lines to print; the result is data
and the exit code comes from it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inventory.netbox_drift import DriftReport, compare, drift_json, drift_lines, read_repo_records
from inventory.netbox_map import MappingError, NetboxMapping, map_netbox
from inventory.netbox_write import file_changes, read_owned, render_files, write_files
from inventory.problems import InputError
from inventory.redact import display_url


class ImportFailed(Exception):
    """The import could not run; ``lines`` say why (exit 2)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        super().__init__("\n".join(lines))


@dataclass(frozen=True)
class ImportOutcome:
    url: str
    report: DriftReport

    def exit_code(self, *, check: bool) -> int:
        if check:
            return 0 if self.report.in_sync else 1
        return 1 if any(r.change == "conflict" for r in self.report.records) else 0

    def text(self, *, check: bool) -> list[str]:
        counts = ", ".join(f"{n} {kind}" for kind, n in self.report.counts.items())
        lines = [f"netbox {self.url}: {counts}", *drift_lines(self.report)]
        drift = [r for r in self.report.records if r.is_drift]
        if check:
            verdict = (
                "in sync: the inventory files match NetBox"
                if self.report.in_sync
                else f"drift: {len(drift)} record(s), {len(self.report.files)} file(s) differ"
                " from NetBox; run `plumb inventory import netbox URL` and review the diff"
            )
        else:
            verdict = (
                f"wrote {len(self.report.files)} file(s)"
                if self.report.files
                else "unchanged: the inventory files already match NetBox"
            )
        return [*lines, verdict]

    def json(self) -> dict[str, Any]:
        return {"url": self.url, **drift_json(self.report)}


def run_import(
    root: Path,
    url: str,
    *,
    mapping: NetboxMapping,
    site: str | None = None,
    token_env: str = "NETBOX_TOKEN",
    token_file: Path | None = None,
    write: bool = True,
    environ: Mapping[str, str] = os.environ,
) -> ImportOutcome:
    """Import NetBox at ``url`` into the fleet repo at ``root`` (or only compare)."""
    from inventory.netbox_fetch import NetboxError, fetch_netbox, read_token

    if not url.startswith(("http://", "https://")):
        raise ImportFailed([f"error: {display_url(url)!r} is not an http:// or https:// URL"])
    try:
        token = read_token(token_file, token_env, environ)
        data = fetch_netbox(url, token, site)
    except NetboxError as exc:
        raise ImportFailed([f"error: {exc}"]) from None
    try:
        imported = map_netbox(data, mapping)
    except MappingError as exc:
        raise ImportFailed([f"error: {message}" for message in exc.messages]) from None
    rendered = render_files(imported)
    try:
        repo = read_repo_records(root)
    except InputError as exc:
        raise ImportFailed([str(problem) for problem in exc.problems]) from None
    changes = file_changes(read_owned(root), rendered)
    report = compare(repo, imported, changes)
    if write:
        write_files(root, rendered, changes)
    return ImportOutcome(display_url(url), report)

"""A writable copy of the ORION example fleet for tests that change one thing."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from intent.fleet import Fleet, load_fleet
from policies import builtin as _builtin  # noqa: F401  (registers the built-in policies)
from policies.engine import BUILTIN, PolicyReport, evaluate

ROOT = Path(__file__).resolve().parent.parent
ORION = ROOT / "examples" / "orion"
TODAY = date(2026, 12, 1)


@dataclass
class FleetCopy:
    path: Path

    def replace(self, relative: str, old: str, new: str, count: int = 1) -> None:
        """Replace ``old`` by ``new`` in one file; fails loudly if ``old`` is not there."""
        file = self.path / relative
        text = file.read_text()
        assert old in text, f"{old!r} not found in {relative}"
        file.write_text(text.replace(old, new, count))

    def append(self, relative: str, text: str) -> None:
        file = self.path / relative
        file.write_text(file.read_text() + text)

    def set_drivers(self, block: str, *, lab_for_the_rest: bool = True) -> None:
        """Replace plumb.yaml's ``drivers:`` rules (the example's ``- driver: lab``) with
        ``block``; the devices it names no rule for stay on the lab unless told not to."""
        file = self.path / "plumb.yaml"
        text = file.read_text()
        start = text.find("\ndrivers:")
        kept = text if start < 0 else text[: start + 1]
        rest = "  - driver: lab\n" if lab_for_the_rest else ""
        file.write_text(kept + block + rest)

    def write(self, relative: str, text: str | bytes) -> None:
        file = self.path / relative
        file.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            file.write_bytes(text)
        else:
            file.write_text(text)

    def set_device_overrides(self, yaml_body: str) -> None:
        """Replace intent/devices.yaml with ``devices:`` followed by ``yaml_body``."""
        self.write("intent/devices.yaml", "devices:\n" + yaml_body)

    def load(self) -> Fleet:
        return load_fleet(self.path)

    def evaluate(self) -> PolicyReport:
        return evaluate(self.load(), list(BUILTIN), today=TODAY)


def copy_orion(destination: Path) -> FleetCopy:
    target = destination / "orion"
    shutil.copytree(ORION, target, ignore=shutil.ignore_patterns(".plumb"))
    return FleetCopy(target)

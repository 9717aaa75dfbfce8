"""Draw docs/img/wave-plan.svg: the HX8 firmware rollout of the ORION example, planned
on a lab copy of it, as `plumb rollout plan --format svg` draws it.

    .venv/bin/python docs/pictures.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLUMB = Path(sys.executable).with_name("plumb")
OUT = ROOT / "docs" / "img" / "wave-plan.svg"


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="plumb-pictures-") as tmp:
        fleet = Path(tmp) / "orion"
        shutil.copytree(ROOT / "examples" / "orion", fleet, ignore=shutil.ignore_patterns(".plumb"))
        for args in (("lab", "init", "."), ("apply", "--yes", ".")):
            subprocess.run([str(PLUMB), *args], cwd=fleet, check=True, capture_output=True)
        groups = fleet / "intent" / "groups.yaml"
        groups.write_text(groups.read_text().replace("hx8-2026.09", "hx8-2026.06"))
        svg = subprocess.run(
            [str(PLUMB), "rollout", "plan", "firmware-hx8-2026-09", ".", "-f", "svg"],
            cwd=fleet,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(svg)
    print(f"wrote {OUT.relative_to(ROOT)} ({len(svg):,} bytes)")


if __name__ == "__main__":
    main()

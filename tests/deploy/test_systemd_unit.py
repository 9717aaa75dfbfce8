"""deploy/plumb-serve.service passes ``systemd-analyze verify`` and names documentation
that installing plumb puts where the unit says."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path, PurePosixPath

from tests.deploy.tools import DEPLOY, ROOT, require

UNIT = DEPLOY / "plumb-serve.service"
VENV = PurePosixPath("/opt/plumb/venv")
SYSTEM_UNITS = Path("/usr/lib/systemd/system")


def directives(text: str, key: str) -> list[str]:
    """The values of ``key=`` lines (space-separated lists split)."""
    found: list[str] = []
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if sep and name.strip() == key:
            found += value.split()
    return found


def verify(unit_text: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    """``systemd-analyze verify`` of ``unit_text`` installed in a root laid out as an
    install leaves it: the host's system units, an executable at ExecStart's path."""
    analyze = require("systemd-analyze", "systemd")
    root = tmp / "root"
    shutil.copytree(SYSTEM_UNITS, root / "usr/lib/systemd/system", symlinks=True)
    for command in directives(unit_text, "ExecStart")[:1]:
        binary = root / command.lstrip("/")
        binary.parent.mkdir(parents=True)
        binary.write_text("#!/bin/sh\n")
        binary.chmod(0o755)
    installed = root / "etc/systemd/system" / UNIT.name
    installed.parent.mkdir(parents=True)
    installed.write_text(unit_text)
    return subprocess.run(
        [analyze, "verify", f"--root={root}", str(installed)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_unit_verifies_without_a_warning(tmp_path: Path) -> None:
    """systemd-analyze accepts every directive of the unit and says nothing."""
    done = verify(UNIT.read_text(), tmp_path)
    assert (done.returncode, done.stdout + done.stderr) == (0, "")


def test_verify_catches_a_bad_directive(tmp_path: Path) -> None:
    """The check can fail: a misspelt service type is reported."""
    broken = UNIT.read_text().replace("Type=notify", "Type=notiffy")
    done = verify(broken, tmp_path)
    assert "notiffy" in done.stdout + done.stderr


def test_the_unit_waits_for_ready_and_arms_the_watchdog() -> None:
    """Type=notify with a watchdog: plumb sends READY=1 and WATCHDOG=1 (serve/sdnotify.py)."""
    text = UNIT.read_text()
    assert directives(text, "Type") == ["notify"]
    assert directives(text, "WatchdogSec")


def test_documentation_points_at_files_the_package_installs() -> None:
    """Every Documentation= file is one pyproject's data-files puts in the venv."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    data_files = project["tool"]["setuptools"]["data-files"]
    installed = {
        VENV / folder / PurePosixPath(source).name: ROOT / source
        for folder, sources in data_files.items()
        for source in sources
    }
    urls = directives(UNIT.read_text(), "Documentation")
    assert urls
    for url in urls:
        assert url.startswith("file://"), url
        path = PurePosixPath(url.removeprefix("file://"))
        assert path in installed, f"{path} is not installed by pyproject's data-files"
        assert installed[path].is_file()

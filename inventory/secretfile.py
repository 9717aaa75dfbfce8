"""Reading a secret (an API token, a database URL) from a file that only its owner may
read or write: anything else is refused before the secret is read, with the fix."""

from __future__ import annotations

import stat
from pathlib import Path


class SecretFileError(Exception):
    """The file is not a regular owner-only file, or cannot be read as text."""


def first_line(path: Path, label: str, holding: str) -> str:
    """The first line of ``path`` stripped ("" when the file is blank). ``label`` names
    the file in messages (``token file``), ``holding`` what it holds (``an API token``)."""
    try:
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):
            raise SecretFileError(f"{label} {path} is not a regular file")
        if mode & 0o077:
            raise SecretFileError(
                f"{label} {path} has mode {stat.S_IMODE(mode):04o}: a file holding"
                f" {holding} must be readable by its owner only; run `chmod 600 {path}`"
            )
        text = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise SecretFileError(f"cannot read {label} {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise SecretFileError(f"{label} {path} is not UTF-8 text") from exc
    return text.splitlines()[0].strip() if text else ""

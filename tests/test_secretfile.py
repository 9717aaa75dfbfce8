"""Secrets read from files: only an owner-only regular file is read; the first line is
the secret; anything else is one clear error naming the file and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from intent.models import StateConfig
from inventory.secretfile import SecretFileError, first_line
from reconciler.state.dbfile import StateError
from reconciler.state.location import state_url

URL = "postgresql://plumb@127.0.0.1:5432/plumb"


def _file(tmp_path: Path, data: bytes, mode: int) -> Path:
    path = tmp_path / "secret"
    path.write_bytes(data)
    path.chmod(mode)
    return path


def test_the_first_line_of_an_owner_only_file(tmp_path: Path) -> None:
    path = _file(tmp_path, b"\n  s3cret  \nsecond\n", 0o600)
    assert first_line(path, "token file", "an API token") == "s3cret"
    assert first_line(_file(tmp_path, b"  \n", 0o400), "token file", "a token") == ""


@pytest.mark.parametrize(
    ("data", "mode", "message"),
    [
        (
            b"s3cret\n",
            0o640,
            "has mode 0640: a file holding a token must be readable by its owner only;"
            " run `chmod 600",
        ),
        (b"\xff\xfe", 0o600, "is not UTF-8 text"),
    ],
)
def test_refused_files(tmp_path: Path, data: bytes, mode: int, message: str) -> None:
    path = _file(tmp_path, data, mode)
    with pytest.raises(SecretFileError, match=r"^token file .*") as caught:
        first_line(path, "token file", "a token")
    assert message in str(caught.value)


def test_not_a_regular_file_or_missing(tmp_path: Path) -> None:
    with pytest.raises(SecretFileError, match="is not a regular file"):
        first_line(tmp_path, "token file", "a token")
    with pytest.raises(SecretFileError, match=r"cannot read token file .*missing"):
        first_line(tmp_path / "missing", "token file", "a token")


def test_the_state_url_file(tmp_path: Path) -> None:
    """plumb.yaml's state.url_file: read when $PLUMB_STATE_URL is unset, refused when
    others may read it, and its line must be a PostgreSQL URL."""
    config = StateConfig(backend="postgresql", url_file="db.url")
    (tmp_path / "db.url").write_text(f"{URL}\n")
    (tmp_path / "db.url").chmod(0o600)
    assert state_url(tmp_path, config, {}) == URL
    assert state_url(tmp_path, config, {"PLUMB_STATE_URL": URL + "2"}) == URL + "2"
    (tmp_path / "db.url").chmod(0o644)
    with pytest.raises(StateError, match=r"state\.url_file .* has mode 0644: .*the state URL"):
        state_url(tmp_path, config, {})
    (tmp_path / "db.url").write_bytes(b"\xff")
    (tmp_path / "db.url").chmod(0o600)
    with pytest.raises(StateError, match="is not UTF-8 text"):
        state_url(tmp_path, config, {})
    (tmp_path / "db.url").write_text("mysql://x\n")
    with pytest.raises(StateError, match="does not hold a PostgreSQL URL"):
        state_url(tmp_path, config, {})

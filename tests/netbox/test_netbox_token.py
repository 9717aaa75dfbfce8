"""The NetBox token and connection edge, without a NetBox: where the token comes from,
which token files are refused, and how an unreachable server is reported."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from inventory.netbox_fetch import NetboxTokenError, NetboxUnreachable, fetch_netbox, read_token


def test_the_token_comes_from_the_named_environment_variable() -> None:
    """``token_env`` names the variable; surrounding whitespace is dropped."""
    assert read_token(None, "NB_RO", {"NB_RO": " nbt_a.b \n"}) == "nbt_a.b"


def test_no_token_anywhere_names_the_variable_and_the_option() -> None:
    """An unset or empty variable says what to set."""
    with pytest.raises(NetboxTokenError, match=r"set \$NETBOX_TOKEN or pass --token-file"):
        read_token(None, "NETBOX_TOKEN", {"NETBOX_TOKEN": ""})


def test_a_private_token_file_is_read_and_an_open_one_refused(tmp_path: Path) -> None:
    """Mode 0600: its first line; 0640: refused with the chmod to run, token not shown."""
    path = tmp_path / "token"
    path.write_text("nbt_key.secret-value\nsecond line\n")
    path.chmod(0o600)
    assert read_token(path, "UNUSED", {}) == "nbt_key.secret-value"
    path.chmod(0o640)
    with pytest.raises(NetboxTokenError) as caught:
        read_token(path, "UNUSED", {})
    assert "has mode 0640" in str(caught.value) and f"chmod 600 {path}" in str(caught.value)
    assert "secret-value" not in str(caught.value)


def test_a_missing_or_empty_token_file_is_an_error(tmp_path: Path) -> None:
    """Neither a missing file nor an empty one yields a token."""
    with pytest.raises(NetboxTokenError, match="cannot read token file"):
        read_token(tmp_path / "absent", "UNUSED", {})
    empty = tmp_path / "empty"
    empty.write_text("\n")
    empty.chmod(0o600)
    with pytest.raises(NetboxTokenError, match="is empty"):
        read_token(empty, "UNUSED", {})


def test_a_closed_port_is_unreachable_not_a_traceback() -> None:
    """A refused connection maps to NetboxUnreachable naming the URL, not the token."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(NetboxUnreachable) as caught:
        fetch_netbox(f"http://127.0.0.1:{port}", "nbt_k.do-not-show")
    assert str(caught.value) == f"cannot reach NetBox at http://127.0.0.1:{port} (ConnectionError)"

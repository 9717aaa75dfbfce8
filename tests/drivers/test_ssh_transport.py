"""The SSH transport under both switch pools (reconciler.drivers.ssh_transport), against
the simulator's sshd: known_hosts parsed once per file version yet as strict as the
file, small packets sent at once, quiet idle reader threads, and the key exchange a
switch's sshd offers."""

from __future__ import annotations

import logging
import os
import socket

import paramiko
import pytest

from reconciler.drivers.ssh_transport import IDLE_WAKE, connection_class, known_hosts
from reconciler.errors import HostKeyMismatch
from tests.drivers.conftest import Switches


def test_known_hosts_is_parsed_once_per_file_version(
    switches: Switches, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Logins to many devices parse the file once; a rewritten file is parsed again."""
    refs = [switches.add("sonic") for _ in range(3)] + [switches.add("eos") for _ in range(2)]
    parsed: list[str] = []
    load = paramiko.HostKeys.load

    def counting(self: paramiko.HostKeys, filename: str) -> None:
        parsed.append(str(filename))
        load(self, filename)

    monkeypatch.setattr(paramiko.HostKeys, "load", counting)
    stamp = switches.known_hosts.stat().st_mtime_ns + 1_000_000_000
    os.utime(switches.known_hosts, ns=(stamp, stamp))  # a version not parsed before
    for ref in refs:
        assert switches.driver(ref.platform).observe(ref)["system/hostname"] == ref.name
    assert parsed == [str(switches.known_hosts)]
    os.utime(switches.known_hosts, ns=(stamp + 1_000_000_000, stamp + 1_000_000_000))
    switches.driver("sonic").observe(refs[0])
    assert parsed == [str(switches.known_hosts)] * 2


@pytest.mark.parametrize("dialect", ["eos", "sonic"])
def test_a_host_missing_from_the_cached_file_is_still_refused(
    switches: Switches, dialect: str
) -> None:
    """Another device's entry is no key for this one: the login is refused as unknown."""
    ref = switches.add(dialect)
    other = switches.add(dialect)
    lines = switches.known_hosts.read_text().splitlines()
    mine = f"[{ref.host}]:{ref.port} "
    switches.known_hosts.write_text("".join(line + "\n" for line in lines if mine not in line))
    known_hosts(switches.known_hosts)  # the file as it is now, in the cache
    with pytest.raises(HostKeyMismatch):
        switches.driver(dialect).observe(ref)
    assert switches.driver(dialect).observe(other)["system/hostname"] == other.name


def _transport(switches: Switches, dialect: str) -> paramiko.Transport:
    ref = switches.add(dialect)
    driver = switches.driver(dialect)
    driver.observe(ref)
    if dialect == "sonic":
        client = driver.exec._clients[ref.name]
        return client.get_transport()
    return driver.pool._conns[ref.name].remote_conn_pre.get_transport()


@pytest.mark.parametrize("dialect", ["eos", "sonic"])
def test_connections_send_small_packets_at_once_and_idle_quietly(
    switches: Switches, dialect: str
) -> None:
    """The socket has TCP_NODELAY and the reader thread wakes every IDLE_WAKE seconds."""
    transport = _transport(switches, dialect)
    sock = transport.sock
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    assert sock.gettimeout() == IDLE_WAKE > 1.0


def test_the_simulator_negotiates_the_key_exchange_a_switch_offers(
    switches: Switches, caplog: pytest.LogCaptureFixture
) -> None:
    """A switch's sshd (OpenSSH 9.2 era) offers no hybrid ML-KEM: paramiko, which
    prefers ML-KEM when offered, settles on curve25519 with the simulator too."""
    caplog.set_level(logging.DEBUG, logger="paramiko.transport")
    transport = _transport(switches, "sonic")
    agreed = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Kex: ")]
    assert agreed == ["Kex: curve25519-sha256@libssh.org"]  # paramiko's name for it
    assert transport.preferred_kex[0] == "mlkem768x25519-sha256"


def test_ansi_codes_are_still_stripped_and_plain_output_passes_untouched() -> None:
    """EOS output with escape codes loses them as netmiko would strip them; output
    without any comes back as it was."""
    conn = connection_class("arista_eos")(
        host="192.0.2.1", username="u", password="p", device_type="arista_eos", auto_connect=False
    )
    coloured = "\x1b[2Kleaf-1#show version\x1b[00;32m\nArista\x1b[0m\n"
    assert conn.strip_ansi_escape_codes(coloured) == "leaf-1#show version\nArista\n"
    plain = "leaf-1#show version\nArista DCS-7060DX5-64S\n"
    assert conn.strip_ansi_escape_codes(plain) is plain

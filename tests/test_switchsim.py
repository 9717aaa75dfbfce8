"""The SSH switch simulator, driven by real netmiko over real SSH on 127.0.0.1.

One simulator serves the whole module; each test adds its own devices, so
tests never see each other's state.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from netmiko import BaseConnection, ConnectHandler
from netmiko.exceptions import (
    ConfigInvalidException,
    NetmikoAuthenticationException,
    NetmikoTimeoutException,
    ReadException,
)

from tests.switchsim import (
    BgpNeighbor,
    BgpState,
    DeviceSpec,
    EcnQueue,
    Fault,
    InterfaceState,
    SwitchSim,
    SwitchState,
    default_state,
    eos_render,
    eos_show,
)
from tests.switchsim.eos_view import config_from_state, parse_config, state_view
from tests.switchsim.jsonpatch import PatchError, apply_patch
from tests.switchsim.sonic_db import project, render_config_db

PASSWORD = "pw"
REPO = Path(__file__).resolve().parent.parent
_names = itertools.count(1)
CONNECTION_LOST = (ReadException, NetmikoTimeoutException, OSError, EOFError)


def add(sim: SwitchSim, dialect: str = "eos", **extra: Any) -> str:
    """Add a fresh device and return its name."""
    name = f"{dialect}-{next(_names)}"
    sim.add_device(
        DeviceSpec(name=name, dialect=dialect, password=PASSWORD, reboot_seconds=0.3, **extra)
    )
    return name


def connect(
    sim: SwitchSim, name: str, device_type: str = "arista_eos", **extra: Any
) -> BaseConnection:
    """A netmiko connection to device `name` (privileged on EOS)."""
    conn = ConnectHandler(
        device_type=device_type,
        host="127.0.0.1",
        port=sim.port(name),
        username="admin",
        password=PASSWORD,
        fast_cli=True,
        conn_timeout=5,
        auth_timeout=5,
        banner_timeout=5,
        **extra,
    )
    if device_type == "arista_eos":
        conn.enable()
    return conn


def show(conn: BaseConnection, command: str, **options: Any) -> str:
    """Run one command and return its output as text."""
    return str(conn.send_command(command, **options))


def show_json(conn: BaseConnection, command: str) -> Any:
    """Run one command and parse its JSON output."""
    return json.loads(show(conn, command))


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    """Poll until `predicate` holds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)


def mtu(sim: SwitchSim, name: str, port: str = "Ethernet1") -> int:
    return sim.state(name).interfaces[port].mtu


def set_mtu_in_session(conn: BaseConnection, value: int, finish: str, session: str = "s1") -> None:
    conn.send_config_set(
        ["interface Ethernet1", f"mtu {value}", finish],
        config_mode_command=f"configure session {session}",
        error_pattern=r"^% ",
    )


# -- EOS ------------------------------------------------------------------------


def test_eos_show_version_json(sim: SwitchSim) -> None:
    """netmiko's arista_eos driver logs in with fast_cli and reads `show version | json`."""
    name = add(sim)
    with connect(sim, name) as conn:
        version = show_json(conn, "show version | json")
    assert (version["version"], version["modelName"], version["mfgName"]) == (
        "4.30.1F",
        "DCS-7280CR3-32P4",
        "Arista",
    )


def test_session_commit_updates_interfaces_json_and_state_file(sim: SwitchSim) -> None:
    """A committed configure session shows in `show interfaces | json` and the JSON state file."""
    name = add(sim)
    with connect(sim, name) as conn:
        conn.send_config_set(
            [
                "interface Ethernet1",
                "mtu 9000",
                "description to-spine-1",
                "no switchport",
                "ip address 10.0.0.0/31",
                "commit",
            ],
            config_mode_command="configure session plumb1",
            error_pattern=r"^% ",
        )
        port = show_json(conn, "show interfaces | json")["interfaces"]["Ethernet1"]
    assert (port["mtu"], port["description"]) == (9000, "to-spine-1")
    assert port["interfaceAddress"][0]["primaryIp"] == {"address": "10.0.0.0", "maskLen": 31}
    saved = json.loads((sim.state_dir / f"{name}.json").read_text())
    assert saved["running"]["interfaces"]["Ethernet1"]["mtu"] == 9000
    assert "   description to-spine-1\n   mtu 9000\n" in saved["running_config"]
    assert sim.write_count(name) == 1


def test_session_diff_and_abort_write_nothing(sim: SwitchSim) -> None:
    """Showing a session's diff and aborting it leaves config and the write count untouched."""
    name = add(sim)
    with connect(sim, name) as conn:
        conn.send_config_set(
            ["interface Ethernet1", "mtu 9100"],
            config_mode_command="configure session dry",
            exit_config_mode=False,
        )
        diff = show(conn, "show session-config diffs")
        conn.send_command("abort", expect_string=r"#")
    assert "-   mtu 9214" in diff and "+   mtu 9100" in diff
    assert (mtu(sim, name), sim.write_count(name)) == (9214, 0)


def test_running_config_json_has_eos_cmds_tree(sim: SwitchSim) -> None:
    """`show running-config | json` nests PFC, ECN and BGP lines in EOS's cmds tree."""
    name = add(sim)
    lines = [
        "interface Ethernet2",
        "priority-flow-control on",
        "priority-flow-control priority 3 no-drop",
        "tx-queue 3",
        "random-detect ecn minimum-threshold 200 kbytes maximum-threshold 400 kbytes "
        "max-mark-probability 20",
        "qos map dscp 26 to traffic-class 3",
        "router bgp 65101",
        "maximum-paths 64 ecmp 64",
        "neighbor 10.0.0.1 remote-as 65000",
    ]
    with connect(sim, name) as conn:
        conn.send_config_set(lines, error_pattern=r"^% ")
        tree = show_json(conn, "show running-config | json")["cmds"]
    port = tree["interface Ethernet2"]["cmds"]
    assert "priority-flow-control priority 3 no-drop" in port
    assert (
        "random-detect ecn minimum-threshold 200 kbytes maximum-threshold 400 kbytes"
        " max-mark-probability 20" in port["tx-queue 3"]["cmds"]
    )
    assert "qos map dscp 26 to traffic-class 3" in tree
    assert "maximum-paths 64 ecmp 64" in tree["router bgp 65101"]["cmds"]


def test_bgp_json_uses_eos_field_names(sim: SwitchSim) -> None:
    """BGP summary and neighbor JSON carry router id, AS numbers and the inbound route map."""
    name = add(sim)
    with connect(sim, name) as conn:
        conn.send_config_set(
            [
                "router bgp 65101",
                "router-id 10.1.0.1",
                "neighbor 10.0.0.1 remote-as 65000",
                "neighbor 10.0.0.1 route-map RM-IN in",
            ],
            error_pattern=r"^% ",
        )
        summary = show_json(conn, "show ip bgp summary | json")["vrfs"]["default"]
        peers = show_json(conn, "show ip bgp neighbors | json")["vrfs"]["default"]["peerList"]
    assert (summary["routerId"], summary["asn"], summary["peers"]["10.0.0.1"]["asn"]) == (
        "10.1.0.1",
        "65101",
        "65000",
    )
    assert peers[0]["routeMapInbound"] == "RM-IN"


def test_commit_timer_reverts_without_confirm(sim: SwitchSim) -> None:
    """`commit timer` applies at once and restores the previous config when the timer expires."""
    name = add(sim)
    with connect(sim, name) as conn:
        set_mtu_in_session(conn, 9000, "commit timer 00:00:01")
    assert mtu(sim, name) == 9000
    wait_for(lambda: mtu(sim, name) == 9214, timeout=5)
    assert sim.write_count(name) == 2


def test_commit_timer_confirmed_sticks(sim: SwitchSim) -> None:
    """`configure session NAME commit` before expiry keeps the timed commit."""
    name = add(sim)
    with connect(sim, name) as conn:
        armed = time.monotonic()
        set_mtu_in_session(conn, 9000, "commit timer 00:00:01", session="t1")
        conn.send_command("configure session t1 commit")
    time.sleep(max(0.0, armed + 1.3 - time.monotonic()))
    assert mtu(sim, name) == 9000


def test_invalid_line_raises_and_changes_nothing(sim: SwitchSim) -> None:
    """An out-of-range value answers `% Invalid input`: netmiko raises ConfigInvalidException."""
    name = add(sim)
    with connect(sim, name) as conn:
        with pytest.raises(ConfigInvalidException):
            conn.send_config_set(["interface Ethernet1", "mtu 99999"], error_pattern=r"^% ")
        conn.exit_config_mode()
    assert (mtu(sim, name), sim.write_count(name)) == (9214, 0)


def test_reject_fault_refuses_matching_lines(sim: SwitchSim) -> None:
    """A `reject` fault refuses config lines matching its pattern."""
    name = add(sim)
    sim.set_fault(name, Fault(reject=r"^description "))
    with connect(sim, name) as conn, pytest.raises(ConfigInvalidException):
        conn.send_config_set(["interface Ethernet1", "description x"], error_pattern=r"^% ")
    assert sim.state(name).interfaces["Ethernet1"].description == ""


def test_auth_fail_fault_refuses_login(sim: SwitchSim) -> None:
    """An `auth_fail` fault makes netmiko raise NetmikoAuthenticationException."""
    name = add(sim)
    sim.set_fault(name, Fault(auth_fail=True))
    with pytest.raises(NetmikoAuthenticationException):
        connect(sim, name)


def known_hosts(sim: SwitchSim, name: str, tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "known_hosts"
    path.write_text(sim.host_key_line(name) + "\n")
    return {
        "ssh_strict": True,
        "system_host_keys": False,
        "alt_host_keys": True,
        "alt_key_file": str(path),
    }


def test_strict_host_key_check_accepts_reported_key(sim: SwitchSim, tmp_path: Path) -> None:
    """paramiko verifying against `host_key_line` accepts the healthy device."""
    name = add(sim)
    with connect(sim, name, **known_hosts(sim, name, tmp_path)) as conn:
        assert conn.find_prompt() == f"{name}#"


def test_changed_host_key_is_refused(sim: SwitchSim, tmp_path: Path) -> None:
    """With `host_key_changed`, paramiko refuses the connection against known_hosts."""
    name = add(sim)
    sim.set_fault(name, Fault(host_key_changed=True))
    with pytest.raises(NetmikoTimeoutException, match="does not match"):
        connect(sim, name, **known_hosts(sim, name, tmp_path))


def test_drop_mid_commit_applies_but_client_loses_connection(sim: SwitchSim) -> None:
    """With `drop_mid_commit` the client sees the session die, yet the commit took effect."""
    name = add(sim)
    sim.set_fault(name, Fault(drop_mid_commit=True))
    conn = connect(sim, name)
    with pytest.raises(CONNECTION_LOST):
        conn.send_config_set(
            ["interface Ethernet1", "mtu 9000", "commit"],
            config_mode_command="configure session d",
            read_timeout=1,
        )
    assert (mtu(sim, name), sim.write_count(name)) == (9000, 1)


def test_drop_before_commit_applies_nothing(sim: SwitchSim) -> None:
    """With `drop_before_commit` the session dies and running config is unchanged."""
    name = add(sim)
    sim.set_fault(name, Fault(drop_before_commit=True))
    conn = connect(sim, name)
    with pytest.raises(CONNECTION_LOST):
        conn.send_config_set(
            ["interface Ethernet1", "mtu 9000", "commit"],
            config_mode_command="configure session d",
            read_timeout=1,
        )
    assert (mtu(sim, name), sim.write_count(name)) == (9214, 0)


def test_unreachable_fault_refuses_until_cleared(sim: SwitchSim) -> None:
    """An `unreachable` device refuses connections until its fault is cleared."""
    name = add(sim)
    sim.set_fault(name, Fault(unreachable=True))
    with pytest.raises(NetmikoTimeoutException):
        connect(sim, name)
    sim.clear_faults(name)
    with connect(sim, name) as conn:
        assert conn.find_prompt() == f"{name}#"


def test_slow_fault_delays_every_answer(sim: SwitchSim) -> None:
    """A `slow` fault delays each command's answer by the given seconds."""
    name = add(sim)
    with connect(sim, name) as conn:
        sim.set_fault(name, Fault(slow=0.3))
        began = time.monotonic()
        conn.send_command("show hostname", auto_find_prompt=False, expect_string=r"#")
    assert time.monotonic() - began >= 0.3


def reload(sim: SwitchSim, conn: BaseConnection, name: str, command: str = "reload now") -> None:
    """Send a reboot command and wait until the device is back."""
    conn.write_channel(command + "\n")
    wait_for(lambda: not sim.is_up(name))
    conn.disconnect()
    wait_for(lambda: sim.is_up(name))


def test_reload_loses_unsaved_config(sim: SwitchSim) -> None:
    """`reload now` brings the device back with startup config, dropping unsaved commits."""
    name = add(sim)
    conn = connect(sim, name)
    set_mtu_in_session(conn, 9000, "commit")
    reload(sim, conn, name)
    assert mtu(sim, name) == 9214


def test_write_memory_survives_reload(sim: SwitchSim) -> None:
    """Config saved with `write memory` is still there after `reload now`."""
    name = add(sim)
    conn = connect(sim, name)
    set_mtu_in_session(conn, 9000, "commit")
    assert "Copy completed successfully." in show(conn, "write memory")
    reload(sim, conn, name)
    assert mtu(sim, name) == 9000


def test_boot_system_sets_version_after_reload(sim: SwitchSim) -> None:
    """A committed `boot system` image becomes the running EOS version after reload."""
    name = add(sim)
    conn = connect(sim, name)
    conn.send_config_set(
        ["boot system flash:EOS-4.31.2F.swi", "commit"],
        config_mode_command="configure session up",
        error_pattern=r"^% ",
    )
    reload(sim, conn, name)
    assert sim.state(name).nos_version == "4.31.2F"


def test_handler_exception_is_answered(sim: SwitchSim, monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception inside a handler is answered with `% Internal error`; the session lives on."""
    name = add(sim)

    def broken(*_args: object) -> str:
        raise RuntimeError("boom")

    monkeypatch.setattr(eos_show, "boot_config_text", broken)
    with connect(sim, name) as conn:
        assert "% Internal error: RuntimeError: boom" in show(conn, "show boot-config")
        assert show(conn, "show hostname").startswith("Hostname:")


def test_restarted_simulator_keeps_state_and_host_key(tmp_path: Path) -> None:
    """A new simulator on the same state directory restores committed config and the host key."""
    spec = DeviceSpec(name="keep", dialect="eos", password=PASSWORD)
    with SwitchSim(tmp_path) as first:
        first.add_device(spec)
        key = first.host_key_line("keep").split(" ", 1)[1]
        with connect(first, "keep") as conn:
            set_mtu_in_session(conn, 9100, "commit")
    with SwitchSim(tmp_path) as second:
        second.add_device(spec)
        assert (mtu(second, "keep"), second.host_key_line("keep").split(" ", 1)[1]) == (9100, key)


def test_fifty_devices_all_reachable(tmp_path: Path) -> None:
    """One simulator serves 50 devices and each answers with its own hostname."""
    with SwitchSim(tmp_path) as fleet:
        names = [f"leaf-{i}" for i in range(50)]
        for name in names:
            fleet.add_device(DeviceSpec(name=name, dialect="eos", password=PASSWORD))

        def hostname(name: str) -> str:
            with connect(fleet, name) as conn:
                return str(show_json(conn, "show hostname | json")["hostname"])

        with ThreadPoolExecutor(max_workers=16) as pool:
            assert list(pool.map(hostname, names)) == names


# -- SONiC ------------------------------------------------------------------------


def sonic_run(conn: BaseConnection, command: str) -> tuple[str, int]:
    """Run a shell command and return its output and exit status."""
    output = show(conn, command, read_timeout=10)
    return output, int(show(conn, "echo $?"))


def push_patch(
    conn: BaseConnection, patch: list[dict[str, Any]], path: str = "/tmp/plumb.json"
) -> None:
    payload = base64.b64encode(json.dumps(patch).encode()).decode()
    assert sonic_run(conn, f"echo {payload} | base64 -d > {path}") == ("", 0)


MTU_PATCH = [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9216"}]


def test_sonic_running_config_is_config_db_json(sim: SwitchSim) -> None:
    """netmiko's linux driver reads `show runningconfiguration all` as config_db JSON."""
    name = add(sim, "sonic")
    with connect(sim, name, "linux") as conn:
        db = show_json(conn, "show runningconfiguration all")
    assert db["PORT"]["Ethernet0"]["mtu"] == "9100"
    assert db["DEVICE_METADATA"]["localhost"]["hostname"] == name


def test_sonic_apply_patch_then_rollback(sim: SwitchSim) -> None:
    """A checkpoint, an applied JSON patch and a rollback round-trip the config."""
    name = add(sim, "sonic")
    with connect(sim, name, "linux") as conn:
        assert sonic_run(conn, "sudo config checkpoint before")[1] == 0
        push_patch(conn, MTU_PATCH)
        output, status = sonic_run(conn, "sudo config apply-patch /tmp/plumb.json")
        assert (status, mtu(sim, name, "Ethernet0")) == (0, 9216), output
        assert sonic_run(conn, "sudo config rollback before")[1] == 0
    assert mtu(sim, name, "Ethernet0") == 9100


def test_sonic_invalid_patch_changes_nothing(sim: SwitchSim) -> None:
    """A patch the model rejects fails with `Error:` and a non-zero status, changing nothing."""
    name = add(sim, "sonic")
    with connect(sim, name, "linux") as conn:
        push_patch(conn, [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "99999"}])
        output, status = sonic_run(conn, "sudo config apply-patch /tmp/plumb.json")
    assert output.startswith("Error:") and status != 0
    assert (mtu(sim, name, "Ethernet0"), sim.write_count(name)) == (9100, 0)


def test_sonic_rollback_timer_fires_unless_stopped(sim: SwitchSim) -> None:
    """A systemd-run rollback timer restores the checkpoint when it is not stopped in time."""
    name = add(sim, "sonic")
    with connect(sim, name, "linux") as conn:
        sonic_run(conn, "sudo config checkpoint plumb-before")
        push_patch(conn, MTU_PATCH)
        cmd = "sudo systemd-run --unit=plumb-confirm --on-active=1 config rollback plumb-before"
        assert sonic_run(conn, cmd)[1] == 0
        sonic_run(conn, "sudo config apply-patch /tmp/plumb.json")
    assert mtu(sim, name, "Ethernet0") == 9216
    wait_for(lambda: mtu(sim, name, "Ethernet0") == 9100, timeout=5)


def test_sonic_stopped_rollback_timer_keeps_change(sim: SwitchSim) -> None:
    """`systemctl stop NAME.timer` confirms the change."""
    name = add(sim, "sonic")
    with connect(sim, name, "linux") as conn:
        sonic_run(conn, "sudo config checkpoint plumb-before")
        push_patch(conn, MTU_PATCH)
        armed = time.monotonic()
        sonic_run(
            conn, "sudo systemd-run --unit=plumb-confirm --on-active=1 config rollback plumb-before"
        )
        sonic_run(conn, "sudo config apply-patch /tmp/plumb.json")
        assert sonic_run(conn, "sudo systemctl stop plumb-confirm.timer") == ("", 0)
    time.sleep(max(0.0, armed + 1.3 - time.monotonic()))
    assert mtu(sim, name, "Ethernet0") == 9216


def test_sonic_unknown_command(sim: SwitchSim) -> None:
    """An unknown command answers like bash, with status 127."""
    name = add(sim, "sonic")
    with connect(sim, name, "linux") as conn:
        assert sonic_run(conn, "frobnicate --now") == ("-bash: frobnicate: command not found", 127)


def test_sonic_install_and_reboot_changes_version(sim: SwitchSim) -> None:
    """`sonic-installer install` then `reboot` brings the device up on the new version."""
    name = add(sim, "sonic")
    conn = connect(sim, name, "linux")
    assert (
        sonic_run(
            conn, "sudo sonic-installer install -y http://images/sonic-broadcom-202405.2.bin"
        )[1]
        == 0
    )
    reload(sim, conn, name, "sudo reboot")
    assert sim.state(name).nos_version == "202405.2"


# -- command line -----------------------------------------------------------------


def test_cli_serves_until_sigterm(tmp_path: Path) -> None:
    """`python -m tests.switchsim serve` publishes ports and host keys, and stops on SIGTERM."""
    spec = tmp_path / "devices.json"
    spec.write_text(
        json.dumps(
            {
                "generate": [
                    {"count": 2, "prefix": "cli-", "dialect": "eos", "password": PASSWORD}
                ],
                "devices": [{"name": "cli-sonic", "dialect": "sonic", "password": PASSWORD}],
            }
        )
    )
    ready = tmp_path / "ready.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.switchsim",
            "serve",
            "--spec",
            str(spec),
            "--state-dir",
            str(tmp_path / "state"),
            "--ready-file",
            str(ready),
        ],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        wait_for(ready.exists, timeout=20)
        devices = json.loads(ready.read_text())["devices"]
        assert sorted(devices) == ["cli-1", "cli-2", "cli-sonic"]
        assert devices["cli-1"]["host_key_line"].startswith(
            f"[127.0.0.1]:{devices['cli-1']['port']} ssh-ed25519 "
        )
        with ConnectHandler(
            device_type="arista_eos",
            host="127.0.0.1",
            port=devices["cli-2"]["port"],
            username="admin",
            password=PASSWORD,
            fast_cli=True,
        ) as conn:
            assert conn.find_prompt() == "cli-2>"
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0


# -- properties of the pure parts --------------------------------------------------------

_ports = st.dictionaries(
    st.integers(1, 8).map(lambda i: f"Ethernet{i}"),
    st.builds(
        InterfaceState,
        mtu=st.integers(68, 9216),
        description=st.lists(st.sampled_from(["to", "spine-1", "rail", "3"]), max_size=3).map(
            " ".join
        ),
        ipv4=st.none()
        | st.integers(0, 2**24 - 1).map(lambda n: f"10.{n >> 16}.{(n >> 8) & 255}.{n & 254}/31"),
        pfc_priorities=st.lists(st.integers(0, 7), unique=True).map(sorted),
        ecn=st.dictionaries(
            st.integers(0, 7),
            st.integers(1, 500).flatmap(
                lambda lo: st.builds(
                    EcnQueue,
                    kmin_kb=st.just(lo),
                    kmax_kb=st.integers(lo, 1000),
                    pmax_percent=st.integers(1, 100),
                )
            ),
            max_size=3,
        ),
        pfc_headroom_kb=st.none() | st.integers(1, 2000),
        pfc_xoff_kb=st.none() | st.integers(1, 2000),
    ),
    min_size=1,
    max_size=4,
)
_bgp = st.none() | st.builds(
    BgpState,
    asn=st.integers(1, 2**32 - 1),
    router_id=st.none() | st.just("10.1.0.1"),
    maximum_paths=st.integers(1, 128),
    neighbors=st.dictionaries(
        st.integers(0, 255).map(lambda n: f"10.0.0.{n}"),
        st.builds(
            BgpNeighbor,
            remote_as=st.integers(1, 2**32 - 1),
            route_map_in=st.none() | st.just("RM-IN"),
        ),
        max_size=4,
    ),
)
_states = st.builds(
    SwitchState,
    hostname=st.just("leaf-1"),
    model=st.just("M"),
    nos_version=st.just("4.30.1F"),
    boot_image=st.just("flash:EOS-4.30.1F.swi"),
    interfaces=_ports,
    dscp_to_tc=st.dictionaries(st.integers(0, 63), st.integers(0, 7), max_size=8),
    bgp=_bgp,
)


@settings(max_examples=30, deadline=None)
@given(_states)
def test_eos_running_config_replays_to_same_state(state: SwitchState) -> None:
    """`show running-config` read back through the config grammar gives the same config and
    the same state, less the PFC headroom and xoff sizes EOS has no interface setting for."""
    config = config_from_state(state)
    text = eos_render.running_config(config, state.model, state.nos_version)
    assert parse_config(text, ("tx-queue",)) == config
    expected = state.clone()
    for port in expected.interfaces.values():
        port.pfc_headroom_kb = port.pfc_xoff_kb = None
    assert state_view(config, state.model, state.nos_version) == expected


@settings(max_examples=30, deadline=None)
@given(_states)
def test_sonic_config_db_projects_back_to_same_state(state: SwitchState) -> None:
    """Projecting a rendered config_db gives back the state it was rendered from."""
    assert project(render_config_db(state), state.nos_version, state.boot_image) == state


def test_failed_json_patch_leaves_document_unchanged() -> None:
    """A patch whose second operation fails raises and leaves the input untouched."""
    doc = {"PORT": {"Ethernet0": {"mtu": "9100"}}}
    patch = [
        {"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "1"},
        {"op": "remove", "path": "/NOPE"},
    ]
    with pytest.raises(PatchError):
        apply_patch(doc, patch)
    assert doc == {"PORT": {"Ethernet0": {"mtu": "9100"}}}


def test_default_states_are_valid() -> None:
    """Both dialects' default states survive a round trip through their dict form."""
    for dialect in ("eos", "sonic"):
        state = default_state("leaf-1", dialect)
        assert SwitchState.from_dict(state.to_dict()) == state

"""The simulated EOS switch behaves as EOS documents, per profile, driven by netmiko over SSH.

Each test adds its own device to one module-wide simulator and checks one
fact: what EOS accepts, what it refuses, and the shape of what it prints.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from netmiko import BaseConnection, ConnectHandler

from tests.switchsim import DeviceSpec, SwitchSim, default_state

PASSWORD = "pw"
_names = itertools.count(1)
ASDOT = "eos-4.32-asdot-profiles"


def add(sim: SwitchSim, profile: str = "", **extra: Any) -> str:
    """Add a fresh EOS device of `profile` and return its name."""
    name = f"eos-{profile or 'default'}-{next(_names)}".replace(".", "_")
    sim.add_device(
        DeviceSpec(name=name, dialect="eos", password=PASSWORD, profile=profile, **extra)
    )
    return name


def connect(sim: SwitchSim, name: str) -> BaseConnection:
    conn = ConnectHandler(
        device_type="arista_eos",
        host="127.0.0.1",
        port=sim.port(name),
        username="admin",
        password=PASSWORD,
        fast_cli=True,
        conn_timeout=5,
    )
    conn.enable()
    return conn


def configure(conn: BaseConnection, lines: list[str], session: str | None = None) -> str:
    """Send config lines (in configure terminal, or in a named session); return the output."""
    mode = "configure terminal" if session is None else f"configure session {session}"
    return str(conn.send_config_set(lines, config_mode_command=mode, cmd_verify=True))


def show(conn: BaseConnection, command: str) -> str:
    return str(conn.send_command(command))


def show_json(conn: BaseConnection, command: str) -> Any:
    return json.loads(show(conn, command))


# -- what EOS refuses ---------------------------------------------------------------


def test_pfc_headroom_and_xoff_lines_are_invalid_and_spoil_the_session(sim: SwitchSim) -> None:
    """EOS has no PFC headroom/xoff interface commands: both are invalid input and the session
    carrying them cannot be committed."""
    name = add(sim)
    with connect(sim, name) as conn:
        output = configure(
            conn,
            [
                "interface Ethernet1",
                "mtu 9100",
                "priority-flow-control headroom 100 kbytes",
                "priority-flow-control xoff-threshold 50 kbytes",
                "commit",
            ],
            session="s1",
        )
        sessions = show_json(conn, "show configuration sessions detail | json")["sessions"]
    assert output.count("% Invalid input") == 2
    assert "% Cannot commit session s1" in output
    assert sessions["s1"]["state"] == "pending"
    assert (sim.state(name).interfaces["Ethernet1"].mtu, sim.write_count(name)) == (9214, 0)


def test_out_of_range_and_incomplete_lines(sim: SwitchSim) -> None:
    """Values outside EOS's ranges are invalid input; a command lacking its argument is
    incomplete; neither changes anything."""
    name = add(sim)
    with connect(sim, name) as conn:
        output = configure(
            conn,
            [
                "interface Ethernet1",
                "mtu 9215",
                "mtu 67",
                "mtu",
                "tx-queue 8",
                "exit",
                "qos map dscp 64 to traffic-class 1",
                "router bgp",
                "frobnicate now",
            ],
        )
    assert output.count("% Invalid input") == 5
    assert output.count("% Incomplete command") == 2
    assert sim.write_count(name) == 0


def test_ecn_threshold_units_and_limits(sim: SwitchSim) -> None:
    """ECN thresholds take bytes, kbytes, mbytes, segments or milliseconds up to 256000000,
    probability 1-100 and weight 0-15; the minimum may not exceed the maximum."""
    name = add(sim)
    ecn = "random-detect ecn minimum-threshold"
    good = [
        f"{ecn} 100 kbytes maximum-threshold 1 mbytes max-mark-probability 5 weight 15",
        f"{ecn} 20 segments maximum-threshold 200 segments",
        f"{ecn} 1 milliseconds maximum-threshold 2 milliseconds weight 0",
    ]
    bad = [
        f"{ecn} 100 gbytes maximum-threshold 200 gbytes",
        f"{ecn} 2 mbytes maximum-threshold 100 kbytes",
        f"{ecn} 100 kbytes maximum-threshold 200 kbytes max-mark-probability 101",
        f"{ecn} 100 kbytes maximum-threshold 200 kbytes weight 16",
        f"{ecn} 100 kbytes maximum-threshold 256000001 kbytes",
        f"{ecn} 10 segments maximum-threshold 20 kbytes",
    ]
    with connect(sim, name) as conn:
        for queue, line in enumerate(good, start=1):
            assert "%" not in configure(conn, ["interface Ethernet1", f"tx-queue {queue}", line])
        for line in bad:
            output = configure(conn, ["interface Ethernet2", "tx-queue 3", line])
            assert "% Invalid input" in output, line
        text = show(conn, "show running-config")
    assert f"      {good[1]}" in text and f"      {good[0]}" in text
    assert sim.state(name).interfaces["Ethernet1"].ecn[1].kmax_kb == 1024
    assert 2 not in sim.state(name).interfaces["Ethernet1"].ecn  # segments: no KB figure
    assert sim.state(name).interfaces["Ethernet2"].ecn == {}


def test_queue_kind_follows_the_platform(sim: SwitchSim) -> None:
    """A Trident platform configures unicast queues as uc-tx-queue and refuses tx-queue; the
    classic platform is the other way round."""
    trident, classic = add(sim, ASDOT), add(sim, "eos-4.31")
    with connect(sim, trident) as conn:
        refused = configure(conn, ["interface Ethernet2", "tx-queue 1"])
        accepted = configure(conn, ["interface Ethernet2", "uc-tx-queue 1"])
        prompt = conn.find_prompt()
    with connect(sim, classic) as conn:
        assert "% Invalid input" in configure(conn, ["interface Ethernet2", "uc-tx-queue 1"])
    assert "% Invalid input" in refused and "%" not in accepted
    assert prompt == f"{trident}#"


# -- ports -------------------------------------------------------------------------------


def test_switchport_reports_l2_mtu_and_ignores_ip_until_routed(sim: SwitchSim) -> None:
    """On a bridged port `show interfaces` gives the L2 MTU and no address, and EOS warns that
    IP configuration is ignored; `no switchport` makes the port routed with its L3 MTU."""
    name = add(sim, ASDOT)
    with connect(sim, name) as conn:
        warning = configure(conn, ["interface Ethernet3", "mtu 9000", "ip address 10.9.0.0/31"])
        bridged = show_json(conn, "show interfaces | json")["interfaces"]["Ethernet3"]
        bridged_view = sim.state(name).interfaces["Ethernet3"]
        configure(conn, ["interface Ethernet4", "l2 mtu 9000"])
        l2 = show_json(conn, "show interfaces | json")["interfaces"]["Ethernet4"]
        configure(conn, ["interface Ethernet3", "no switchport"])
        routed = show_json(conn, "show interfaces | json")["interfaces"]["Ethernet3"]
    assert "IP configuration will be ignored while interface Ethernet3 is not a routed port" in (
        warning
    )
    assert (bridged["forwardingModel"], bridged["mtu"], bridged["interfaceAddress"]) == (
        "bridged",
        9214,
        [],
    )
    assert bridged["l3MtuConfigured"] is True and bridged_view.ipv4 is None
    assert (l2["forwardingModel"], l2["mtu"]) == ("bridged", 9000)
    assert (routed["forwardingModel"], routed["mtu"]) == ("routed", 9000)
    assert routed["interfaceAddress"][0]["primaryIp"] == {"address": "10.9.0.0", "maskLen": 31}
    assert sim.state(name).interfaces["Ethernet3"].ipv4 == "10.9.0.0/31"


def test_routed_port_without_mtu_line_has_l3_default(sim: SwitchSim) -> None:
    """A routed port with no `mtu` line runs the L3 default of 1500 bytes."""
    name = add(sim)
    with connect(sim, name) as conn:
        configure(conn, ["interface Ethernet2", "no mtu", "no switchport"])
        port = show_json(conn, "show interfaces | json")["interfaces"]["Ethernet2"]
    assert (port["forwardingModel"], port["mtu"], port["l3MtuConfigured"]) == (
        "routed",
        1500,
        False,
    )


# -- qos ---------------------------------------------------------------------------------


def test_qos_profile_applies_to_ports_and_survives_other_changes(sim: SwitchSim) -> None:
    """A port takes ECN/PFC from its service profile, overridden by its own queue lines; a
    change elsewhere leaves the profile and the service-profile lines as they were."""
    name = add(sim, ASDOT)
    with connect(sim, name) as conn:
        before = show(conn, "show running-config")
        configure(conn, ["interface Ethernet1", "description renamed", "commit"], session="p")
        after = show(conn, "show running-config")
    state = sim.state(name)
    assert (state.interfaces["Ethernet3"].pfc_priorities, state.interfaces["Ethernet3"].ecn[3]) == (
        [3],
        state.interfaces["Ethernet1"].ecn[3],
    )
    assert (
        state.interfaces["Ethernet1"].ecn[3].kmin_kb,
        state.interfaces["Ethernet4"].ecn[3].kmax_kb,
    ) == (
        150,
        2048,
    )
    profile = before[before.index("qos profile ROCE") : before.index("interface Ethernet1")]
    assert profile in after and after.count("   service-profile ROCE") == 4
    assert before.replace("description to-spine-1", "description renamed") == after


def test_dscp_map_with_drop_precedence(sim: SwitchSim) -> None:
    """`qos map dscp` takes several code points and an optional drop precedence; the running
    config groups code points sharing a traffic class."""
    name = add(sim)
    with connect(sim, name) as conn:
        configure(
            conn,
            [
                "qos map dscp 10 12 to traffic-class 2 drop-precedence 1",
                "qos map dscp 26 to traffic-class 3",
                "qos map dscp 24 to traffic-class 3",
            ],
        )
        tree = show_json(conn, "show running-config | json")["cmds"]
    assert "qos map dscp 10 12 to traffic-class 2 drop-precedence 1" in tree
    assert "qos map dscp 24 26 to traffic-class 3" in tree
    assert sim.state(name).dscp_to_tc == {10: 2, 12: 2, 24: 3, 26: 3}


# -- BGP ---------------------------------------------------------------------------------


def test_asdot_notation_and_running_as(sim: SwitchSim) -> None:
    """With asdot notation the running config prints asdot; entering another AS is refused
    with EOS's message, whichever notation it is given in."""
    name = add(sim, ASDOT)
    with connect(sim, name) as conn:
        refused = configure(conn, ["router bgp 65000"])
        same = configure(conn, ["router bgp 4266524237", "neighbor 10.0.0.9 remote-as 70000"])
        text = show(conn, "show running-config")
        summary = show_json(conn, "show ip bgp summary | json")["vrfs"]["default"]
    assert "% BGP is already running with AS number 65101.65101" in refused
    assert "%" not in same
    assert "router bgp 65101.65101\n   bgp asn notation asdot" in text
    assert "   neighbor 10.0.0.9 remote-as 1.4464" in text
    bgp = sim.state(name).bgp
    assert bgp is not None and (summary["asn"], bgp.asn) == ("65101.65101", 4266524237)


def test_peer_group_is_inherited_and_old_syntax_is_printed_new(sim: SwitchSim) -> None:
    """A neighbour in a peer group takes its remote-as and route map; the hyphenated
    `peer-group` input is printed as `peer group`; an unknown group is refused."""
    name = add(sim, "eos-4.32")
    with connect(sim, name) as conn:
        output = configure(
            conn,
            [
                "router bgp 65101",
                "neighbor LEAVES peer-group",
                "neighbor LEAVES remote-as 65200",
                "neighbor LEAVES route-map RM-IN in",
                "neighbor 10.0.0.5 peer-group LEAVES",
                "neighbor 10.0.0.7 peer group NOPE",
            ],
        )
        text = show(conn, "show running-config")
        peers = show_json(conn, "show ip bgp neighbors | json")["vrfs"]["default"]["peerList"]
    assert output.count("% Invalid input") == 1
    assert "   neighbor LEAVES peer group\n   neighbor LEAVES remote-as 65200" in text
    assert "   neighbor 10.0.0.5 peer group LEAVES" in text and "peer-group" not in text
    bgp = sim.state(name).bgp
    assert bgp is not None and (bgp.neighbors["10.0.0.5"].remote_as, peers[0]["asn"]) == (
        65200,
        "65200",
    )
    assert bgp.neighbors["10.0.0.5"].route_map_in == "RM-IN"


def test_ipv6_neighbour_is_activated_and_kept_out_of_ipv4(sim: SwitchSim) -> None:
    """An IPv6 neighbour is activated under `address-family ipv6`, shows in the IPv6 summary
    only and stays out of the IPv4 state view."""
    name = add(sim)
    with connect(sim, name) as conn:
        configure(
            conn,
            [
                "router bgp 65101",
                "neighbor fc00::3 remote-as 65010",
                "address-family ipv6",
                "neighbor fc00::3 activate",
            ],
        )
        text = show(conn, "show running-config")
        v6 = show_json(conn, "show ipv6 bgp summary | json")["vrfs"]["default"]["peers"]
        v4 = show_json(conn, "show ip bgp summary | json")["vrfs"]["default"]["peers"]
    assert "   !\n   address-family ipv6\n      neighbor fc00::3 activate" in text
    assert (list(v6), list(v4)) == (["fc00::3"], [])
    bgp = sim.state(name).bgp
    assert bgp is not None and bgp.neighbors == {}


# -- sessions ---------------------------------------------------------------------------


@pytest.mark.parametrize(("profile", "hunks"), [("eos-4.31", True), ("eos-4.32", False)])
def test_session_diff_hunk_headers_per_version(sim: SwitchSim, profile: str, hunks: bool) -> None:
    """Session diffs carry `@@` hunk headers up to 4.31 and none from 4.32; the named session
    shows its whole candidate config."""
    name = add(sim, profile)
    with connect(sim, name) as conn:
        configure(conn, ["interface Ethernet1", "mtu 9100"], session="d1")
        conn.send_command("end", expect_string=r"#")
        diff = show(conn, "show session-config named d1 diffs")
        candidate = show(conn, "show session-config named d1")
    assert diff.startswith("--- system:/running-config\n+++ session:/d1-session-config")
    assert "-   mtu 9214" in diff and "+   mtu 9100" in diff
    assert ("\n@@ " in diff) is hunks
    assert "interface Ethernet1\n   mtu 9100" in candidate and candidate.endswith("end")


def test_commit_timer_state_before_4_32(sim: SwitchSim) -> None:
    """Up to 4.31 a timed commit shows state pendingCommitTimer with its commitBy deadline."""
    name = add(sim, "eos-4.31")
    with connect(sim, name) as conn:
        configure(conn, ["interface Ethernet1", "mtu 9100", "commit timer 00:10:00"], "t1")
        data = show_json(conn, "show configuration sessions detail | json")
    session = data["sessions"]["t1"]
    assert session["state"] == "pendingCommitTimer"
    assert session["commitBy"] - session["completedTime"] == pytest.approx(600, abs=1)
    assert "commitTimerSessionName" not in data


def test_commit_timer_state_from_4_32(sim: SwitchSim) -> None:
    """From 4.32 a timed commit shows state committed and the timer in top-level keys, which
    go away once the session is confirmed."""
    name = add(sim, "eos-4.32")
    with connect(sim, name) as conn:
        configure(conn, ["interface Ethernet1", "mtu 9100", "commit timer 00:10:00"], "t2")
        pending = show_json(conn, "show configuration sessions detail | json")
        conn.send_command("configure session t2 commit")
        confirmed = show_json(conn, "show configuration sessions detail | json")
    assert pending["sessions"]["t2"]["state"] == "committed"
    assert "commitBy" not in pending["sessions"]["t2"]
    assert pending["commitTimerSessionName"] == "t2"
    assert pending["commitTimerExpireTime"] > pending["sessions"]["t2"]["completedTime"]
    assert "commitTimerSessionName" not in confirmed
    assert confirmed["sessions"]["t2"]["state"] == "committed"
    assert (confirmed["maxSavedSessions"], confirmed["maxOpenSessions"]) == (1, 5)


# -- show output shapes ----------------------------------------------------------------


def test_show_version_engineering_build(sim: SwitchSim) -> None:
    """`show version | json` carries the engineering-build version string and identity keys."""
    name = add(sim, ASDOT)
    with connect(sim, name) as conn:
        version = show_json(conn, "show version | json")
    assert version["version"] == "4.32.0F-35960112.4320F (engineering build)"
    assert version["internalVersion"] == "4.32.0F-35960112.4320F"
    assert version["modelName"] == "DCS-7050CX3-32S"
    assert version["serialNumber"] and version["systemMacAddress"].count(":") == 5


def test_show_version_release_build_id(sim: SwitchSim) -> None:
    """A release's internalVersion is VERSION-BUILD.COMPACT, as EOS prints it."""
    name = add(sim, "eos-4.32")
    with connect(sim, name) as conn:
        version = show_json(conn, "show version | json")
    head, build = version["internalVersion"].split("-")
    assert (version["version"], head) == ("4.32.1F", "4.32.1F")
    assert build.endswith(".4321F") and build.split(".")[0].isdigit()


def _tree_lines(cmds: dict[str, Any], depth: int = 0) -> list[str]:
    lines = []
    for command, block in cmds.items():
        lines.append("   " * depth + command)
        if block is not None:
            lines += _tree_lines(block["cmds"], depth + 1)
    return lines


@pytest.mark.parametrize("profile", ["", ASDOT])
def test_running_config_json_agrees_with_text(sim: SwitchSim, profile: str) -> None:
    """`show running-config | json` holds every text line at its nesting, in the same order."""
    name = add(sim, profile)
    with connect(sim, name) as conn:
        text = show(conn, "show running-config")
        tree = show_json(conn, "show running-config | json")
    wanted = [
        line
        for line in text.splitlines()
        if line.strip() and not line.strip().startswith("!") and line != "end"
    ]
    assert _tree_lines(tree["cmds"]) == wanted
    assert tree["header"][0].startswith(f"! device: {name} (")


def test_lldp_neighbors_detail_json(sim: SwitchSim) -> None:
    """LLDP neighbours from the spec appear in EOS's shape; ports without any have an empty list."""
    lldp = (("Ethernet1", "spine-1", "Ethernet7"), ("Ethernet2", "gpu-3", "0c42.a1b2.c3d4"))
    name = add(sim, "eos-4.32", lldp=lldp)
    with connect(sim, name) as conn:
        data = show_json(conn, "show lldp neighbors detail | json")["lldpNeighbors"]
        text = show(conn, "show lldp neighbors")
    spine = data["Ethernet1"]["lldpNeighborInfo"][0]
    assert spine["systemName"] == "spine-1" and spine["chassisIdType"] == "macAddress"
    assert spine["neighborInterfaceInfo"]["interfaceIdType"] == "interfaceName"
    assert spine["neighborInterfaceInfo"]["interfaceId"] == '"Ethernet7"'
    assert spine["neighborInterfaceInfo"]["interfaceId_v2"] == "Ethernet7"
    gpu = data["Ethernet2"]["lldpNeighborInfo"][0]["neighborInterfaceInfo"]
    assert (gpu["interfaceIdType"], gpu["interfaceId"]) == ("macAddress", "0c42.a1b2.c3d4")
    assert data["Ethernet3"]["lldpNeighborInfo"] == []
    assert "Et1           spine-1" in text


# -- persistence and profiles -------------------------------------------------------------


def test_saved_record_round_trips_the_running_config(tmp_path: Path) -> None:
    """A restarted simulator restores the exact running config text, profile style included."""
    spec = DeviceSpec(name="keep-asdot", dialect="eos", password=PASSWORD, profile=ASDOT)
    with SwitchSim(tmp_path) as first:
        first.add_device(spec)
        with connect(first, spec.name) as conn:
            configure(conn, ["interface Ethernet2", "mtu 9000", "commit"], session="k")
            before = show(conn, "show running-config")
    with SwitchSim(tmp_path) as second:
        second.add_device(spec)
        with connect(second, spec.name) as conn:
            assert show(conn, "show running-config") == before
    record = json.loads((tmp_path / "keep-asdot.json").read_text())
    assert record["running"]["interfaces"]["Ethernet2"]["mtu"] == 9000


def test_unknown_profile_is_refused(tmp_path: Path) -> None:
    """A spec naming a profile the EOS table lacks is refused, naming the known ones."""
    with SwitchSim(tmp_path) as fresh, pytest.raises(ValueError, match=r"eos-4\.31"):
        fresh.add_device(DeviceSpec(name="odd", dialect="eos", profile="eos-9.99"))


def test_simulator_process_serves_profile_and_lldp(tmp_path: Path) -> None:
    """`python -m tests.switchsim serve` builds devices with the spec's profile and LLDP."""
    from tests.switchsim_process import serve

    spec = DeviceSpec(
        name="proc-eos",
        dialect="eos",
        password=PASSWORD,
        profile="eos-4.32",
        lldp=(("Ethernet1", "spine-9", "Ethernet3"),),
    )
    with serve(tmp_path, [spec]) as running:
        conn = ConnectHandler(
            device_type="arista_eos",
            host="127.0.0.1",
            port=running.port("proc-eos"),
            username="admin",
            password=PASSWORD,
            fast_cli=True,
        )
        with conn:
            version = show_json(conn, "show version | json")["version"]
            lldp = show_json(conn, "show lldp neighbors detail | json")["lldpNeighbors"]
    assert version == "4.32.1F"
    assert lldp["Ethernet1"]["lldpNeighborInfo"][0]["systemName"] == "spine-9"


def test_initial_state_beyond_the_cli_survives_a_restart(tmp_path: Path) -> None:
    """A spec's initial MTU of 9216 (more than the CLI's 9214) is kept across a restart, while
    the CLI still refuses it."""
    state = default_state("wide", "eos")
    state.interfaces["Ethernet1"].mtu = 9216
    spec = DeviceSpec(name="wide", dialect="eos", password=PASSWORD, initial=state)
    with SwitchSim(tmp_path) as first:
        first.add_device(spec)
        with connect(first, "wide") as conn:
            refused = configure(conn, ["interface Ethernet2", "mtu 9216", "description saved"])
    assert "   mtu 9216\n" in json.loads((tmp_path / "wide.json").read_text())["running_config"]
    with SwitchSim(tmp_path) as second:
        second.add_device(spec)
        port = second.state("wide").interfaces
        assert (port["Ethernet1"].mtu, port["Ethernet2"].description) == (9216, "saved")
    assert "% Invalid input" in refused

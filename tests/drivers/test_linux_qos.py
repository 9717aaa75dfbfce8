"""linux-frr's ECN (RED under a prio root), PFC (DCB) and BGP session parsers and
renderers: parsers against output in iproute2's and FRR's documented formats, rendered
lines against the real ``tc``'s argument parser, the probes against this kernel and the
real ``dcb`` on a veth."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.capabilities import checker
from reconciler.drivers.base import DeviceRef
from reconciler.drivers.linux_exec import Ran, check_sudo, shell_command
from reconciler.drivers.linux_frr_sessions import parse_summary, sessions_state
from reconciler.drivers.linux_qos import (
    Red,
    dcb_script,
    ecn_lines,
    ecn_state,
    pfc_argv,
    pfc_state,
    probe_result,
    qdisc_probe,
)
from reconciler.errors import DeviceAuthError

# `tc -d -j qdisc show` on a switch port with plumb's root and RED child, as tc/q_prio.c
# and tc/q_red.c print them (red's ewma/probability/Scell_log only with -d), next to a
# port without one and lo.
QDISCS = [
    {"kind": "noqueue", "handle": "0:", "dev": "lo", "root": True, "refcnt": 2, "options": {}},
    {
        "kind": "prio",
        "handle": "1:",
        "dev": "swp1",
        "root": True,
        "refcnt": 9,
        "options": {
            "bands": 8,
            "priomap": [0, 1, 2, 3, 4, 5, 6, 7, 0, 0, 0, 0, 0, 0, 0, 0],
            "multiqueue": False,
        },
    },
    {
        "kind": "red",
        "handle": "14:",
        "dev": "swp1",
        "parent": "1:4",
        "options": {
            "limit": 819200,
            "min": 102400,
            "max": 204800,
            "ecn": True,
            "harddrop": False,
            "adaptive": False,
            "nodrop": False,
            "ewma": 6,
            "probability": 0.1,
            "Scell_log": 22,
        },
    },
    {
        "kind": "red",
        "handle": "12:",
        "dev": "swp1",
        "parent": "1:2",
        "options": {"limit": 400000, "min": 30000, "max": 90000, "ecn": False},
    },
    {"kind": "pfifo_fast", "handle": "0:", "dev": "swp2", "root": True, "refcnt": 2},
]

# dcb-pfc(8)'s example, as dcb/dcb_pfc.c prints it with -j (on/off as JSON booleans).
DCB_SWP1 = {
    "pfc_cap": 8,
    "macsec_bypass": False,
    "delay": 4096,
    "prio_pfc": [False, False, False, False, False, False, True, True],
}

# FRR 8.4 `show bgp summary json` of a leaf with a numbered and an unnumbered peer
# (trimmed), the unnumbered one also in IPv6 unicast.
SUMMARY = {
    "ipv4Unicast": {
        "routerId": "10.0.1.1",
        "as": 65001,
        "peers": {
            "10.101.1.0": {"remoteAs": 65100, "state": "Established", "pfxRcd": 2},
            "s2": {"remoteAs": 65100, "state": "Established", "pfxRcd": 2, "hostname": "spine2"},
            "10.103.1.0": {"remoteAs": 65100, "state": "Active", "pfxRcd": 0},
        },
    },
    "ipv6Unicast": {"peers": {"s2": {"remoteAs": 65100, "state": "Established", "pfxRcd": 1}}},
}

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces)")


def test_ecn_is_read_through_the_roots_priomap() -> None:
    """Priority 3 goes to band 3 (class 1:4): its RED child's thresholds, in KB; a RED
    child without ECN marks nothing and reads as no ECN."""
    state = ecn_state(json.dumps(QDISCS), ["swp1"])
    assert (state["qos/ecn/3/kmin_kb"], state["qos/ecn/3/kmax_kb"]) == (100, 200)
    assert state["qos/ecn/3/pmax_percent"] == 10
    assert state["qos/ecn/1/kmin_kb"] is None
    assert ecn_state(json.dumps(QDISCS), ["swp1", "swp2"])["qos/ecn/3/kmin_kb"] is None


def test_unreadable_tc_output_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="tc -d -j qdisc show"):
        ecn_state("qdisc htb 1: root", ["swp1"])


def test_a_change_renders_the_lines_that_undo_it() -> None:
    """New thresholds: root and child; back to none: the child is deleted."""
    forward = ecn_lines(["swp1"], {3: None}, {3: Red(100, 200, 10)})
    assert forward[0].startswith("qdisc replace dev swp1 root handle 1: prio bands 8")
    assert "min 102400 max 204800" in forward[1] and forward[1].endswith("probability 0.1 ecn")
    assert ecn_lines(["swp1"], {3: Red(100, 200, 10)}, {3: None}) == [
        "qdisc delete dev swp1 parent 1:4"
    ]


def _tc(line: str) -> subprocess.CompletedProcess[str]:
    """``tc`` on ``line`` (its device replaced by lo) in a namespace of its own."""
    argv = ["unshare", "-n", "tc", *line.replace(" dev swp1 ", " dev lo ").split()]
    return subprocess.run(argv, capture_output=True, text=True, check=False)


def _parsed(done: subprocess.CompletedProcess[str]) -> bool:
    """tc's own parser accepted the line: it ran, or the kernel answered."""
    rejected = ("Usage:", "Illegal", "What is", "Error: argument")
    return not any(word in done.stderr for word in rejected) and (
        done.returncode == 0 or "Error:" in done.stderr
    )


@ROOT_ONLY
@pytest.mark.skipif(shutil.which("tc") is None, reason="no tc")
def test_rendered_lines_pass_tcs_own_parser() -> None:
    wide = {
        0: Red(1, 1_000_000, 100),
        1: Red(2, 3, 1),
        3: Red(100, 400, 10),
        7: Red(999_999, 1_000_000, 50),
    }
    lines = ecn_lines(["swp1"], {}, wide)
    lines += ecn_lines(["swp1"], {3: Red(100, 400, 10)}, {3: None})
    for line in lines:
        done = _tc(line)
        assert _parsed(done), (line, done.stderr)
    broken = _tc(lines[1].replace(" ecn", " ecn sometimes"))
    assert not _parsed(broken) and "What is" in broken.stderr


def _kernel_config() -> str | None:
    path = Path("/proc/config.gz")
    return gzip.decompress(path.read_bytes()).decode() if path.exists() else None


@ROOT_ONLY
def test_the_probe_asks_the_kernel() -> None:
    """The probe's verdict is the kernel's: where its config lacks prio or red, the
    reason quotes tc's answer."""
    done = subprocess.run(["sh", "-c", qdisc_probe()], capture_output=True, text=True)
    ok, why = probe_result(done.stdout)
    config = _kernel_config()
    if config is not None:
        has = all(f"CONFIG_NET_SCH_{k}=" in config for k in ("PRIO", "RED"))
        assert ok == has
    if not ok:
        assert "Specified qdisc kind is unknown" in why or "probe failed" in why
        refuses = checker("linux-frr", {"system/qdisc_red": "no", "system/qdisc_probe": why})(
            "qos/ecn/3/kmin_kb"
        )
        assert refuses is not None and refuses.startswith(why)


def test_pfc_is_read_from_dcbs_json() -> None:
    marker = "plumb-dcb "
    output = f"{marker}swp1\n{json.dumps(DCB_SWP1)}\n{marker}rc=0\n"
    assert pfc_state(output, {"swp1": "Ethernet1"}) == {
        "interfaces/Ethernet1/pfc_priorities": "6,7"
    }
    assert pfc_argv("swp1", "3,4") == [
        "dcb",
        "pfc",
        "set",
        "dev",
        "swp1",
        "prio-pfc",
        "all:off",
        "3:on",
        "4:on",
    ]
    with pytest.raises(ValueError, match="0-7"):
        pfc_argv("swp1", "9")


@pytest.fixture
def veth() -> Iterator[str]:
    namespace = f"plumb-qos-test-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", namespace], check=True)
    try:
        subprocess.run(
            [
                "ip",
                "-n",
                namespace,
                "link",
                "add",
                "name",
                "p0",
                "type",
                "veth",
                "peer",
                "name",
                "p1",
            ],
            check=True,
        )
        yield namespace
    finally:
        subprocess.run(["ip", "netns", "del", namespace], check=False)


@ROOT_ONLY
@pytest.mark.skipif(shutil.which("dcb") is None, reason="no dcb")
def test_a_veth_has_no_dcb_and_pfc_is_refused_with_dcbs_answer(veth: str) -> None:
    script = dcb_script(["p0"])
    done = subprocess.run(
        ["ip", "netns", "exec", veth, "sh", "-c", script], capture_output=True, text=True
    )
    state = pfc_state(done.stdout, {"p0": "Ethernet1"})
    assert "interfaces/Ethernet1/pfc_priorities" not in state
    assert (
        state["interfaces/Ethernet1/dcb"] == "dcb pfc show: Attribute read: Operation not supported"
    )
    observed = {
        **state,
        "system/runs_platform": "linux-frr",
        "interfaces/Ethernet1/link_kind": "veth",
    }
    reason = checker("linux-frr", observed)("interfaces/Ethernet1/pfc_priorities")
    assert reason == (
        "Ethernet1 (veth) has no DCB: PFC cannot be set on it "
        "(dcb pfc show: Attribute read: Operation not supported)"
    )


def test_bgp_sessions_cover_every_family_and_are_read_only() -> None:
    sessions = parse_summary(json.dumps(SUMMARY))
    assert sessions["s2"].prefixes_received == 3 and sessions["s2"].state == "Established"
    assert sessions["10.103.1.0"].state == "Active"
    state = sessions_state(sessions)
    assert state["bgp_session/10.101.1.0/prefixes_received"] == 2
    refuses = checker("linux-frr", {})
    assert refuses("bgp_session/s2/state") == "BGP session state is observed, never written"
    with pytest.raises(ValueError, match="show bgp summary json"):
        parse_summary("% No BGP neighbors found")


@pytest.mark.skipif(shutil.which("sudo") is None or os.geteuid() != 0, reason="no sudo/root")
def test_sudo_asking_for_a_password_is_an_auth_error() -> None:
    """A user sudo does not let run without a password (here: frr) gets sudo's real
    refusal, which the SSH runner turns into DeviceAuthError."""
    command = shell_command(["ip", "-j", "link", "show"], None, sudo=True)
    assert command == "sudo -n -- ip -j link show"
    done = subprocess.run(
        ["runuser", "-u", "frr", "--", "sh", "-c", command], capture_output=True, text=True
    )
    ran = Ran(done.stdout, done.stderr, done.returncode)
    with pytest.raises(DeviceAuthError, match="a password is required"):
        check_sudo(DeviceRef("leaf-1", "linux-frr", "leaf", "198.18.0.1"), ran)

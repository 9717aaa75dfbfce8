"""Bring the real-network lab up and down (root, iproute2, Debian's ``frr`` and
``frr-pythontools``).

Up: record everything in the state file, then create the namespaces, the veths (each
end at its port's MTU, addressed as plumb's addressing says), start zebra and bgpd per
BGP switch as the ``frr`` user from the switch's own directory, and configure BGP
through the linux-frr driver from the fleet's intent (:func:`configure_bgp`). Down:
kill every process left in the recorded namespaces (daemons, revert timers, pings),
delete the namespaces (their veths go with them) and the directories.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from intent.fleet import Fleet
from lab.realfabric.layout import FabricLayout, Node, fabric_dir, plan_layout, workdir
from lab.realfabric.state import (
    DeviceEntry,
    FabricState,
    fabric_driver,
    load_state,
    save_state,
    state_path,
)
from reconciler.drivers.base import ApplyResult, DeviceRef, Outcome
from reconciler.drivers.linux_frr import FRR_RELOAD
from reconciler.render import render_device
from reconciler.settings import diff

FRR_BIN = Path("/usr/lib/frr")
DAEMONS = ("zebra", "bgpd")
START_TIMEOUT = 20.0


class RealFabricError(Exception):
    """The real-network lab cannot be built here; the message says why."""


@dataclass(frozen=True)
class UpReport:
    devices: int
    namespaces: int
    veths: int
    daemons: int
    namespaces_s: float  # namespaces, veths and addresses
    daemons_s: float  # zebra and bgpd answering on their vty sockets
    bgp_s: float  # BGP configured through the driver


@dataclass(frozen=True)
class DownReport:
    namespaces: int
    processes: int


def missing_prerequisites() -> str | None:
    """Why the real-network lab cannot be built on this machine, or None."""
    if os.geteuid() != 0:
        return "the real-network lab needs root (network namespaces, FRR daemons)"
    for tool in ("ip", "vtysh", "python3"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not installed (Debian packages iproute2, frr)"
    for daemon in DAEMONS:
        if not (FRR_BIN / daemon).is_file():
            return f"{FRR_BIN / daemon} is missing: install Debian's frr"
    if not Path(FRR_RELOAD).is_file():
        return f"{FRR_RELOAD} is missing: install Debian's frr-pythontools"
    try:
        pwd.getpwnam("frr")
    except KeyError:
        return "there is no `frr` user (Debian's frr package creates it)"
    return None


def _ip(args: Sequence[str], stdin: str | None = None) -> None:
    done = subprocess.run(
        ["ip", *args], input=stdin, capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        raise RealFabricError(f"ip {' '.join(args)}: {done.stderr.strip()[:300]}")


def _initial_state(fleet: Fleet, layout: FabricLayout) -> FabricState:
    devices = {}
    for name, node in layout.nodes.items():
        folder = workdir(layout.prefix, name)
        devices[name] = DeviceEntry(
            node.namespace, str(folder), str(folder) if node.frr else None, dict(node.ports)
        )
    veths = [[v.a_device, v.a_ifname, v.b_device, v.b_ifname] for v in layout.veths]
    return FabricState(fleet.config.fleet, layout.prefix, layout.namespaces(), devices, veths)


def _node_lines(node: Node) -> list[str]:
    """The ``ip -n NS -batch`` lines that address and raise one namespace's links."""
    lines = ["link set dev lo up"]
    if node.loopback is not None:
        lines.append(f"address add {node.loopback} dev lo")
    for name in node.ports.values():
        lines.append(f"link set dev {name} up")
    for name, addresses in node.addresses.items():
        # The lab's veths are point-to-point links it made: duplicate address
        # detection finds nothing, and would hold an IPv6 address tentative as bgpd
        # makes its first connection.
        lines += [f"address add {a} dev {name}{' nodad' if ':' in a else ''}" for a in addresses]
    if node.default_via is not None:
        lines.append(f"route add default via {node.default_via}")
    return lines


def _make_links(layout: FabricLayout) -> None:
    _ip(["-batch", "-"], "".join(f"netns add {ns}\n" for ns in layout.namespaces()))
    pairs = [
        f"link add {v.a_ifname} netns {layout.nodes[v.a_device].namespace} mtu {v.a_mtu} "
        f"type veth peer name {v.b_ifname} netns {layout.nodes[v.b_device].namespace} "
        f"mtu {v.b_mtu}\n"
        for v in layout.veths
    ]
    if pairs:
        _ip(["-batch", "-"], "".join(pairs))
    for node in layout.nodes.values():
        _ip(["-n", node.namespace, "-batch", "-"], "\n".join(_node_lines(node)) + "\n")
        if not node.host:
            _netns_exec(
                node.namespace,
                ["sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1"],
            )


def _netns_exec(namespace: str, argv: Sequence[str]) -> None:
    done = subprocess.run(
        ["ip", "netns", "exec", namespace, *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        raise RealFabricError(f"{namespace}: {argv[0]}: {done.stderr.strip()[:300]}")


def _prepare_dirs(layout: FabricLayout, state: FabricState) -> None:
    for name, entry in state.devices.items():
        folder = Path(entry.workdir)
        folder.mkdir(mode=0o755, parents=True, exist_ok=True)
        if not layout.nodes[name].frr:
            continue
        files = {
            "zebra.conf": "",
            "bgpd.conf": layout.base_configs[name],
            "vtysh.conf": "",
        }
        for file, text in files.items():
            (folder / file).write_text(text)
        for path in (folder, *(folder / file for file in files)):
            shutil.chown(path, user="frr", group="frr")


def _start_daemons(layout: FabricLayout, state: FabricState) -> None:
    """zebra, then bgpd, in every BGP switch's namespace, as user frr, no TCP vty."""
    for daemon in DAEMONS:
        for name, node in layout.nodes.items():
            if not node.frr:
                continue
            d = state.devices[name].workdir
            _netns_exec(
                node.namespace,
                [
                    str(FRR_BIN / daemon),
                    "-d",
                    "-P",
                    "0",
                    "--vty_socket",
                    d,
                    "-z",
                    f"{d}/zserv.api",
                    "-f",
                    f"{d}/{daemon}.conf",
                    "-i",
                    f"{d}/{daemon}.pid",
                    "--log",
                    f"file:{d}/{daemon}.log",
                ],
            )
    deadline = time.monotonic() + START_TIMEOUT
    for name, node in layout.nodes.items():
        if not node.frr:
            continue
        folder = Path(state.devices[name].workdir)
        while not all((folder / f"{daemon}.vty").exists() for daemon in DAEMONS):
            if time.monotonic() > deadline:
                raise RealFabricError(f"{name}: FRR did not start (see {folder}/*.log)")
            time.sleep(0.05)
        state.pids[name] = _pids(folder)


def _pids(folder: Path) -> list[int]:
    found = []
    for daemon in DAEMONS:
        try:
            found.append(int((folder / f"{daemon}.pid").read_text().strip()))
        except (OSError, ValueError):
            continue
    return found


def _refs(fleet: Fleet, names: Sequence[str]) -> list[DeviceRef]:
    return [
        DeviceRef(
            name,
            fleet.devices[name].platform.value,
            fleet.devices[name].role.value,
            host="",
        )
        for name in names
    ]


def configure_bgp(fleet: Fleet, state: FabricState, workers: int = 4) -> list[ApplyResult]:
    """Take every BGP switch's BGP to the fleet's intent through the linux-frr driver
    (the renderer the driver uses on real switches)."""
    driver = fabric_driver(state)
    names = [n for n, e in state.devices.items() if e.vty_socket is not None]

    def one(ref: DeviceRef) -> ApplyResult:
        desired = {p: o for p, o in render_device(fleet, ref.name).items() if p.startswith("bgp/")}
        return driver.apply(ref, diff(desired, driver.observe(ref)), dry_run=False)

    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(one, _refs(fleet, names)))
    finally:
        driver.close()
    failed = [r for r in results if r.outcome not in (Outcome.applied, Outcome.unchanged)]
    if failed:
        raise RealFabricError(f"{failed[0].device}: BGP not configured: {failed[0].error}")
    return results


def bring_up(
    fleet: Fleet, state_dir: Path, note: Callable[[str], None] = lambda _: None
) -> UpReport:
    """Build ``fleet``'s fabric (replacing one already there)."""
    reason = missing_prerequisites()
    if reason is not None:
        raise RealFabricError(reason)
    tear_down(state_dir)
    layout = plan_layout(fleet)
    state = _initial_state(fleet, layout)
    save_state(state_dir, state)  # before anything exists: `lab down` finds it all
    start = time.monotonic()
    _make_links(layout)
    links_done = time.monotonic()
    note(f"{len(layout.nodes)} namespaces, {len(layout.veths)} veths in {links_done - start:.2f} s")
    _prepare_dirs(layout, state)
    _start_daemons(layout, state)
    save_state(state_dir, state)
    daemons_done = time.monotonic()
    note(f"FRR started on {len(state.pids)} switches in {daemons_done - links_done:.2f} s")
    configure_bgp(fleet, state)
    state.complete = True
    save_state(state_dir, state)
    return UpReport(
        devices=len(layout.nodes),
        namespaces=len(layout.nodes),
        veths=len(layout.veths),
        daemons=sum(len(p) for p in state.pids.values()),
        namespaces_s=links_done - start,
        daemons_s=daemons_done - links_done,
        bgp_s=time.monotonic() - daemons_done,
    )


def _namespace_pids(namespace: str) -> list[int]:
    done = subprocess.run(
        ["ip", "netns", "pids", namespace], capture_output=True, text=True, timeout=30, check=False
    )
    return [int(p) for p in done.stdout.split() if p.isdigit()] if done.returncode == 0 else []


def _kill(pids: Sequence[int]) -> int:
    """SIGTERM, then SIGKILL what is left after a grace period; returns how many."""
    alive = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
            alive.append(pid)
        except ProcessLookupError:
            continue
    deadline = time.monotonic() + 3.0
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in alive if _exists(pid)]
        time.sleep(0.05)
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
    return len(pids)


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def tear_down(state_dir: Path) -> DownReport:
    """Remove the recorded fabric: processes, namespaces (and veths), directories."""
    state = load_state(state_dir)
    if state is None:
        return DownReport(0, 0)
    existing = [ns for ns in state.namespaces if os.path.exists(f"/run/netns/{ns}")]
    pids = sorted({pid for ns in existing for pid in _namespace_pids(ns)})
    killed = _kill(pids)
    if existing:
        _ip(["-force", "-batch", "-"], "".join(f"netns del {ns}\n" for ns in existing))
    shutil.rmtree(fabric_dir(state.prefix), ignore_errors=True)
    state_path(state_dir).unlink(missing_ok=True)
    return DownReport(len(existing), killed)

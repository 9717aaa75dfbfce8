"""Capture the EOS parsers' golden fixtures from the switch simulator over real SSH
(the SONiC fixtures are written by hand from SONiC's documented formats).

    python -m tests.drivers.capture_fixtures

writes ``tests/fixtures/<platform>/<command>/<case>/`` with the raw device answer
(``output.json`` or ``output.txt``) and ``expected.json``, the flat state the
simulator's own model says the answer holds (:func:`tests.drivers.simflat.flat_from_state`,
which shares no code with the parsers). Session-diff cases also keep the running
config the diff applies to (``running.txt``).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from netmiko import BaseConnection, ConnectHandler

from intent.fleet import load_fleet
from reconciler.render import render_device
from reconciler.settings import Scalar, as_desired_state
from tests.drivers.simflat import flat_from_state, state_from_flat
from tests.switchsim import (
    BgpNeighbor,
    BgpState,
    DeviceSpec,
    EcnQueue,
    SwitchSim,
    SwitchState,
    default_state,
)

ROOT = Path(__file__).resolve().parent.parent / "fixtures"
ORION = Path(__file__).resolve().parent.parent.parent / "examples" / "orion"
INTERFACE_FIELDS = ("/mtu", "/address", "/description")
CONFIG_SKIP = ("system/nos_version", "system/model", "system/serial")


def orion_state(name: str) -> SwitchState:
    fleet = load_fleet(ORION)
    device = fleet.devices[name]
    desired = as_desired_state(render_device(fleet, name))
    return state_from_flat(
        desired, hostname=name, dialect=device.platform.value, model=device.model
    )


def mixed_state(dialect: str) -> SwitchState:
    """Ports that disagree on ECN and headroom; two DSCP maps; BGP without router-id."""
    state = default_state("leaf-mixed", dialect, ports=4)
    ports = list(state.interfaces.values())
    ports[0].ecn[3] = EcnQueue(100, 400, 10)
    ports[1].ecn[3] = EcnQueue(120, 400, 10)
    for port in ports:
        port.pfc_headroom_kb = 64
        port.ecn[4] = EcnQueue(50, 60, 5)
    ports[2].pfc_headroom_kb = 80
    ports[3].pfc_priorities = [3, 4]
    ports[3].ipv4 = "192.0.2.6/31"
    state.dscp_to_tc = {10: 1, 26: 3}
    state.bgp = BgpState(asn=65010, neighbors={"192.0.2.7": BgpNeighbor(65011, "EDGE-IN")})
    return state


CASES: dict[str, Callable[[str], SwitchState]] = {
    "factory-default": lambda dialect: default_state("leaf-default", dialect, ports=4),
    "mixed-qos": mixed_state,
    "orion-leaf": lambda dialect: orion_state("leaf-r0" if dialect == "eos" else "leaf-r1"),
}


def _save(folder: Path, name: str, data: Any) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    text = data if isinstance(data, str) else json.dumps(data, indent=1, sort_keys=True)
    (folder / name).write_text(text if text.endswith("\n") else text + "\n")


def _pick(flat: dict[str, Scalar], keep: Callable[[str], bool]) -> dict[str, Scalar]:
    return {p: v for p, v in sorted(flat.items()) if keep(p)}


def _connect(sim: SwitchSim, name: str, device_type: str) -> BaseConnection:
    conn = ConnectHandler(
        device_type=device_type,
        host=sim.host,
        port=sim.port(name),
        username="admin",
        password="admin",
        fast_cli=True,
    )
    if device_type == "arista_eos":
        conn.enable()
    return conn


def capture_eos(sim: SwitchSim, case: str, state: SwitchState) -> None:
    name = f"eos-{case}"
    sim.add_device(DeviceSpec(name=name, dialect="eos", initial=state))
    conn = _connect(sim, name, "arista_eos")
    flat = flat_from_state(state)
    version = json.loads(str(conn.send_command("show version | json")))
    _save(ROOT / "eos/show_version" / case, "output.json", version)
    expected = _pick(flat, lambda p: p in ("system/nos_version", "system/model"))
    _save(
        ROOT / "eos/show_version" / case,
        "expected.json",
        expected | {"system/serial": version["serialNumber"]},
    )
    interfaces = json.loads(str(conn.send_command("show interfaces | json")))
    _save(ROOT / "eos/show_interfaces" / case, "output.json", interfaces)
    keep = lambda p: p.startswith("interfaces/") and p.endswith(INTERFACE_FIELDS)  # noqa: E731
    _save(ROOT / "eos/show_interfaces" / case, "expected.json", _pick(flat, keep))
    running = json.loads(str(conn.send_command("show running-config | json")))
    _save(ROOT / "eos/show_running-config" / case, "output.json", running)
    keep = lambda p: p not in CONFIG_SKIP and not p.endswith("/description")  # noqa: E731
    _save(ROOT / "eos/show_running-config" / case, "expected.json", _pick(flat, keep))
    conn.disconnect()


DIFF_CASES: dict[str, list[str]] = {
    "mtu-and-ecn": [
        "interface Ethernet1",
        "mtu 9000",
        "tx-queue 3",
        "random-detect ecn minimum-threshold 180 kbytes maximum-threshold 800 kbytes "
        "max-mark-probability 20",
        "interface Ethernet64",
        "mtu 9000",
    ],
    "bgp-and-dscp": [
        "qos map dscp 48 to traffic-class 5",
        "router bgp 64601",
        "maximum-paths 32 ecmp 32",
        "no neighbor 10.0.0.2",
        "neighbor 10.0.9.9 remote-as 64999",
        "neighbor 10.0.0.4 route-map OTHER-IN in",
    ],
}


def capture_diffs(sim: SwitchSim) -> None:
    from tests.switchsim.eos_config import GLOBAL, apply_line

    state = orion_state("leaf-r0")
    for case, lines in DIFF_CASES.items():
        name = f"eos-diff-{case}"
        sim.add_device(DeviceSpec(name=name, dialect="eos", initial=state))
        conn = _connect(sim, name, "arista_eos")
        running = str(conn.send_command("show running-config"))
        conn.send_config_set(
            lines, config_mode_command="configure session s1", error_pattern=r"^% "
        )
        diff = str(conn.send_command("show session-config named s1 diffs"))
        conn.disconnect()
        after, context = state.clone(), GLOBAL
        for line in lines:
            context = apply_line(after, context, line)
        old, new = flat_from_state(state), flat_from_state(after)
        changes = [
            [p, old.get(p), new.get(p)]
            for p in sorted(set(old) | set(new))
            if old.get(p) != new.get(p)
        ]
        folder = ROOT / "eos/show_session-config_diffs" / case
        _save(folder, "running.txt", running)
        _save(folder, "output.txt", diff)
        _save(folder, "expected.json", changes)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, SwitchSim(Path(tmp)) as sim:
        for case, make in CASES.items():
            capture_eos(sim, case, make("eos"))
        capture_diffs(sim)


if __name__ == "__main__":
    main()

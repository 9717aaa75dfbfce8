"""Text and JSON a SONiC switch prints: ``show version``, ``show lldp table``, ``lldpctl -f json``.

- ``show version``: sonic-utilities' layout (``SONiC Software Version:
  SONiC.<build_version>``, OS version, distribution, kernel, build commit and
  date, platform, HwSKU, ASIC, ASIC count, serial, uptime).
- ``show lldp table`` (scripts/lldpshow): a capability legend, a tabulate
  "simple" table of LocalPort / RemoteDevice / RemotePortID / Capability /
  RemotePortDescr, a 50-dash rule and ``Total entries displayed:  N``.
- ``lldpctl -f json`` (lldpd, inside the ``lldp`` container): ``{"lldp":
  {"interface": ...}}`` where ``interface`` is a list of one-key objects, or
  the single object itself when there is one neighbour (lldpd's ``json``
  writer collapses one-element lists; ``-f json0`` never does).
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

from .model import DeviceFacts
from .sonic_profiles import SonicProfile


def show_version(profile: SonicProfile, version: str, facts: DeviceFacts, asics: int) -> str:
    """``show version`` output."""
    uptime = int(facts.now - facts.boot_time)
    model = profile.hwsku.split("-")[1] if "-" in profile.hwsku else profile.hwsku
    clock = time.strftime("%H:%M:%S", time.gmtime(facts.now))
    return "\n".join(
        [
            "",
            f"SONiC Software Version: SONiC.{version}",
            f"SONiC OS Version: {profile.os_version}",
            f"Distribution: Debian {profile.debian}",
            f"Kernel: {profile.kernel}",
            f"Build commit: {profile.build_commit}",
            f"Build date: {profile.build_date}",
            "Built by: AzDevOps@vmss-soni000001",
            "",
            f"Platform: {profile.platform}",
            f"HwSKU: {profile.hwsku}",
            f"ASIC: {profile.asic_type}",
            f"ASIC Count: {asics}",
            f"Serial Number: {facts.serial}",
            f"Model Number: {model}",
            "Hardware Revision: A1",
            f"Uptime: {clock} up {uptime // 60} min,  1 user,  load average: 0.52, 0.58, 0.59",
            f"Date: {time.strftime('%a %d %b %Y %H:%M:%S', time.gmtime(facts.now))}",
            "",
        ]
    )


def _simple_table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines)


def lldp_table(neighbors: list[tuple[str, str, str]]) -> str:
    """``show lldp table`` for (local port, system name, port id) neighbours."""
    rows = [[local, system, port, "BR", port] for local, system, port in neighbors]
    return "\n".join(
        [
            "Capability codes: (R) Router, (B) Bridge, (O) Other",
            _simple_table(
                ["LocalPort", "RemoteDevice", "RemotePortID", "Capability", "RemotePortDescr"],
                rows,
            ),
            "-" * 50,
            f"Total entries displayed:  {len(neighbors)}",
        ]
    )


def _chassis_mac(system: str) -> str:
    digest = hashlib.sha256(system.encode()).hexdigest()
    return ":".join(["98:03:9b", *(digest[i : i + 2] for i in range(0, 6, 2))])


def lldpctl_json(neighbors: list[tuple[str, str, str]], collapse: bool = True) -> str:
    """``lldpctl -f json`` (`collapse`) or ``-f json0`` for the given neighbours."""
    interfaces: list[dict[str, Any]] = []
    for rid, (local, system, port) in enumerate(neighbors, start=1):
        interfaces.append(
            {
                local: {
                    "via": "LLDP",
                    "rid": str(rid),
                    "age": "0 day, 01:02:03",
                    "chassis": {
                        system: {
                            "id": {"type": "mac", "value": _chassis_mac(system)},
                            "descr": "Arista Networks EOS version 4.31.2F",
                            "mgmt-ip": f"10.250.0.{rid}",
                            "capability": [
                                {"type": "Bridge", "enabled": True},
                                {"type": "Router", "enabled": True},
                            ],
                        }
                    },
                    "port": {
                        "id": {"type": "ifname", "value": port},
                        "descr": port,
                        "ttl": "120",
                    },
                }
            }
        )
    body: Any = interfaces[0] if collapse and len(interfaces) == 1 else interfaces
    return json.dumps({"lldp": {"interface": body} if interfaces else {}}, indent=2)

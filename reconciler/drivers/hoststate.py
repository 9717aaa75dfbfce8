"""Host settings <-> what the host's tools print and take (pure; the ansible driver's core).

Reading: one command prints three JSON documents separated by ``#plumb-section``
lines (:data:`SECTION`). ``ip -j link show`` gives ``nics/<nic>/mtu``, ``ip -j address show`` gives
``nics/<nic>/address`` (the first global IPv4 address as ``a.b.c.d/len``, ``None`` when
the NIC has none), and the vendor tool (``plumb-nictool show``) gives firmware, RDMA
MTU, PFC priorities and the DSCP map, already as flat paths.

Writing: a change list becomes one ``ip -batch`` script (kernel settings, NIC by NIC,
MTU before address), its undo script (run with ``-force`` when a later write fails),
and one JSON object for ``plumb-nictool set``. Nothing here runs a command.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reconciler.errors import ConfigRejected
from reconciler.settings import Change, Scalar

SECTION = "#plumb-section"
READBACK = "#plumb-readback"  # after a write: what follows is the host read back
_SECTIONS = re.compile(rf"^{SECTION}\s*$", re.MULTILINE)
# Used with fullmatch only: ``$`` would let a trailing newline through into a command.
NIC_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,15}")
_KERNEL = re.compile(r"nics/([^/]+)/(mtu|address)")
_VENDOR = re.compile(r"firmware/[^/\s]+|nics/[^/\s]+/(rdma_mtu|pfc_priorities)|qos/dscp/[0-9]+")


class HostOutputError(ValueError):
    """A host tool printed something that is not what the contract says."""


def _json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise HostOutputError(f"{what}: not JSON ({exc}): {text[:120]!r}") from exc


def split_sections(stdout: str) -> tuple[str, str, str]:
    """The read task's output -> (links, addresses, vendor) JSON texts."""
    parts = [part.strip() for part in _SECTIONS.split(stdout)]
    if len(parts) != 3:
        raise HostOutputError(f"expected 3 sections split by {SECTION}, got {len(parts)}")
    return parts[0], parts[1], parts[2]


def split_readback(stdout: str) -> tuple[str, str, str]:
    """A write task's output -> the read-back's sections (what the write printed before
    the :data:`READBACK` line is dropped)."""
    if READBACK not in stdout:
        raise HostOutputError(f"no {READBACK} line after the write")
    return split_sections(stdout.rsplit(READBACK, 1)[1])


def parse_links(text: str) -> dict[str, Scalar]:
    """``ip -j link show`` -> ``nics/<nic>/mtu`` for every non-loopback link."""
    links = _json(text, "ip -j link show")
    if not isinstance(links, list):
        raise HostOutputError("ip -j link show: expected a list of links")
    state: dict[str, Scalar] = {}
    for link in links:
        if link.get("link_type") == "loopback" or "ifname" not in link:
            continue
        state[f"nics/{link['ifname']}/mtu"] = int(link["mtu"])
    return state


def parse_addresses(text: str) -> dict[str, Scalar]:
    """``ip -j address show`` -> ``nics/<nic>/address`` (first global IPv4, or None)."""
    links = _json(text, "ip -j address show")
    if not isinstance(links, list):
        raise HostOutputError("ip -j address show: expected a list of links")
    state: dict[str, Scalar] = {}
    for link in links:
        if link.get("link_type") == "loopback" or "ifname" not in link:
            continue
        found: str | None = None
        for info in link.get("addr_info", []):
            if info.get("family") == "inet" and info.get("scope") == "global":
                found = f"{info['local']}/{info['prefixlen']}"
                break
        state[f"nics/{link['ifname']}/address"] = found
    return state


def parse_vendor(text: str) -> dict[str, Scalar]:
    """``plumb-nictool show`` -> its flat settings (only the paths plumb knows)."""
    shown = _json(text, "plumb-nictool show")
    settings = shown.get("settings") if isinstance(shown, dict) else None
    if not isinstance(settings, dict):
        raise HostOutputError('plumb-nictool show: expected {"settings": {...}}')
    return {
        str(path): value
        for path, value in settings.items()
        if _VENDOR.fullmatch(str(path)) and isinstance(value, str | int | float | bool | None)
    }


def flat_state(links: str, addresses: str, vendor: str) -> dict[str, Scalar]:
    """The host's whole observed state from the three reads."""
    state = parse_links(links)
    state.update(parse_addresses(addresses))
    state.update(parse_vendor(vendor))
    return dict(sorted(state.items()))


@dataclass(frozen=True)
class HostWrite:
    """One host's staged candidate: what the apply playbook will run."""

    device: str
    changes: tuple[Change, ...]
    ip_apply: tuple[str, ...]
    ip_undo: tuple[str, ...]
    vendor: dict[str, Scalar]

    def vendor_json(self) -> str:
        return json.dumps(self.vendor, sort_keys=True)


def _address(device: str, path: str, value: Scalar) -> str | None:
    if value is None or value == "":
        return None
    try:
        return str(ipaddress.IPv4Interface(str(value)))
    except ValueError as exc:
        raise ConfigRejected(device, f"{path}: {value!r} is not an IPv4 address/len") from exc


def _mtu(device: str, path: str, value: Scalar) -> int:
    if type(value) is not int:
        raise ConfigRejected(device, f"{path}: MTU {value!r} is not an integer")
    return value


def _kernel_lines(device: str, nic: str, field: str, change: Change) -> tuple[list[str], list[str]]:
    """ip-batch lines that make ``change`` and the lines that undo it."""
    if field == "mtu":
        forward = [f"link set dev {nic} mtu {_mtu(device, change.path, change.after)}"]
        back = [] if change.before is None else [f"link set dev {nic} mtu {change.before}"]
        return forward, back
    before = _address(device, change.path, change.before)
    after = _address(device, change.path, change.after)
    forward = [] if before is None else [f"address del {before} dev {nic}"]
    back = [] if after is None else [f"address del {after} dev {nic}"]
    if after is not None:
        forward.append(f"address add {after} dev {nic}")
    if before is not None:
        back.append(f"address add {before} dev {nic}")
    return forward, back


def plan_write(device: str, changes: Sequence[Change]) -> HostWrite:
    """Stage ``changes``: an unknown path or a malformed value is rejected here, before
    anything reaches the host."""
    apply: list[str] = []
    undo: list[str] = []
    vendor: dict[str, Scalar] = {}
    ordered = sorted(changes, key=lambda c: (c.path.split("/")[:2], c.path.endswith("address")))
    for change in ordered:
        kernel = _KERNEL.fullmatch(change.path)
        if kernel is not None:
            nic, field = kernel.groups()
            if not NIC_NAME.fullmatch(nic):
                raise ConfigRejected(device, f"{change.path}: {nic!r} is not a NIC name")
            forward, back = _kernel_lines(device, nic, field, change)
            apply += forward
            undo = back + undo
        elif _VENDOR.fullmatch(change.path):
            vendor[change.path] = change.after
        else:
            raise ConfigRejected(device, f"{change.path}: not a host setting this driver writes")
    return HostWrite(device, tuple(changes), tuple(apply), tuple(undo), vendor)


def planned_changes(
    write: HostWrite, kernel_now: Mapping[str, Scalar], vendor_planned: Iterable[Mapping[str, Any]]
) -> list[Change]:
    """What committing ``write`` would change: kernel fields read back from the host that
    differ from the candidate, plus the vendor tool's own ``set --check`` report."""
    out: list[Change] = []
    for change in write.changes:
        if not _KERNEL.fullmatch(change.path):
            continue
        if change.path not in kernel_now:
            nic = change.path.split("/")[1]
            raise ConfigRejected(write.device, f"{change.path}: the host has no NIC {nic}")
        if kernel_now[change.path] != change.after:
            out.append(Change(change.path, kernel_now[change.path], change.after))
    for item in vendor_planned:
        out.append(Change(str(item["path"]), item.get("before"), item.get("after")))
    return sorted(out, key=lambda c: c.path)

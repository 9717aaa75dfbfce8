"""EOS configuration modes: where a line is read, and the helpers every mode's
grammar shares.

A mode (`EosContext`) is global configuration, an Ethernet ``interface``, a ``qos
profile``, a transmit-queue sub-mode of either, a ``route-map`` entry, ``router
bgp`` or one of its ``address-family ipv4|ipv6`` blocks, or an *opaque* sub-mode:
one the simulator keeps verbatim without modeling (``management api
http-commands``, ``vlan 10``, ``interface Loopback0``, ``vrf X`` under BGP...).
An opaque mode names the `Block` it fills by its owner mode and its index there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .eos_blocks import Block
from .eos_model import EosConfig
from .model import check_range
from .replies import CliError, invalid

INTERFACE_MTU = (68, 9214)
NOT_HERE = object()
_INTERFACE = re.compile(r"^(?:ethernet|eth|et)(\d+(?:/\d+)*)$", re.IGNORECASE)


@dataclass(frozen=True)
class EosContext:
    """A configuration mode; `name` is the interface, qos profile, route-map or family."""

    kind: str = "global"
    name: str = ""
    queue: tuple[str, int] | None = None
    within: str = ""
    owner: EosContext | None = None  # opaque modes: the mode whose lines hold the block
    index: int = -1  # opaque modes: the block's position among the owner's lines

    @property
    def parent(self) -> EosContext | None:
        """The enclosing mode, or None at global level."""
        if self.kind == "opaque":
            return self.owner
        if self.queue is not None:
            return EosContext(self.within, self.name)
        if self.kind == "address-family":
            return ROUTER_BGP
        return None if self.kind == "global" else GLOBAL

    def prompt_suffix(self) -> str:
        """The part of the prompt after ``config``/``config-s-NAME``."""
        if self.kind == "global":
            return ""
        if self.kind == "opaque" and self.owner is not None:
            return self.owner.prompt_suffix() + "-" + self.name.split()[0]
        if self.queue is not None:
            kind, number = self.queue
            short = {"uc-tx-queue": "uc-txq", "mc-tx-queue": "mc-txq"}.get(kind, "txq")
            return EosContext(self.within, self.name).prompt_suffix() + f"-{short}-{number}"
        if self.kind == "interface":
            return "-if-Et" + self.name.removeprefix("Ethernet")
        if self.kind == "address-family":
            return "-router-bgp-af"
        if self.kind in ("qos-profile", "route-map"):
            return f"-{self.kind}-{self.name.split()[0]}"
        return f"-{self.kind}"


@dataclass(frozen=True)
class Grammar:
    """Platform facts the grammar needs: the queue kinds, and whether ports appear on use.

    `create_interfaces` and `mtu_max` are for loading a saved configuration:
    there an ``interface`` line names a port the platform has, and an MTU may
    be what a spec's initial state declared (up to the model's 9216) rather
    than what the CLI accepts (9214).
    """

    queue_kinds: tuple[str, ...] = ("tx-queue",)
    create_interfaces: bool = False
    mtu_max: int = INTERFACE_MTU[1]


GLOBAL = EosContext()
ROUTER_BGP = EosContext("router-bgp")


def incomplete() -> CliError:
    """EOS's answer to a command that lacks its arguments."""
    return CliError("% Incomplete command")


def number(token: str, what: str, low: int, high: int) -> int:
    """An integer argument in [low, high], or ``% Invalid input``."""
    if not token.isdigit():
        raise invalid(f"{what} must be a number")
    try:
        return check_range(what, int(token), low, high)
    except ValueError as exc:
        raise invalid(str(exc)) from exc


def interface_name(token: str) -> str:
    """Canonical EOS interface name (``Et1`` -> ``Ethernet1``) or CliError."""
    match = _INTERFACE.match(token)
    if match is None:
        raise invalid(f"unknown interface {token}")
    return f"Ethernet{match.group(1)}"


def lines_of(config: EosConfig, mode: EosContext) -> list[Block]:
    """The verbatim (unmodeled) lines `mode` holds."""
    if mode.kind == "opaque":
        assert mode.owner is not None
        return lines_of(config, mode.owner)[mode.index].children
    if mode.queue is not None:
        owner = (
            config.interfaces[mode.name].qos
            if mode.within == "interface"
            else config.qos_profiles[mode.name]
        )
        return owner.queue_extra.setdefault(mode.queue, [])
    if mode.kind == "interface":
        return config.interfaces[mode.name].extra
    if mode.kind == "qos-profile":
        return config.qos_profiles[mode.name].extra
    if mode.kind in ("router-bgp", "address-family"):
        assert config.bgp is not None
        if mode.kind == "router-bgp":
            return config.bgp.extra
        return config.bgp.family(mode.name).extra
    return config.extra


def opaque(config: EosConfig, owner: EosContext, block: Block) -> EosContext:
    """The opaque sub-mode `block` (one of `owner`'s lines) opens."""
    lines = lines_of(config, owner)
    index = next(i for i, line in enumerate(lines) if line is block)
    return EosContext("opaque", block.line, owner=owner, index=index)

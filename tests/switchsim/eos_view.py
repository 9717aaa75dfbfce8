"""Between an EOS running configuration and the dialect-neutral `SwitchState`.

`state_view` is what a test asserts on: the *effective* settings (a port's
qos profile merged with its own lines, a neighbour's peer group, the L3
address only on a routed port, PFC priorities only where PFC is on).
`config_from_state` builds the configuration a spec's initial `SwitchState`
describes, in the plain style (per-port lines, ``tx-queue``/``uc-tx-queue``
per platform, thresholds in kbytes); EOS has no PFC headroom or xoff
setting, so those fields of the state are not carried over.
`parse_config` boots a ``show running-config`` text (a saved one, or a real
switch's): each line goes through the grammar in the mode its indentation puts
it in, and the sub-modes the simulator does not model are kept whole.
"""

from __future__ import annotations

from .eos_blocks import Block, block_tree, clone_all
from .eos_config import GLOBAL, EosContext, Grammar, apply_line
from .eos_model import (
    L3_MTU_DEFAULT,
    EcnThresholds,
    EosBgp,
    EosConfig,
    EosInterface,
    EosPeer,
    QosSettings,
)
from .eos_modes import lines_of
from .model import MTU_MAX, BgpNeighbor, BgpState, EcnQueue, InterfaceState, SwitchState
from .replies import CliError

ECN_DEFAULT_PROBABILITY = 100


def config_from_state(state: SwitchState, queue_kind: str = "tx-queue") -> EosConfig:
    """The EOS configuration holding what `state` describes."""
    interfaces = {}
    for name, port in state.interfaces.items():
        qos = QosSettings(
            pfc=True if port.pfc_priorities else None,
            no_drop=set(port.pfc_priorities),
            queues={
                (queue_kind, q): EcnThresholds(
                    e.kmin_kb, "kbytes", e.kmax_kb, "kbytes", e.pmax_percent
                )
                for q, e in port.ecn.items()
            },
        )
        interfaces[name] = EosInterface(
            description=port.description,
            mtu=None if port.mtu == L3_MTU_DEFAULT else port.mtu,
            switchport=port.ipv4 is None,
            ipv4=port.ipv4,
            qos=qos,
        )
    bgp = None
    if state.bgp is not None:
        paths = None if state.bgp.maximum_paths == 1 else state.bgp.maximum_paths
        bgp = EosBgp(
            asn=state.bgp.asn,
            router_id=state.bgp.router_id,
            maximum_paths=paths,
            ecmp=paths,
            neighbors={
                ip: EosPeer(remote_as=n.remote_as, route_map_in=n.route_map_in)
                for ip, n in state.bgp.neighbors.items()
            },
        )
    return EosConfig(
        hostname=state.hostname,
        boot_image=state.boot_image,
        interfaces=interfaces,
        dscp_map={d: (tc, None) for d, tc in state.dscp_to_tc.items()},
        ip_routing=bgp is not None or any(p.ipv4 for p in state.interfaces.values()),
        bgp=bgp,
    )


def state_view(config: EosConfig, model: str, version: str) -> SwitchState:
    """The effective settings of `config` as a `SwitchState`."""
    interfaces = {}
    for name, port in config.interfaces.items():
        qos = config.effective_qos(port)
        ecn = {}
        for (_kind, queue), thresholds in sorted(qos.queues.items()):
            kilobytes = thresholds.kilobytes()
            if kilobytes is not None:
                probability = thresholds.probability or ECN_DEFAULT_PROBABILITY
                ecn[queue] = EcnQueue(kilobytes[0], kilobytes[1], probability)
        interfaces[name] = InterfaceState(
            mtu=config.default_l3_mtu() if port.mtu is None else port.mtu,
            description=port.description,
            ipv4=None if port.switchport else port.ipv4,
            pfc_priorities=sorted(qos.no_drop) if qos.pfc else [],
            ecn=ecn,
        )
    return SwitchState(
        hostname=config.hostname,
        model=model,
        nos_version=version,
        boot_image=config.boot_image,
        interfaces=interfaces,
        dscp_to_tc={d: tc for d, (tc, _dp) in config.dscp_map.items()},
        bgp=None if config.bgp is None else _bgp_view(config.bgp),
    )


def _bgp_view(bgp: EosBgp) -> BgpState:
    neighbors = {}
    for address, peer in bgp.neighbors.items():
        group = bgp.peer_groups.get(peer.peer_group or "", EosPeer())
        remote_as = peer.remote_as if peer.remote_as is not None else group.remote_as
        if ":" in address or remote_as is None:
            continue
        neighbors[address] = BgpNeighbor(remote_as, bgp.policy(address, "ipv4", "in"))
    return BgpState(
        asn=bgp.asn,
        router_id=bgp.router_id,
        maximum_paths=bgp.maximum_paths or 1,
        neighbors=neighbors,
    )


def parse_config(text: str, queue_kinds: tuple[str, ...]) -> EosConfig:
    """Read a configuration from its ``show running-config`` text; ValueError naming
    the first line the platform refuses."""
    config, refused = boot_config(text, queue_kinds)
    if refused:
        line, reason = refused[0]
        raise ValueError(f"configuration line {line!r} refused: {reason}")
    return config


def boot_config(text: str, queue_kinds: tuple[str, ...]) -> tuple[EosConfig, list[tuple[str, str]]]:
    """Boot a configuration as EOS boots its startup-config: every line in the mode
    its indentation puts it in, a refused line reported (line, EOS's answer) and
    skipped, the rest applied."""
    config = EosConfig(hostname="localhost", boot_image="")  # EOS's name until one is set
    for raw in text.splitlines():
        if raw.strip().startswith("! boot system "):
            config.boot_image = raw.strip().removeprefix("! boot system ")
    grammar = Grammar(queue_kinds=queue_kinds, create_interfaces=True, mtu_max=MTU_MAX)
    refused: list[tuple[str, str]] = []
    _load(config, GLOBAL, block_tree(text), grammar, refused)
    return config, refused


def _load(
    config: EosConfig,
    mode: EosContext,
    blocks: list[Block],
    grammar: Grammar,
    refused: list[tuple[str, str]],
) -> None:
    """Apply `blocks` in `mode`: a modeled sub-mode's lines in that sub-mode, an
    unmodeled one's kept as they are."""
    for block in blocks:
        try:
            context, _notice = apply_line(config, mode, block.line, grammar)
        except CliError as exc:
            refused.append((block.line, str(exc)))
            continue
        if not block.children:
            continue
        if context.kind == "opaque":
            lines_of(config, context).extend(clone_all(block.children))
        elif context != mode and context.kind != "global":
            _load(config, context, block.children, grammar, refused)
        else:  # an unmodeled line of `mode` that carries lines of its own
            found = [b for b in lines_of(config, context) if b.line == block.line]
            if found:
                found[-1].children.extend(clone_all(block.children))
            else:
                refused.append((block.line, "% Invalid input (no sub-mode)"))

"""``plumb verify``: what the network itself says, from the real-network lab's data
plane: every expected BGP session Established, and no path between racks that
black-holes the frames its hosts send (:mod:`lab.realfabric.dataplane`)."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from lab.realfabric.dataplane import Verification, verify
from lab.realfabric.state import load_state
from plumb.app import HERE, FormatOpt, PathArg, app, check_format, fail, load_or_exit
from rollouts.evidence import Json


def _json(result: Verification) -> dict[str, Json]:
    down = result.sessions_down()
    return {
        "ok": result.ok,
        "bgp": {
            "switches": len(result.sessions),
            "sessions": sum(len(e) for e in result.sessions.values()),
            "down": {d: dict[str, Json](p) for d, p in down.items() if p},
            "unread": list[Json](result.unread()),
        },
        "paths": [
            {
                "source": p.probe.source,
                "destination": p.probe.destination,
                "nic": p.probe.destination_nic,
                "address": p.probe.address,
                "mtu": p.mtu,
                "ok": p.ok,
                "error": p.error,
                "mtu_error": p.ping.mtu_error if p.ping else None,
                "path": list[Json](sorted(p.probe.path)),
            }
            for p in result.paths
        ],
    }


def _text(result: Verification) -> list[str]:
    down = {d: p for d, p in result.sessions_down().items() if p}
    sessions = sum(len(e) for e in result.sessions.values())
    lines = [
        f"bgp: {sessions - sum(len(p) for p in down.values())} of {sessions} expected"
        f" session ends Established on {len(result.sessions)} switches"
    ]
    lines += [
        f"  DOWN {d}: " + ", ".join(f"{peer} {state}" for peer, state in sorted(p.items()))
        for d, p in sorted(down.items())
    ]
    lines += [f"  UNREAD {d}: neither the switch nor its peers answered" for d in result.unread()]
    holes = result.black_holes()
    failed = [p for p in result.paths if p.error is not None]
    lines.append(
        f"path mtu: {len(result.paths) - len(holes) - len(failed)} of {len(result.paths)}"
        " DF probes between racks arrived at the hosts' MTU"
    )
    for p in holes:
        why = f" ({p.ping.mtu_error})" if p.ping and p.ping.mtu_error else ""
        lines.append(
            f"  BLACK-HOLED {p.probe.source} -> {p.probe.destination}:{p.probe.destination_nic}"
            f" {p.probe.address} at {p.mtu} bytes{why}"
        )
    lines += [
        f"  NOT PROBED {p.probe.source} -> {p.probe.destination}:{p.probe.destination_nic}:"
        f" {p.error}"
        for p in failed
    ]
    lines.append("data plane: ok" if result.ok else "data plane: NOT OK")
    return lines


@app.command("verify")
def verify_command(
    path: PathArg = HERE,
    settle: Annotated[
        float,
        typer.Option(
            min=0.0,
            help="Seconds to wait for sessions a change reset to come back before"
            " counting them down.",
        ),
    ] = 30.0,
    format: FormatOpt = "text",
) -> None:
    """Probe the data plane of the real-network lab: BGP sessions and path MTU between
    racks (exit 1 when a session is down or a path black-holes)."""
    check_format(format)
    fleet = load_or_exit(path)
    state_dir = fleet.root / fleet.config.state_dir
    try:
        state = load_state(state_dir)
    except ValueError as exc:
        raise fail(str(exc)) from None
    if state is None or not state.complete:
        raise fail(
            "plumb verify probes the data plane of the real-network lab, and there is none"
            f" here: run `plumb lab init --real {fleet.root}` first (docs/lab.md)"
        )
    result = verify(fleet, state, settle_s=settle)
    if format == "json":
        typer.echo(json.dumps(_json(result), indent=2))
    else:
        for line in _text(result):
            typer.echo(line)
    if not result.ok:
        raise typer.Exit(1)

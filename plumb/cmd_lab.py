"""``plumb lab init|show|fault|miscable|reset|defect|clock``: the embedded lab fleet."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from intent.fleet import Fleet
from inventory.index import Endpoint
from lab.driver import create_lab, miscable
from lab.fleet import Fault, FaultKind, lab_db_path, states_from_snapshot
from lab.store import DEVICE_WRITES, LabStore
from plumb.app import (
    CONFIG_FILE,
    HERE,
    FormatOpt,
    PathArg,
    check_format,
    fail,
    load_or_exit,
)
from reconciler.state.dbfile import keep_out_of_git

lab_app = typer.Typer(
    help="The lab fleet: a simulated fleet in SQLite, with fault injection.", no_args_is_help=True
)


def _store(path: Path, *, must_exist: bool = True) -> LabStore:
    fleet = load_or_exit(path)
    if must_exist and not lab_db_path(fleet).is_file():  # opening it would create one
        raise fail(f"no lab fleet yet: run `plumb lab init {fleet.root}` first")
    store = LabStore(lab_db_path(fleet))
    if must_exist and not store.exists():
        store.close()
        raise fail(f"no lab fleet yet: run `plumb lab init {fleet.root}` first")
    return store


@lab_app.command("init")
def lab_init(
    path: PathArg = Path("."),
    seed: Annotated[int, typer.Option(help="Seed for drift and fault draws.")] = 0,
    drift: Annotated[int, typer.Option(min=0, help="Drifted fields to start with.")] = 6,
    current_firmware: Annotated[
        bool, typer.Option(help="Start at the intended bundles instead of older ones.")
    ] = False,
    from_snapshot: Annotated[
        Path | None, typer.Option(help="Start from a `plumb snapshot` file of real device facts.")
    ] = None,
    real: Annotated[
        bool,
        typer.Option(
            help="Build the fabric from network namespaces, FRR and veths instead (root; "
            "docs/lab.md)."
        ),
    ] = False,
) -> None:
    """Create (or recreate) the lab fleet from the inventory."""
    fleet = load_or_exit(path)
    if real:
        _init_real(fleet)
        return
    store = LabStore(lab_db_path(fleet))
    keep_out_of_git(lab_db_path(fleet).parent)
    try:
        if from_snapshot is not None:
            try:
                data = json.loads(from_snapshot.read_text())
                states = states_from_snapshot(data)
            except (OSError, ValueError) as exc:
                raise fail(f"{from_snapshot}: {exc}") from None
            unknown = sorted(set(states) - set(fleet.devices))
            if unknown:
                raise fail(f"{from_snapshot}: devices not in the inventory: {unknown[:5]}")
            devices = [
                (d.name, d.platform.value, d.role.value)
                for d in fleet.devices.values()
                if d.name in states
            ]
            store.create(devices, states)
        else:
            create_lab(store, fleet, seed=seed, drift=drift, older_firmware=not current_firmware)
        typer.echo(
            f"lab fleet {fleet.config.fleet}: {len(store.device_names())} devices at "
            f"{lab_db_path(fleet)}"
        )
    finally:
        store.close()


def _state_dir(fleet: Fleet) -> Path:
    return fleet.root / fleet.config.state_dir


def _init_real(fleet: Fleet) -> None:
    """``lab init --real``: the fabric in namespaces, BGP up, the figures printed."""
    from lab.realfabric.build import RealFabricError, bring_up
    from lab.realfabric.layout import expected_peers
    from lab.realfabric.probes import wait_for_bgp
    from lab.realfabric.state import load_state

    state_dir = _state_dir(fleet)
    keep_out_of_git(state_dir)
    try:
        report = bring_up(fleet, state_dir, typer.echo)
    except RealFabricError as exc:
        raise fail(f"lab init --real: {exc} (`plumb lab down` removes what was made)") from None
    state = load_state(state_dir)
    assert state is not None
    bgp = wait_for_bgp(state, expected_peers(fleet))
    typer.echo(
        f"real lab {fleet.config.fleet}: {report.namespaces} namespaces, {report.veths} veths, "
        f"{report.daemons} FRR daemons; BGP configured in {report.bgp_s:.1f} s, "
        f"{bgp.sessions_established()} session ends Established "
        f"{'with routes ' if bgp.converged else ''}{bgp.elapsed_s:.1f} s later"
    )
    if not bgp.converged:
        late = [d.device for d in bgp.devices.values() if not d.converged]
        raise fail(f"BGP did not converge on {len(late)} switch(es): {', '.join(late[:5])}")


@lab_app.command("down")
def lab_down(path: PathArg = Path(".")) -> None:
    """Remove the real-network lab: its FRR daemons, namespaces, veths and files."""
    from lab.realfabric.build import tear_down

    fleet = load_or_exit(path)
    try:
        report = tear_down(_state_dir(fleet))
    except ValueError as exc:
        raise fail(str(exc)) from None
    typer.echo(
        f"real lab {fleet.config.fleet}: removed {report.namespaces} namespaces, stopped "
        f"{report.processes} processes"
    )


def _device_or_repo(device: str | None, path: Path) -> tuple[str | None, Path]:
    """``lab show DIR`` names the fleet, as it did before a device could come first."""
    if device is not None and path == HERE and (Path(device) / CONFIG_FILE).is_file():
        return None, Path(device)
    return device, path


@lab_app.command("show")
def lab_show(
    device: Annotated[str | None, typer.Argument(help="Show one device's settings.")] = None,
    path: PathArg = HERE,
    format: FormatOpt = "text",
) -> None:
    """Counters and faults of the lab, or one device's running settings."""
    check_format(format)
    device, path = _device_or_repo(device, path)
    store = _store(path)
    try:
        if device is not None:
            if not store.has_device(device):
                raise fail(f"no lab device {device!r}")
            running = dict(sorted(store.read_running(device).items()))
            if format == "json":
                typer.echo(json.dumps({"device": device, "running": running}, indent=2))
                return
            for key, value in running.items():
                typer.echo(f"{key} = {value!r}")
            return
        counters = {
            name: value
            for name, value in sorted(store.counters().items())
            if not name.startswith(DEVICE_WRITES)  # per device: `plumb lab show DEVICE`
        }
        faults = store.faults_for(None)
        if format == "json":
            doc = {
                "devices": len(store.device_names()),
                "counters": counters,
                "faults": [
                    {
                        "id": f.id,
                        "device": f.device,
                        "kind": f.kind.value,
                        "path": f.path_glob,
                        "left": f.count,
                    }
                    for f in faults
                ],
            }
            typer.echo(json.dumps(doc, indent=2))
            return
        typer.echo(f"devices: {len(store.device_names())}")
        for name, value in counters.items():
            typer.echo(f"{name}: {value}")
        for fault in faults:
            scope = f" on {fault.path_glob}" if fault.path_glob else ""
            left = "persistent" if fault.count is None else f"{fault.count} left"
            typer.echo(f"fault #{fault.id}: {fault.device} {fault.kind.value}{scope} ({left})")
    finally:
        store.close()


@lab_app.command("fault")
def lab_fault(
    device: Annotated[str, typer.Argument(help="Device name.")],
    kind: Annotated[str | None, typer.Argument(help=" | ".join(k.value for k in FaultKind))] = None,
    path: PathArg = HERE,
    repo: Annotated[
        Path | None, typer.Option("--repo", hidden=True, help="The fleet repo (as -C).")
    ] = None,
    field: Annotated[str | None, typer.Option("--path", help="Only fields matching.")] = None,
    count: Annotated[
        int | None, typer.Option(min=1, help="Fire N times (default: always).")
    ] = None,
    probability: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Chance the fault fires on each operation.")
    ] = 1.0,
    latency_ms: Annotated[
        int, typer.Option(min=0, help="For latency: milliseconds added to each operation.")
    ] = 0,
    seed: Annotated[int, typer.Option(help="Seed of the fault's draws (reproducible).")] = 0,
    clear: Annotated[bool, typer.Option("--clear", help="Remove the device's faults.")] = False,
) -> None:
    """Inject a fault into one lab device (or --clear its faults)."""
    store = _store(repo if repo is not None else path)
    try:
        if not store.has_device(device):
            raise fail(f"no lab device {device!r}")
        if clear:
            store.clear_faults(device)
            typer.echo(f"cleared faults on {device}")
            return
        if kind is None or kind not in {k.value for k in FaultKind}:
            raise fail(f"fault kind must be one of {', '.join(k.value for k in FaultKind)}")
        added = store.add_fault(
            Fault(
                device,
                FaultKind(kind),
                path_glob=field,
                count=count,
                probability=probability,
                seed=seed,
                latency_ms=latency_ms,
            )
        )
        typer.echo(f"fault #{added.id}: {device} {kind}")
    finally:
        store.close()


def _endpoint(text: str) -> Endpoint:
    device, sep, port = text.partition(":")
    if not sep or not device or not port:
        raise fail(f"{text!r}: expected DEVICE:PORT, e.g. leaf-r0:Ethernet1")
    return Endpoint(device, port)


@lab_app.command("miscable")
def lab_miscable(
    path: Annotated[Path, typer.Argument(help="Fleet repo (a directory with plumb.yaml).")],
    first: Annotated[str, typer.Argument(help="A switch port, DEVICE:PORT.")],
    second: Annotated[str, typer.Argument(help="Another switch port, DEVICE:PORT.")],
) -> None:
    """Swap the far ends of two switch ports' cables: each port's LLDP then reports the
    other's neighbour (`plumb validate --against` a snapshot catches it)."""
    a, b = _endpoint(first), _endpoint(second)
    store = _store(path)
    try:
        moved = miscable(store, a, b)
    except ValueError as exc:
        raise fail(str(exc)) from None
    finally:
        store.close()
    for end, peer in sorted(moved.items()):
        typer.echo(f"{end} now reaches {peer}")


@lab_app.command("reset")
def lab_reset(
    path: PathArg = Path("."),
    seed: Annotated[int, typer.Option(help="Seed for drift and fault draws.")] = 0,
    drift: Annotated[int, typer.Option(min=0, help="Drifted fields to start with.")] = 6,
    real: Annotated[
        bool, typer.Option("--real", help="Rebuild the real-network lab from intent instead.")
    ] = False,
) -> None:
    """Recreate the lab at its starting state, with no faults (``--real``: the
    real-network lab torn down and built again, as ``lab down`` + ``lab init --real``)."""
    if real:
        lab_down(path)
        _init_real(load_or_exit(path))
        return
    lab_init(path, seed=seed, drift=drift, current_firmware=False, from_snapshot=None)


@lab_app.command("defect")
def lab_defect(
    path: PathArg = Path("."),
    match: Annotated[
        str | None,
        typer.Option(
            help="Attributes the defect needs, e.g. "
            "'firmware/nic_firmware=28.43.1014,label.nic_revision=B0'."
        ),
    ] = None,
    effect: Annotated[
        list[str] | None,
        typer.Option(help="name=value, e.g. step_time_factor=1.15 or fec_rate=2 (repeat)."),
    ] = None,
    note: Annotated[str, typer.Option(help="What the defect stands for.")] = "",
    clear: Annotated[bool, typer.Option(help="Remove every attached defect.")] = False,
) -> None:
    """Attach a defect to the lab's telemetry (it shows on every target whose current
    attributes match), list the attached ones, or --clear them."""
    from lab.clock import attach_defect, list_defects

    fleet = load_or_exit(path)
    db = lab_db_path(fleet)
    if not db.exists():
        raise fail(f"no lab fleet yet: run `plumb lab init {fleet.root}` first")
    if clear:
        from lab.clock import LabClock

        with LabClock(db) as clock:
            typer.echo(f"removed {clock.clear_defects()} defect(s)")
        return
    if match is not None:
        effects: dict[str, float] = {}
        for item in effect or []:
            name, sep, value = item.partition("=")
            try:
                effects[name.strip()] = float(value)
            except ValueError:
                raise fail(f"--effect {item!r}: expected name=number") from None
            if not sep:
                raise fail(f"--effect {item!r}: expected name=number")
        try:
            defect = attach_defect(db, match, effects, note)
        except ValueError as exc:
            raise fail(str(exc)) from None
        typer.echo(f"defect {defect.id}: {defect.describe()}")
        return
    for defect in list_defects(db):
        typer.echo(f"defect {defect.id}: {defect.describe()}  {defect.note}")


@lab_app.command("clock")
def lab_clock(
    path: PathArg = Path("."),
    advance: Annotated[
        float, typer.Option(min=0.0, help="Let this many minutes of virtual time pass.")
    ] = 0.0,
) -> None:
    """Show (or advance) the lab's virtual clock, which bakes and telemetry run on."""
    from lab.clock import LabClock
    from lab.metrics import lab_time

    fleet = load_or_exit(path)
    db = lab_db_path(fleet)
    if not db.exists():
        raise fail(f"no lab fleet yet: run `plumb lab init {fleet.root}` first")
    with LabClock(db) as clock:
        minutes = clock.advance(advance) if advance else clock.now()
    typer.echo(f"lab clock: {lab_time(minutes).isoformat()} ({minutes:.1f} virtual minutes)")

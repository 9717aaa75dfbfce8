"""``plumb review --base REV [--head REV] [PATH]``: a change to the fleet repo as the
policies, plan, blast radius and rollout it implies, with a verdict for CI.

The edge of the review: git (each revision's copy of the fleet directory, written to
a temporary directory), loading both fleets and their policies, and the observed
state (``--against`` a snapshot; else the lab database if the working tree has one;
else the base revision's rendered intent). :func:`ci.review.core.build_review` does
the rest. Exit codes: 0 pass, 1 blocked, 2 bad input (a revision git does not know,
no git repository, a base revision whose fleet does not load, a bad snapshot).
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ci.gitrev import FleetHistory, GitRevError, Revision
from ci.review.model import BASE_SOURCE, ObservedSource, RevisionInfo
from intent.fleet import Fleet, load_fleet
from inventory.problems import InputError, Location, Problem
from lab.fleet import LAB_DB
from lab.store import LabSchemaError, LabStore
from plumb.app import PathArg, app, fail, fleet_root
from plumb.cmd_snapshot import read_snapshot
from policies.engine import Policy
from reconciler.plan import Holds
from rollouts.load import ROLLOUTS_DIR, LoadedSpec, load_rollout

if TYPE_CHECKING:
    from ci.review.core import ReviewInputs

# The review's core and formats import rollout planning, and so scipy (seconds):
# they are imported when the command runs, not whenever plumb starts.
FORMATS = ("markdown", "json", "sarif", "junit", "github")
FORMAT_NAMES = " | ".join(FORMATS)


def _formats(format: str, reports: list[str]) -> list[tuple[str, Path]]:
    """Check --format and parse every --report FORMAT=FILE."""
    if format not in FORMATS:
        raise fail(f"unknown format {format!r} (choose from {', '.join(FORMATS)})")
    extra = []
    for item in reports:
        name, _, file = item.partition("=")
        if name not in FORMATS or not file:
            raise fail(f"--report {item!r}: expected FORMAT=FILE with FORMAT one of {FORMAT_NAMES}")
        extra.append((name, Path(file)))
    return extra


def _today(text: str | None) -> date:
    try:
        return date.fromisoformat(text) if text else date.today()
    except ValueError:
        raise fail(f"--today {text!r} is not a date (YYYY-MM-DD)") from None


def _policies(fleet: Fleet, repo_policies: bool) -> list[Policy]:
    from service.validation import fleet_policies

    return fleet_policies(fleet, repo_policies=repo_policies)


def _load_base(root: Path, revision: Revision, repo_policies: bool) -> tuple[Fleet, list[Policy]]:
    try:
        fleet = load_fleet(root)
        return fleet, _policies(fleet, repo_policies)
    except InputError as exc:
        for problem in exc.problems:
            typer.echo(f"base {revision.short}: {problem}", err=True)
        raise fail(
            f"the fleet repo does not load at --base {revision.name} ({revision.short}); "
            "nothing to compare the change against"
        ) from None


def _load_head(
    root: Path, found: bool, subdir: str, repo_policies: bool
) -> tuple[Fleet | None, list[Policy], list[Problem]]:
    if not found:
        where = Location("plumb.yaml", 1, 1)
        return None, [], [Problem(where, f"the fleet directory {subdir or '.'} is gone at head")]
    try:
        fleet = load_fleet(root)
        return fleet, _policies(fleet, repo_policies), []
    except InputError as exc:
        return None, [], list(exc.problems)


def _observed(path: Path, fleet: Fleet, against: Path | None) -> ObservedSource:
    """--against a snapshot; else the working tree's lab database; else base's intent."""
    if against is not None:
        snapshot = read_snapshot(against, fleet.config.fleet)
        detail = f"the snapshot {against} taken {snapshot.taken_at}"
        return ObservedSource("snapshot", detail, snapshot.states)
    lab = path.resolve() / fleet.config.state_dir / LAB_DB
    if not lab.is_file():
        return BASE_SOURCE
    try:
        store = LabStore(lab)
    except LabSchemaError as exc:
        raise fail(str(exc)) from None
    try:
        return ObservedSource("lab", f"the lab fleet at {lab}", store.read_all_running())
    finally:
        store.close()


def _specs(
    root: Path, files: tuple[str, ...], chosen: list[str]
) -> tuple[list[LoadedSpec], list[Problem]]:
    """The rollout specs to plan: ``--rollout`` ones, else those the change adds or edits."""
    wanted = chosen or [
        f
        for f in files
        if f.startswith(f"{ROLLOUTS_DIR}/")
        and f.endswith((".yaml", ".yml"))
        and (root / f).is_file()
    ]
    specs: list[LoadedSpec] = []
    problems: list[Problem] = []
    for name in wanted:
        # A path is taken inside head's copy, never from the working directory.
        spec = str(root / name) if "/" in name or name.endswith((".yaml", ".yml")) else name
        try:
            specs.append(load_rollout(root, spec))
        except InputError as exc:
            problems += exc.problems
    return specs, problems


def _repo_specs(root: Path) -> list[LoadedSpec]:
    """Head's rollout specs: for a change that brings none, the ones that carry it are
    the rollouts an operator would run (a spec that does not load is not one)."""
    found: list[LoadedSpec] = []
    for file in sorted((root / ROLLOUTS_DIR).glob("*.y*ml")):
        try:
            found.append(load_rollout(root, str(file)))
        except InputError:
            continue
    return found


def _holds(path: Path, fleet: Fleet) -> Holds:
    """The rollback pins of the working tree's state database, when it has one: a
    pinned field is HELD in the review's plan as in ``plumb plan``."""
    from reconciler.state.db import open_state_db
    from reconciler.state.location import sqlite_path

    if fleet.config.state.backend != "sqlite":
        return {}
    database = sqlite_path(path.resolve(), fleet.config)
    if not database.is_file():
        return {}
    with open_state_db(database) as db:
        return {d: dict(p) for d, p in db.journal.holds().items()}


def _write(text: str, file: Path) -> None:
    try:
        file.write_text(text)
    except OSError as exc:
        raise fail(f"cannot write {file}: {exc.strerror or exc}") from None


@dataclass(frozen=True)
class _Options:
    path: Path
    against: Path | None
    rollouts: list[str]
    repo_policies: bool
    today: date


def _resolve(history: FleetHistory, option: str, rev: str) -> Revision:
    try:
        return history.resolve(rev)
    except GitRevError as exc:
        raise fail(f"{option}: {exc}") from None


def _inputs(
    history: FleetHistory, old: Revision, new: Revision, tmp: Path, options: _Options
) -> ReviewInputs:
    """Both revisions written out and loaded, the changed files, specs and observed state."""
    from ci.review.core import ReviewInputs

    base_root, head_root = tmp / "base", tmp / "head"
    if not history.export(old, base_root):
        raise fail(f"{history.subdir or '.'} does not exist at --base {old.name} ({old.short})")
    base_fleet, base_policies = _load_base(base_root, old, options.repo_policies)
    found = history.export(new, head_root)
    head_fleet, head_policies, problems = _load_head(
        head_root, found, history.subdir, options.repo_policies
    )
    state_dirs = {f.config.state_dir.strip("/") + "/" for f in (base_fleet, head_fleet) if f}
    files = tuple(  # the state directory is plumb's record, never part of a change
        f for f in history.changed_files(old, new) if not f.startswith(tuple(state_dirs))
    )
    specs: list[LoadedSpec] = []
    spec_problems: list[Problem] = []
    repo_specs: list[LoadedSpec] = []
    observed = BASE_SOURCE
    holds: Holds = {}
    if head_fleet is not None:
        specs, spec_problems = _specs(head_root, files, options.rollouts)
        if not specs and not spec_problems:
            repo_specs = _repo_specs(head_root)
        observed = _observed(options.path, head_fleet, options.against)
        holds = _holds(options.path, head_fleet)
    return ReviewInputs(
        base=RevisionInfo(old.name, old.commit, old.summary),
        head=RevisionInfo(new.name, new.commit, new.summary),
        prefix=history.prefix,
        files=files,
        base_fleet=base_fleet,
        base_policies=base_policies,
        head_root=head_root,
        head_fleet=head_fleet,
        head_policies=head_policies,
        head_problems=problems,
        observed=observed,
        specs=specs,
        spec_problems=spec_problems,
        today=options.today,
        holds=holds,
        repo_specs=repo_specs,
    )


@app.command()
def review(
    base: Annotated[
        str, typer.Option(help="Revision the change starts from (in CI: the merge base).")
    ],
    path: PathArg = Path("."),
    head: Annotated[
        str, typer.Option(help="Revision to review; default HEAD, the last commit.")
    ] = "HEAD",
    against: Annotated[
        Path | None, typer.Option(help="Plan against this `plumb snapshot` file.")
    ] = None,
    rollout: Annotated[
        list[str] | None,
        typer.Option(help="Plan this rollout spec of head (name or path; repeatable)."),
    ] = None,
    format: Annotated[str, typer.Option("--format", "-f", help=FORMAT_NAMES)] = "markdown",
    output: Annotated[Path | None, typer.Option(help="Write the report here too.")] = None,
    report: Annotated[
        list[str] | None,
        typer.Option(help="Also write FORMAT=FILE, e.g. sarif=plumb.sarif (repeatable)."),
    ] = None,
    today: Annotated[str | None, typer.Option(help="Date for waiver expiry (YYYY-MM-DD).")] = None,
    repo_policies: Annotated[bool, typer.Option(help="Load the repo's policies/*.py.")] = True,
) -> None:
    """Review a change: intent moved, policies, plan and order, blast radius, rollout."""
    from ci.review.core import build_review
    from ci.review.render import REVIEW_FORMATS

    extra = _formats(format, report or [])
    path = fleet_root(path)
    options = _Options(path, against, rollout or [], repo_policies, _today(today))
    try:
        with FleetHistory(path) as history, tempfile.TemporaryDirectory(prefix="plumb-") as tmp:
            old = _resolve(history, "--base", base)
            new = _resolve(history, "--head", head)
            result = build_review(_inputs(history, old, new, Path(tmp).resolve(), options))
    except GitRevError as exc:
        raise fail(str(exc)) from None
    for name, file in extra:
        _write(REVIEW_FORMATS[name](result), file)
    rendered = REVIEW_FORMATS[format](result)
    if output is not None:
        _write(rendered, output)
    sys.stdout.write(rendered)
    raise typer.Exit(result.exit_code())

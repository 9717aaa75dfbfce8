"""The optional parts of plumb, and the one way product code imports them.

``pip install plumb`` is what validating, reviewing and planning against a snapshot
need. The clients of real devices, PostgreSQL, NetBox, the canary statistics and the
controller's metrics come as extras (``pip install 'plumb[ssh]'``). :data:`EXTRAS`
says, once, which extra provides which importable module; pyproject.toml lists the
packages and versions of each, and README's table of extras is checked against both.

An edge module imports an extra's modules inside ``with optional_imports():``; a
missing one raises :class:`ExtraMissing`, which names the extra. The command line
turns that into one line, ``plumb serve needs the serve extra: pip install
'plumb[serve]'``, and an exit code, never a traceback (:func:`extra_for_command`,
:func:`needs_extra_line`).

This module sits below every stage (it imports nothing of plumb), so any stage may
use it; it names modules as strings and imports none of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class Extra:
    """One optional part of the plumb distribution."""

    name: str  # as in pyproject.toml [project.optional-dependencies] and pip install 'plumb[name]'
    enables: str  # what it enables, for README's table
    modules: tuple[str, ...]  # the top-level modules its packages provide that plumb imports
    includes: tuple[str, ...] = ()  # other extras it installs too
    commands: tuple[str, ...] = ()  # commands that need it whatever the fleet declares


EXTRAS: tuple[Extra, ...] = (
    Extra(
        "ssh",
        "the `eos` and `sonic` switch drivers (netmiko over SSH)",
        ("netmiko", "paramiko", "jsonpatch", "jsonpointer"),
    ),
    Extra(
        "hosts",
        "the `ansible` driver of GPU hosts",
        ("ansible_runner",),
    ),
    Extra(
        "postgres",
        "state in PostgreSQL (`state: {backend: postgresql}`, `plumb state migrate`)",
        ("psycopg",),
    ),
    Extra(
        "netbox",
        "`plumb inventory import netbox`: the inventory from NetBox, and what differs",
        ("pynetbox", "requests"),
    ),
    Extra(
        "rollouts",
        "running a rollout (`plumb rollout start`, `resume`), `rollback`, `demo`, the"
        " lab's telemetry (`lab clock`, `lab defect`): the canary statistics",
        ("numpy", "scipy", "httpx"),
    ),
    Extra(
        "serve",
        "`plumb serve`, the controller: its HTTP server and `/metrics`",
        ("prometheus_client", "waitress"),
        includes=("rollouts",),
        commands=("serve",),
    ),
    Extra(
        "pictures",
        "pictures: `plumb rollout plan --format svg` (a wave plan drawn with matplotlib)",
        ("matplotlib",),
    ),
)


def install_hint(extra: Extra) -> str:
    """The command that installs ``extra``."""
    return f"pip install 'plumb[{extra.name}]'"


class ExtraMissing(ModuleNotFoundError):
    """A module of an extra is not installed."""

    def __init__(self, module: str, extra: Extra) -> None:
        super().__init__(
            f"{module} is in the {extra.name} extra: {install_hint(extra)}", name=module
        )
        self.extra = extra


def extra_providing(module: str) -> Extra | None:
    """The extra whose packages provide ``module`` (a dotted name); None for the base."""
    top = module.partition(".")[0]
    return next((extra for extra in EXTRAS if top in extra.modules), None)


def extra_named(name: str) -> Extra:
    """The extra called ``name``."""
    for extra in EXTRAS:
        if extra.name == name:
            return extra
    raise KeyError(name)


def installed_with(extra: Extra) -> set[str]:
    """The names of ``extra`` and of every extra it includes, however deep."""
    names = {extra.name}
    for name in extra.includes:
        names |= installed_with(extra_named(name))
    return names


@contextmanager
def optional_imports() -> Iterator[None]:
    """Around the imports of an extra's modules: a missing one raises :class:`ExtraMissing`
    naming its extra. A missing module no extra provides is left as it is."""
    try:
        yield
    except ExtraMissing:
        raise
    except ModuleNotFoundError as exc:
        extra = extra_providing(exc.name or "")
        if extra is None:
            raise
        raise ExtraMissing(exc.name or "", extra) from exc


def extra_for_command(command: str | None, error: BaseException) -> Extra | None:
    """The extra to install for ``command`` to get past ``error``; None when ``error`` is
    not a missing module of an extra. A command with an extra of its own names that one
    when it includes the missing module's (``plumb serve`` asks for ``serve``, not for
    the ``rollouts`` it brings)."""
    if isinstance(error, ExtraMissing):
        extra: Extra | None = error.extra
    elif isinstance(error, ModuleNotFoundError):
        extra = extra_providing(error.name or "")
    else:
        return None
    if extra is None:
        return None
    first_word = command.split()[0] if command else None
    for own in EXTRAS:
        if first_word in own.commands and extra.name in installed_with(own):
            return own
    return extra


def needs_extra_line(command: str | None, extra: Extra) -> str:
    """The one line the command line prints when ``command`` lacks ``extra``."""
    who = f"plumb {command}" if command else "this command"
    return f"{who} needs the {extra.name} extra: {install_hint(extra)}"

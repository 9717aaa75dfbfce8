"""The collector is off inside a paused phase and restored as it was afterwards."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from inventory.gcpause import gc_paused

ORION = Path(__file__).resolve().parent.parent / "examples" / "orion"


@pytest.fixture(autouse=True)
def _restore_collector() -> Iterator[None]:
    was = gc.isenabled()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


def test_paused_inside_and_enabled_after() -> None:
    """An enabled collector is off inside the phase and on again after it."""
    gc.enable()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_restored_after_an_error() -> None:
    """A phase that raises still gives the collector back."""
    gc.enable()
    with pytest.raises(ValueError), gc_paused():
        raise ValueError("bad input")
    assert gc.isenabled()


def test_nested_phases_keep_it_off_until_the_outer_ends() -> None:
    """An inner phase leaving does not turn the collector on under an outer one."""
    gc.enable()
    with gc_paused():
        with gc_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_caller_that_disabled_it_keeps_it_disabled() -> None:
    """A collector already off stays off after the phase."""
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()


def test_as_a_decorator() -> None:
    """Decorating a function pauses the collector for its call only."""
    gc.enable()

    @gc_paused()
    def phase() -> bool:
        return gc.isenabled()

    assert phase() is False
    assert gc.isenabled()


def test_load_render_and_plan_run_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fleet's load, render and plan each run with the collector off, and leave it on."""
    import intent.fleet
    import reconciler.plan
    import reconciler.render
    from intent.fleet import load_fleet
    from reconciler.plan import build_plan
    from reconciler.render import render_desired

    seen: dict[str, bool] = {}

    def spy(module: object, name: str) -> None:
        inner = getattr(module, name)

        def recorded(*args: object, **kwargs: object) -> object:
            seen[name] = gc.isenabled()
            return inner(*args, **kwargs)

        monkeypatch.setattr(module, name, recorded)

    spy(intent.fleet, "plan_addresses")
    spy(reconciler.render, "render_device")
    spy(reconciler.plan, "order_changes")
    gc.enable()
    fleet = load_fleet(ORION)
    desired = render_desired(fleet)
    build_plan(fleet, desired, {name: {} for name in desired})
    assert seen == {"plan_addresses": False, "render_device": False, "order_changes": False}
    assert gc.isenabled()

"""Node lifecycle rules: a node is written only in maintenance and returns to service
only through acceptance, whatever sequence of transitions is attempted."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconciler.state.journal import Lifecycle
from rollouts.lifecycle import LifecycleError, check, path_to, writable

DRAINED = [s for s in Lifecycle if s is not Lifecycle.not_drained]


def test_the_happy_path_and_repair() -> None:
    assert path_to(Lifecycle.in_service, Lifecycle.maintenance) == [
        Lifecycle.draining,
        Lifecycle.maintenance,
    ]
    assert path_to(Lifecycle.maintenance, Lifecycle.in_service) == [
        Lifecycle.acceptance,
        Lifecycle.in_service,
    ]
    assert path_to(Lifecycle.repair, Lifecycle.in_service) == [
        Lifecycle.maintenance,
        Lifecycle.acceptance,
        Lifecycle.in_service,
    ]


def test_skipping_acceptance_is_refused_with_the_allowed_moves() -> None:
    with pytest.raises(LifecycleError, match=r"gpu-n01: maintenance -> in_service .*acceptance"):
        check("gpu-n01", Lifecycle.maintenance, Lifecycle.in_service)
    with pytest.raises(LifecycleError, match="repair -> in_service"):
        check("gpu-n01", Lifecycle.repair, Lifecycle.in_service)


def test_only_maintenance_is_writable_for_drained_nodes() -> None:
    assert [s for s in DRAINED if writable(s)] == [Lifecycle.maintenance]
    assert writable(Lifecycle.not_drained)


def test_switch_targets_never_enter_the_node_lifecycle() -> None:
    with pytest.raises(LifecycleError):
        path_to(Lifecycle.not_drained, Lifecycle.maintenance)


@given(st.lists(st.sampled_from(DRAINED), max_size=40))
def test_every_walk_enters_service_only_from_acceptance(attempts: list[Lifecycle]) -> None:
    """Apply random attempted transitions; the allowed ones form the node's history: a
    node that reached maintenance returns to service only through acceptance."""
    state, history = Lifecycle.in_service, [Lifecycle.in_service]
    for wanted in attempts:
        try:
            check("n", state, wanted)
        except LifecycleError:
            continue
        state = wanted
        history.append(state)
    for before, after in pairwise(history):
        if after is Lifecycle.in_service and before is not Lifecycle.in_service:
            assert before in (Lifecycle.acceptance, Lifecycle.draining)
        if before is Lifecycle.in_service and after is not Lifecycle.in_service:
            assert after is Lifecycle.draining
    written = False
    for state in history:  # once in maintenance, only acceptance leads back to service
        written = (written or state is Lifecycle.maintenance) and state is not Lifecycle.acceptance
        assert not (written and state is Lifecycle.in_service)


@given(st.sampled_from(DRAINED), st.sampled_from(DRAINED))
def test_path_to_is_a_chain_of_allowed_steps(start: Lifecycle, goal: Lifecycle) -> None:
    steps = path_to(start, goal)
    current = start
    for step in steps:
        check("n", current, step)
        current = step
    assert current is goal

"""A pass on an unchanged commit reuses the loaded fleet, its validation and its
rendered intent (observation and the diff are what a pass costs); a new commit, a new
day (waivers expire by date) or a local edit of the fleet files makes a pass start
afresh, and what it decides follows the new intent."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from serve.controller import Controller
from tests.serve.servefleet import Repos, git, inject_drift, make_repos

SERVE = """
serve:
  poll_seconds: 3600
  interval_seconds: 3600
  drift:
    - mode: warn
"""
QOS = "qos/ecn/3/kmin_kb"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Repos, Controller]]:
    repos = make_repos(tmp_path, SERVE)
    controller = Controller(repos.controller, "controller@test")
    try:
        yield repos, controller
    finally:
        controller.close()


def _drifted(controller: Controller) -> float:
    value: float = controller.metrics.drift_fields.labels("orion", "warn")._value.get()
    return value


def _pass(controller: Controller) -> None:
    controller._next_pass = 0.0  # due now
    controller.turn()
    assert controller.status.last_error is None, controller.status.last_error


def test_an_unchanged_commit_is_not_validated_or_rendered_again(
    served: tuple[Repos, Controller],
) -> None:
    _, controller = served
    _pass(controller)
    fleet = controller.fleet
    assert controller.intent.reused == 0
    _pass(controller)
    _pass(controller)
    assert controller.intent.reused == 2
    assert controller.fleet is fleet  # not loaded again


def test_a_new_commit_and_a_local_edit_start_afresh(served: tuple[Repos, Controller]) -> None:
    repos, controller = served
    inject_drift(repos.controller, "leaf-r0", {QOS: 150})
    _pass(controller)
    assert _drifted(controller) == 1
    # Kmin 150 fleet-wide: leaf-r0 now agrees, every other switch (at 200) drifts; a
    # pass that reused the old validation and render would still count 1
    qos = (repos.author / "intent" / "qos.yaml").read_text()
    assert "kmin_kb: 200" in qos
    repos.push("intent/qos.yaml", qos.replace("kmin_kb: 200", "kmin_kb: 150", 1), "Kmin 150")
    git(repos.controller, "pull", "-q", "--ff-only")
    _pass(controller)
    assert controller.intent.reused == 0
    switches = _drifted(controller) + 1
    assert switches > 2
    # an uncommitted edit of the fleet files: never reused
    edited = repos.controller / "intent" / "qos.yaml"
    edited.write_text(edited.read_text().replace("kmin_kb: 150", "kmin_kb: 160", 1))
    _pass(controller)
    _pass(controller)
    assert controller.intent.reused == 0
    assert _drifted(controller) == switches  # 160: leaf-r0 drifts too

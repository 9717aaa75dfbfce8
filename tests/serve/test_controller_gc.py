"""A long-running controller loads the fleet every pass, and loading freezes what
exists out of the cyclic collector's sight: the controller hands it back after each
turn, so cyclic garbage from earlier turns is still collected."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

from serve.controller import Controller
from tests.serve.servefleet import make_repos

SERVE = """
serve:
  poll_seconds: 30
  interval_seconds: 1
  drift:
    - mode: warn
"""


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_cyclic_garbage_from_before_a_pass_is_collected_after_the_turn(tmp_path: Path) -> None:
    repos = make_repos(tmp_path, SERVE)
    controller = Controller(repos.controller, "controller@test")
    try:
        cycle = _Cycle()
        gone = weakref.ref(cycle)
        del cycle  # garbage now, but only the cyclic collector can free it
        controller.turn()  # a pass: the fleet is loaded (and frozen) again
        assert controller.status.last_error is None
        assert gc.get_freeze_count() == 0
        assert gone() is None
    finally:
        controller.close()

"""EOS configuration text for the BGP tests: what plumb reads from it, the lines it
writes for some changes, and the text the simulator holds once those lines are entered."""

from __future__ import annotations

from reconciler.drivers.eos_lines import render_session
from reconciler.drivers.eos_parse import config_state, read_config, text_tree
from reconciler.drivers.safevalues import SafeValues
from reconciler.settings import Scalar
from tests.switchsim.eos_config import GLOBAL, apply_line
from tests.switchsim.eos_render import running_config
from tests.switchsim.eos_view import boot_config


def state_of(text: str) -> dict[str, Scalar]:
    return config_state(read_config(text_tree(text)))


def lines_for(text: str, changes: dict[str, Scalar]) -> list[str]:
    """The session lines plumb writes to take ``text`` to ``changes``."""
    config = read_config(text_tree(text))
    values = SafeValues("leaf")
    settings = [values.setting(p, v) for p, v in changes.items()]
    return render_session("leaf", config_state(config), config, settings)


def applied(text: str, lines: list[str]) -> str:
    """``text`` booted on the simulator with ``lines`` entered as EOS nests them (router
    level until an ``address-family``, that family after), as it prints it back."""
    config, refused = boot_config(text, ("tx-queue",))
    assert refused == []
    context = GLOBAL
    for line in lines:
        context, _ = apply_line(config, context, line)
    return running_config(config, "DCS-7280CR3-32P4", "4.32.1F")

"""Setting paths EOS cannot express (pure); see :mod:`reconciler.capabilities`."""

from __future__ import annotations

from collections.abc import Mapping

from reconciler.settings import Scalar

_REFUSED = {
    "qos/pfc_headroom_kb": (
        "EOS has no command for PFC headroom: the platform sizes it from the port speed "
        "and its buffer profile; the value stays a design input of the headroom policy"
    ),
    "qos/pfc_xoff_kb": (
        "EOS has no command for a PFC pause (xoff) threshold: the platform derives it; "
        "the value stays a design input of the ECN-below-Xoff policy"
    ),
}


def eos_inexpressible(path: str, observed: Mapping[str, Scalar]) -> str | None:
    """Why EOS cannot express ``path``, or None."""
    return _REFUSED.get(path)

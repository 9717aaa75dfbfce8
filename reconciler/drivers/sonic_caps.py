"""Setting paths SONiC cannot express (pure); see :mod:`reconciler.capabilities`."""

from __future__ import annotations

from collections.abc import Mapping

from reconciler.settings import Scalar

_REFUSED = {
    "qos/pfc_xoff_kb": (
        "SONiC has no static PFC pause threshold for lossless priority groups: it follows "
        "the buffer profile's dynamic_th; the value stays a design input of the "
        "ECN-below-Xoff policy"
    ),
}


def sonic_inexpressible(path: str, observed: Mapping[str, Scalar]) -> str | None:
    """Why SONiC cannot express ``path`` (on this device), or None."""
    return _REFUSED.get(path)

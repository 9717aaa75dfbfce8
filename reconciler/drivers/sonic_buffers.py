"""Lossless buffer profiles of SONiC's traditional buffer model (pure): how plumb writes
PFC headroom as a consistent profile, or refuses with the reason.

On the traditional model buffermgrd gives each port's lossless priority groups the
profile ``pg_lossless_<speed>_<cable length>_profile``, made from the HwSKU's
``pg_profile_lookup.ini`` row for that speed and cable (``size``, ``xon``, ``xoff``...):
one profile per speed and cable, with different values. ``xoff`` is the headroom; how
``size`` relates to it is the vendor's:

- ``mellanox`` (Spectrum, sonic-swss ``buffer_headroom_mellanox.lua``): without a
  shared headroom pool ``size`` is the headroom reserved for the group, ``xon + xoff``
  (plus, on 8-lane ports, one MTU). Replacing ``xoff`` alone leaves ``xon + xoff >
  size``: the queue is mis-sized while ``config apply-patch`` accepts it. plumb moves
  ``size`` by as much as ``xoff``, which the updater's rules allow on no release from
  202205 to master (``xoff`` is the only field they let be replaced), so there headroom
  is refused at plan time with the updater's reason. With a shared headroom pool (the
  ``ingress_lossless_pool`` has a non-zero ``xoff``) ``size`` is ``xon`` and ``xoff``
  is drawn from the pool: ``xoff`` is written alone (the pool's size is not changed).
- ``broadcom`` (Trident, Tomahawk, Jericho): ``size`` is the group's guaranteed
  minimum (``0``, ``1248``, ``4608``...), apart from ``xoff``, which the shared headroom
  pool backs: ``xoff`` alone is written.

Other platforms' sizing rules are not known to plumb: headroom is refused there.

Each profile is written with the one headroom the intent gives, never below what the
platform computes for the speeds and cables of the ports that use it (their rows of the
HwSKU's ``pg_profile_lookup.ini``, which the driver reads from the switch); when that
file cannot be read, or has no row for a speed and cable in use, the write is refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

SIZING: dict[str, str] = {
    "mellanox": "size = xon + xoff: both written together",
    "broadcom": "size is the guaranteed minimum, apart from xoff: xoff written alone",
}
LOOKUP = "pg_profile_lookup.ini"
Row = dict[str, int]


def lookup_path(platform: str, hwsku: str, asic: str | None = None) -> str:
    """Where a SONiC switch keeps its HwSKU's lossless profile table (one per ASIC,
    ``<hwsku>/<n>/``, on a multi-ASIC switch)."""
    folder = f"/usr/share/sonic/device/{platform}/{hwsku}"
    return f"{folder}/{asic}/{LOOKUP}" if asic else f"{folder}/{LOOKUP}"


def moves_size(asic_type: str, shared_pool: bool) -> bool:
    """Whether the platform's sizing makes ``size`` follow ``xoff``."""
    return asic_type == "mellanox" and not shared_pool


def shared_pool(db: Mapping[str, Any], fields: Mapping[str, Any]) -> bool:
    """Whether a profile's pool is a shared headroom pool (a non-zero pool ``xoff``)."""
    pool = str(fields.get("pool", "")).strip("[]").rsplit("|", 1)[-1]
    xoff = str(db.get("BUFFER_POOL", {}).get(pool, {}).get("xoff", "0"))
    return xoff.isdigit() and int(xoff) > 0


def headroom_ops(asic_type: str, names: Sequence[str], shared: bool) -> list[dict[str, Any]]:
    """The operations a headroom write sends for ``names`` (for the updater's rules)."""
    fields = ("xoff", "size") if moves_size(asic_type, shared) else ("xoff",)
    return [
        {"op": "replace", "path": f"/BUFFER_PROFILE/{name}/{field}", "value": "0"}
        for name in names
        for field in fields
    ]


def parse_lookup(text: str) -> dict[tuple[str, str], Row]:
    """``pg_profile_lookup.ini`` -> (speed, cable) -> its columns. The header comment
    names them (``# speed cable size xon xoff threshold [xon_offset]``)."""
    columns = ["speed", "cable", "size", "xon", "xoff", "threshold", "xon_offset"]
    rows: dict[tuple[str, str], Row] = {}
    for line in text.splitlines():
        words = line.split()
        if not words:
            continue
        if words[0].startswith("#"):
            named = [w for w in (words[1:] if words[0] == "#" else words) if w != "#"]
            if named[:2] == ["speed", "cable"]:
                columns = named
            continue
        if len(words) < 5 or not words[0].isdigit():
            continue
        values = dict(zip(columns, words, strict=False))
        rows[(values["speed"], values["cable"])] = {
            k: int(v) for k, v in values.items() if k not in ("speed", "cable") and _int(v)
        }
    return rows


def _int(text: str) -> bool:
    return text.lstrip("-").isdigit()


def resized(asic_type: str, fields: Mapping[str, Any], xoff: int, shared: bool) -> dict[str, str]:
    """The profile's fields with headroom ``xoff`` (bytes), sized by the platform's rule:
    where ``size`` follows ``xoff`` it moves by as much (what it holds beside ``xon +
    xoff`` stays)."""
    new = {"xoff": str(xoff)}
    if moves_size(asic_type, shared):
        old = int(str(fields.get("xoff", "0")))
        new["size"] = str(int(str(fields.get("size", "0"))) + xoff - old)
    return new


def floor_of(
    rows: Mapping[tuple[str, str], Row] | None, users: Sequence[tuple[str, str]]
) -> tuple[int, str] | str:
    """The largest ``xoff`` the platform computes for the (speed, cable) pairs of a
    profile's ports, with where it comes from; or why it is not known."""
    if rows is None:
        return f"the HwSKU's {LOOKUP} could not be read"
    best = (0, "")
    for speed, cable in users:
        row = rows.get((speed, cable))
        if row is None or "xoff" not in row:
            return f"{LOOKUP} has no row for speed {speed} over {cable}"
        best = max(best, (row["xoff"], f"{speed} over {cable}"))
    return best

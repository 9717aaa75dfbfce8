"""Setting paths SONiC cannot express (pure); see :mod:`reconciler.capabilities`.

Refusals, each decided from the observed state:

- by port: a PortChannel member's MTU and address (teammgrd sets a member's MTU to its
  PortChannel's, and ``config interface mtu`` / ``ip add`` refuse a member), a VLAN
  member's address (``config interface ip add`` refuses it);
- never: a PFC pause (xoff) threshold (lossless profiles follow ``dynamic_th``), a
  link-local peer address (an unnumbered peer is keyed by its interface), and an install
  over a build whose version cannot be read;
- by configuration mode: in bgpcfgd mode (SONiC's default, ``system/bgp_config``)
  router-id, maximum-paths and inbound route-maps come from bgpcfgd's templates and
  config_db has no field for them, and peers keyed by an interface are frrcfgd's only
  (bgpcfgd's templates render a peer by its address); on the dynamic buffer model
  (``system/buffer_model``) buffermgrd computes the headroom;
- by release and platform: every write goes through ``config apply-patch``, which a
  release before 202106 does not have, and whose field-operation validators
  (:mod:`.sonic_gcu`, the upstream rule file of the switch's release) guard
  ``WRED_PROFILE`` green thresholds and ``BUFFER_PROFILE`` fields per ASIC family
  (from the HwSKU, ``system/model``, and ``system/asic_type``). plumb asks them about
  the operations it would send: the green fields of the WRED profile the queue uses
  (``qos/ecn/<q>/wred_profile``), the lossless profiles' ``xoff`` (and ``size`` where
  the platform sizes a profile as ``xon + xoff``: :mod:`.sonic_buffers`);
- by platform sizing: headroom is written only where plumb knows how a lossless
  profile's ``size`` relates to its ``xoff`` (:data:`.sonic_buffers.SIZING`).

A fact the state does not hold (a plan from rendered intent, an old snapshot) decides
nothing: the switch's own dry run still refuses what it cannot take.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reconciler.drivers.sonic_bgp import is_address
from reconciler.drivers.sonic_buffers import SIZING, headroom_ops
from reconciler.drivers.sonic_gcu import Op, asic_name, refusal, rules_for, writable
from reconciler.drivers.sonic_version import release
from reconciler.settings import Scalar

_ALWAYS = {
    "qos/pfc_xoff_kb": (
        "SONiC has no static PFC pause threshold for lossless priority groups: it follows "
        "the buffer profile's dynamic_th; the value stays a design input of the "
        "ECN-below-Xoff policy"
    ),
}
DESIGN_INPUTS = tuple(_ALWAYS)
"""What SONiC derives itself (never drift): the intent's values feed policies only."""
_BGPCFGD = (
    "SONiC's default bgpcfgd mode takes {what} from its FRR templates, not from "
    "config_db; it is expressible only with frr_mgmt_framework_config (frrcfgd mode)"
)
DYNAMIC_HEADROOM = (
    "on the dynamic buffer model buffermgrd computes lossless headroom from "
    "port speed and cable length; there is no xoff to set"
)
DEFAULT_WRED = "AZURE_LOSSLESS"
GREEN = ("green_min_threshold", "green_max_threshold", "green_drop_probability")


def ecn_ops(profile: str) -> list[Op]:
    """What an ECN write sends: the three green fields of the queue's WRED profile."""
    return [
        {"op": "replace", "path": f"/WRED_PROFILE/{profile}/{field}", "value": "0"}
        for field in GREEN
    ]


def _updater(observed: Mapping[str, Scalar], what: str, ops: Sequence[Op]) -> str | None:
    """Why the switch's release of ``config apply-patch`` refuses ``ops``, or None."""
    hwsku = observed.get("system/model")
    rules = rules_for(release(observed.get("system/nos_version")))
    if not hwsku or rules is None:
        return None  # not observed: the switch's dry run decides
    asic_type = observed.get("system/asic_type") or None
    why = refusal(rules, ops, str(hwsku), None if asic_type is None else str(asic_type),
                  str(observed.get("system/nos_build") or ""))  # fmt: skip
    if why is None:
        return None
    family = asic_name(rules, str(hwsku), None if asic_type is None else str(asic_type))
    return (
        f"config apply-patch of {rules.release} refuses {what} on HwSKU {hwsku} "
        f"(ASIC {family}): {why} [{rules.source}]"
    )


def vendor_of(observed: Mapping[str, Scalar]) -> str | None:
    """The switch's ``asic_type``; when not observed, the vendor whose updater lists its
    HwSKU (a Spectrum family: ``mellanox``, another: ``broadcom``), else None."""
    asic_type = observed.get("system/asic_type")
    if asic_type:
        return str(asic_type)
    rules = rules_for(release(observed.get("system/nos_version")))
    if rules is None or rules.conf is None:
        rules = rules_for("master")  # the HwSKU lists only: the newest are the longest
    if rules is None or not observed.get("system/model"):
        return None
    family = asic_name(rules, str(observed["system/model"]), None)
    if family == "unknown":
        return None
    return "mellanox" if family.startswith("spc") else "broadcom"


def _headroom(observed: Mapping[str, Scalar]) -> str | None:
    if observed.get("system/buffer_model") == "dynamic":
        return DYNAMIC_HEADROOM
    vendor = vendor_of(observed)
    if vendor is not None and vendor not in SIZING:
        return (
            f"plumb knows how a lossless buffer profile is sized only on "
            f"{' and '.join(sorted(SIZING))} (size against xon and xoff); on {vendor} "
            "it writes no headroom"
        )
    names = str(observed.get("qos/pfc_headroom_profiles") or "pg_lossless_100000_5m_profile")
    shared = observed.get("qos/shared_headroom_pool") is not False
    ops = headroom_ops(vendor or "broadcom", names.split(","), shared)
    fields = sorted({str(op["path"]).rsplit("/", 1)[1] for op in ops})
    return _updater(observed, f"a consistent lossless profile ({', '.join(fields)})", ops)


def port_rule(path: str, observed: Mapping[str, Scalar]) -> str | None:
    """Why a port's ``mtu`` or ``address`` is not the port's own to write, or None."""
    parts = path.split("/")
    if len(parts) != 3:
        return None
    port, field = parts[1], parts[2]
    mode = observed.get(f"interfaces/{port}/mode")
    if mode == "lag-member" and field in ("mtu", "address"):
        return (
            f"{port} is a PortChannel member (PORTCHANNEL_MEMBER): teammgrd gives it the "
            f"PortChannel's MTU and SONiC refuses its own {field}; plumb does not manage "
            "the PortChannel"
        )
    if mode == "switched" and field == "address":
        return (
            f"{port} is a VLAN member (VLAN_MEMBER): SONiC refuses an address on it until "
            "it leaves the VLAN, which plumb never does implicitly"
        )
    return None


class SonicChecker:
    """:func:`sonic_inexpressible` for one device: what decides a refusal besides the
    path (release, updater rules, BGP mode, headroom, each WRED profile's verdict) is
    read from the observed state once, not once per path (a plan asks for every path
    of every switch)."""

    def __init__(self, observed: Mapping[str, Scalar]) -> None:
        self.observed = observed
        self.rules = rules_for(release(observed.get("system/nos_version")))
        self.bgpcfgd = observed.get("system/bgp_config", "frrcfgd") != "frrcfgd"
        self._headroom: tuple[str | None] | None = None
        self._ecn: dict[str, str | None] = {}
        self._no_apply_patch = (
            None
            if self.rules is None or writable(self.rules)
            else (
                f"this switch runs {observed.get('system/nos_version')}: config apply-patch, "
                "which plumb writes through, first ships in 202106"
            )
        )

    def __call__(self, path: str) -> str | None:
        """Why SONiC cannot express ``path`` on this device, or None."""
        if path.startswith("interfaces/"):  # most paths: the release and the port's mode
            return self._no_apply_patch or port_rule(path, self.observed)
        observed = self.observed
        if path in _ALWAYS:
            return _ALWAYS[path]
        if (
            path == "system/nos_version"
            and observed.get("system/nos_build")
            and (observed.get("system/nos_version") is None)
        ):
            return (
                f"the running build {str(observed['system/nos_build'])[:60]!r} names no "
                "branch plumb can read, so it cannot tell whether an install is due"
            )
        parts = path.split("/")
        if parts[:2] == ["bgp", "neighbors"] and parts[2].lower().startswith("fe80:"):
            return "a link-local peer address is never written: plumb keys it by its interface"
        if parts[:2] == ["bgp", "neighbors"] and self.bgpcfgd and not is_address(parts[2]):
            return (
                "SONiC's default bgpcfgd mode renders each BGP_NEIGHBOR row by its address; a "
                "peer keyed by an interface (unnumbered) is expressible only with "
                "frr_mgmt_framework_config (frrcfgd mode)"
            )
        if self._no_apply_patch is not None and path != "system/nos_version":
            return self._no_apply_patch
        # A fact the state does not hold (a plan from rendered intent, an old snapshot)
        # decides nothing: the switch's own dry run still refuses what it cannot take.
        if path in ("bgp/router_id", "bgp/maximum_paths") and self.bgpcfgd:
            return _BGPCFGD.format(what=path.split("/")[1].replace("_", "-"))
        if path.endswith("/inbound_filter") and self.bgpcfgd:
            return _BGPCFGD.format(what="inbound route-maps (set on its peer groups)")
        if path == "qos/pfc_headroom_kb":
            if self._headroom is None:
                self._headroom = (_headroom(observed),)
            return self._headroom[0]
        if path.startswith("qos/ecn/") and parts[2].isdigit():
            profile = str(observed.get(f"qos/ecn/{parts[2]}/wred_profile") or DEFAULT_WRED)
            if profile not in self._ecn:
                self._ecn[profile] = _updater(
                    observed,
                    f"replacing WRED_PROFILE {profile} green thresholds",
                    ecn_ops(profile),
                )
            return self._ecn[profile]
        return None


def sonic_inexpressible(path: str, observed: Mapping[str, Scalar]) -> str | None:
    """Why SONiC cannot express ``path`` (on this device), or None."""
    return SonicChecker(observed)(path)

"""EOS device profiles: the platform, software version and configuration style a
simulated EOS switch behaves as (`DeviceSpec.profile`).

- ``""`` (default): the classic behaviour of ``eos-4.31`` on a DCS-7280CR3
  whose identity (model, version, boot image) comes from the spec's initial
  state, or `default_state` (EOS 4.30.1F) when it has none.
- ``eos-4.31``: EOS 4.31.2F on a DCS-7280CR3-32P4.  Session diffs are
  unified diffs with ``@@`` hunk headers; a session committed with a timer
  shows state ``pendingCommitTimer`` (with ``commitBy``) until confirmed.
- ``eos-4.32``: EOS 4.32.1F on the same platform.  Session diffs carry no
  ``@@`` hunk headers; a committed session shows state ``committed`` at
  once, and a pending commit timer shows only in the top-level keys
  ``commitTimerSessionName`` and ``commitTimerExpireTime`` of
  ``show configuration sessions detail | json``.
- ``eos-4.32-asdot-profiles``: 4.32 behaviour on a DCS-7050CX3-32S (a
  Trident platform: transmit queues are ``uc-tx-queue`` and ``mc-tx-queue``,
  ``tx-queue`` is refused) running an engineering build, booted with a configuration in the
  style of a hand-built fabric: ECN/PFC in a ``qos profile`` applied with
  ``service-profile``, asdot ASN notation, a BGP peer group, an IPv6
  neighbour and switchport (bridged) ports.
- ``eos-4.33-tomahawk``: EOS 4.33.1F on a DCS-7060X6-64PE (Tomahawk 5, the
  AI-fabric leaf): ``uc-tx-queue``/``mc-tx-queue`` as on Trident, 4.32-style
  sessions; a configuration booted on it (`eos_view.boot_config`) comes from the
  caller.

The identity of a spec's initial state (model, version, boot image) wins
over the profile's; the profile always decides behaviour.
"""

# ruff: noqa: E501  (the boot configuration holds EOS lines longer than 100 characters)
from __future__ import annotations

from dataclasses import dataclass

CLASSIC = "classic"
COMMITTED = "committed"


@dataclass(frozen=True)
class EosProfile:
    """What one EOS profile fixes about a device."""

    name: str
    model: str
    version: str
    boot_image: str
    timer_style: str
    diff_hunks: bool
    queue_kinds: tuple[str, ...]
    initial_config: str | None = None

    @property
    def internal_version(self) -> str:
        """``internalVersion`` of ``show version``: the version less any build remark."""
        return self.version.split(" ", 1)[0]


_ASDOT_CONFIG = """\
hostname {hostname}
!
qos profile ROCE
   priority-flow-control on
   priority-flow-control priority 3 no-drop
   !
   uc-tx-queue 3
      random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes max-mark-probability 10
!
interface Ethernet1
   description to-spine-1
   mtu 9214
   no switchport
   ip address 10.0.0.0/31
   ipv6 address fc00::/127
   service-profile ROCE
!
interface Ethernet2
   description to-spine-2
   mtu 9214
   no switchport
   ip address 10.0.0.2/31
   service-profile ROCE
!
interface Ethernet3
   description gpu-node-1
   service-profile ROCE
!
interface Ethernet4
   description gpu-node-2
   service-profile ROCE
   !
   uc-tx-queue 3
      random-detect ecn minimum-threshold 200 kbytes maximum-threshold 2 mbytes max-mark-probability 20
!
ip routing
!
qos map dscp 26 to traffic-class 3
qos map dscp 48 to traffic-class 6
!
route-map RM-SPINE-IN permit 10
   match as-path length <= 32
!
router bgp 65101.65101
   bgp asn notation asdot
   router-id 10.1.0.1
   maximum-paths 64 ecmp 64
   neighbor SPINE peer group
   neighbor SPINE remote-as 65000
   neighbor SPINE route-map RM-SPINE-IN in
   neighbor 10.0.0.1 peer group SPINE
   neighbor 10.0.0.3 peer group SPINE
   neighbor fc00::1 remote-as 65000
   !
   address-family ipv6
      neighbor fc00::1 activate
!
end
"""

PROFILES: dict[str, EosProfile] = {
    "": EosProfile(
        "", "DCS-7280CR3-32P4", "4.30.1F", "flash:EOS-4.30.1F.swi", CLASSIC, True, ("tx-queue",)
    ),
    "eos-4.31": EosProfile(
        "eos-4.31",
        "DCS-7280CR3-32P4",
        "4.31.2F",
        "flash:EOS-4.31.2F.swi",
        CLASSIC,
        True,
        ("tx-queue",),
    ),
    "eos-4.32": EosProfile(
        "eos-4.32",
        "DCS-7280CR3-32P4",
        "4.32.1F",
        "flash:EOS-4.32.1F.swi",
        COMMITTED,
        False,
        ("tx-queue",),
    ),
    "eos-4.32-asdot-profiles": EosProfile(
        "eos-4.32-asdot-profiles",
        "DCS-7050CX3-32S",
        "4.32.0F-35960112.4320F (engineering build)",
        "flash:EOS-4.32.0F.swi",
        COMMITTED,
        False,
        ("uc-tx-queue", "mc-tx-queue"),
        _ASDOT_CONFIG,
    ),
    "eos-4.33-tomahawk": EosProfile(
        "eos-4.33-tomahawk",
        "DCS-7060X6-64PE",
        "4.33.1F",
        "flash:EOS-4.33.1F.swi",
        COMMITTED,
        False,
        ("uc-tx-queue", "mc-tx-queue"),
    ),
}


def eos_profile(name: str) -> EosProfile:
    """The profile called `name`, or ValueError naming the known ones."""
    try:
        return PROFILES[name]
    except KeyError:
        known = ", ".join(repr(n) for n in PROFILES)
        raise ValueError(f"unknown EOS profile {name!r} (known: {known})") from None

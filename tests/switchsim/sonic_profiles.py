"""SONiC device profiles: which release, platform and configuration style a simulated switch is.

A profile fixes what the switch prints and what it refuses; the initial
config_db of a named profile is rendered by `sonic_config`.

- ``""`` (default): the simulator's historic dialect, not one release: a
  Mellanox-SN4600C-C64 whose config_db is rendered straight from the
  `SwitchState` (BGP_GLOBALS tables, one buffer/WRED profile per value) and
  whose ``config apply-patch`` checks values but applies none of the generic
  config updater's field-operation rules.
- ``sonic-202205``: a 2022 build of the 202205 branch (Azure-style build
  number ``20220531.45``, Debian 11, FRR 8.2, click 7) on a
  Mellanox-SN4600C-C64 (Spectrum-3) with the traditional (static) buffer
  model.  ``show runningconfiguration all`` has no ``bgpraw`` (it was
  backported to 202205 only in January 2023).
- ``sonic-202405``: a 202405 community build (``202405.123456-abcdef12``,
  Debian 12, FRR 8.5, click 8) on a Broadcom Tomahawk-4
  Nokia-IXR7220-H4-64D, static buffers; ``bgpraw`` in the running config.
- ``sonic-202405-dynamic``: the 202405 build on a Mellanox-SN4600C-C64 with
  ``buffer_model: dynamic``: lossless priority groups carry
  ``"profile": "NULL"`` and buffermgrd computes their headroom from
  CABLE_LENGTH and the port speed.
- ``sonic-202405-multiasic``: the 202405 build on a two-ASIC Broadcom Jericho2c+
  line card (Nokia-IXR7250E-36x400G): config_db per namespace (``localhost``,
  ``asic0``, ``asic1``), front-panel ports split between the ASICs, patches
  addressed as ``/asicN/TABLE/...``.

Every named profile starts dual-stack (IPv4 and IPv6 INTERFACE keys) with the
AZURE DSCP map, lossless priorities 3-4, a lossy PG 0 and the AZURE_LOSSLESS
WRED profile, BGP through bgpcfgd (``docker_routing_config_mode:
separated``).  The generic config updater's field rules and the HwSKU -> ASIC
family table of each release are in `sonic_gcu`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SonicProfile:
    """Release, platform and style of one simulated SONiC switch."""

    name: str
    release: str
    build_version: str
    hwsku: str
    platform: str
    asic_type: str
    buffer_model: str = "traditional"
    namespaces: tuple[str, ...] = ()
    bgpraw: bool = False
    strict: bool = True
    debian: str = "12.5"
    os_version: str = "12"
    kernel: str = "6.1.0-11-2-amd64"
    frr_version: str = "8.5.4"
    click8: bool = True
    build_date: str = "Fri Jun 14 03:28:41 UTC 2024"
    port_speed: str = "100000"
    port_count: int = 8

    @property
    def multi_asic(self) -> bool:
        """Whether config_db is kept per ASIC namespace."""
        return bool(self.namespaces)

    @property
    def build_commit(self) -> str:
        """The commit hash part of the build version (or a fixed one)."""
        tail = self.build_version.rsplit("-", 1)
        return tail[1] if len(tail) == 2 else "f8a2c3b91"


LEGACY = SonicProfile(
    name="",
    release="202311",
    build_version="",
    hwsku="Mellanox-SN4600C-C64",
    platform="x86_64-mlnx_msn4600c-r0",
    asic_type="mellanox",
    strict=False,
    port_speed="400000",
)

_SN4600C = ("Mellanox-SN4600C-C64", "x86_64-mlnx_msn4600c-r0", "mellanox")

PROFILES: dict[str, SonicProfile] = {
    "": LEGACY,
    "sonic-202205": SonicProfile(
        name="sonic-202205",
        release="202205",
        build_version="20220531.45",
        debian="11.5",
        os_version="11",
        kernel="5.10.0-18-2-amd64",
        frr_version="8.2.2",
        click8=False,
        build_date="Tue Nov 22 11:02:17 UTC 2022",
        hwsku=_SN4600C[0],
        platform=_SN4600C[1],
        asic_type=_SN4600C[2],
    ),
    "sonic-202405": SonicProfile(
        name="sonic-202405",
        release="202405",
        build_version="202405.123456-abcdef12",
        hwsku="Nokia-IXR7220-H4-64D",
        platform="x86_64-nokia_ixr7220_h4-r0",
        asic_type="broadcom",
        bgpraw=True,
        port_speed="400000",
    ),
    "sonic-202405-dynamic": SonicProfile(
        name="sonic-202405-dynamic",
        release="202405",
        build_version="202405.123456-abcdef12",
        buffer_model="dynamic",
        bgpraw=True,
        hwsku=_SN4600C[0],
        platform=_SN4600C[1],
        asic_type=_SN4600C[2],
    ),
    "sonic-202405-multiasic": SonicProfile(
        name="sonic-202405-multiasic",
        release="202405",
        build_version="202405.123456-abcdef12",
        hwsku="Nokia-IXR7250E-36x400G",
        platform="x86_64-nokia_ixr7250e_36x400g-r0",
        asic_type="broadcom",
        namespaces=("asic0", "asic1"),
        bgpraw=True,
        port_speed="400000",
    ),
}


def profile_named(name: str) -> SonicProfile:
    """The profile called `name`; ValueError naming the known ones otherwise."""
    try:
        return PROFILES[name]
    except KeyError:
        known = ", ".join(repr(n) for n in PROFILES)
        raise ValueError(f"unknown SONiC profile {name!r} (known: {known})") from None

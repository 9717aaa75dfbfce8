"""What a caller declares about a simulated device: its spec and its faults."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .model import SwitchState

DIALECTS = ("eos", "sonic")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")


@dataclass(frozen=True)
class DeviceSpec:
    """One simulated switch.

    `initial` is used only when `state_dir` holds no saved state for `name`;
    otherwise the saved state wins, so a restarted simulator keeps every
    committed change.  `port` 0 lets the OS pick a free loopback port.

    `profile` names the platform, version and configuration style the device
    behaves as (its dialect's profile table; empty: the dialect's default).
    `lldp` lists the neighbours its LLDP agent reports, as
    ``(local port, neighbour system name, neighbour port id)``.
    """

    name: str
    dialect: str
    username: str = "admin"
    password: str = "admin"
    initial: SwitchState | None = None
    enable_secret: str | None = None
    port: int = 0
    reboot_seconds: float = 1.0
    profile: str = ""
    lldp: tuple[tuple[str, str, str], ...] = ()

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ValueError(f"device name {self.name!r} must match {_NAME.pattern}")
        if self.dialect not in DIALECTS:
            raise ValueError(f"dialect {self.dialect!r} is not one of {DIALECTS}")
        if self.reboot_seconds < 0:
            raise ValueError("reboot_seconds must not be negative")


@dataclass(frozen=True)
class Fault:
    """Deterministic misbehaviour of one device; the default is a healthy device.

    - `slow`: seconds to wait before every command's answer.
    - `drop_mid_commit`: a commit is applied, then the TCP connection is cut
      before the prompt returns.
    - `drop_before_commit`: the connection is cut when a commit is requested;
      nothing is applied.
    - `hang_commit`: a commit is applied, then its answer is withheld for
      this many seconds (a commit that times out at the client).
    - `reject`: a regular expression; config lines (EOS) or patch operations
      (SONiC, as ``"OP PATH VALUE-JSON"``) it matches are refused with
      ``% Invalid input``.
    - `auth_fail`: every login is refused.
    - `host_key_changed`: the server presents a different host key from the
      one `SwitchSim.host_key_line` reports.
    - `unreachable`: the port stops listening and open sessions are cut.
    """

    slow: float = 0.0
    drop_mid_commit: bool = False
    drop_before_commit: bool = False
    hang_commit: float = 0.0
    reject: str | None = None
    auth_fail: bool = False
    host_key_changed: bool = False
    unreachable: bool = False

    def __post_init__(self) -> None:
        if self.slow < 0 or self.hang_commit < 0:
            raise ValueError("slow and hang_commit must not be negative")
        if self.reject is not None:
            re.compile(self.reject)

    def rejects(self, text: str) -> bool:
        """Whether `reject` refuses this config line or patch operation."""
        return self.reject is not None and re.search(self.reject, text) is not None

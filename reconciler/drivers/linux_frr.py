"""The linux-frr driver: a switch that is Linux + FRR (a whitebox switch, SONiC's or
Cumulus's shape, a switch of the real-network lab), and, without FRR, a GPU node of
the real-network lab (a network namespace with its NICs).

Commands go through a :class:`~reconciler.drivers.linux_exec.Runner` (a network
namespace on this host, or SSH). The driver contract (:mod:`reconciler.drivers.base`):

* **observe**: ports from ``ip -j -d link show`` / ``ip -j address show``
  (:mod:`.linux_links`), BGP from ``vtysh -c 'show version' -c 'show running-config'``
  (:mod:`.linux_frr_config`), and the facts the platform's rule reads
  (``system/platform``, ``system/qdisc_red``; :mod:`.linux_frr_caps`);
* **stage**: the ``ip -batch`` lines for MTU and address changes, and the whole
  candidate configuration (running config with the ``router bgp`` block re-rendered)
  written to ``<workdir>/candidate.conf`` on the device;
* **compare**: ``frr-reload.py --test`` checks the candidate (a line FRR does not
  accept is ``ConfigRejected``), and the changes are read back from the candidate;
* **commit**: save the running config and the ports' old values in the workdir, arm the
  revert timer when ``confirm_within`` is given (a detached ``sleep N; restore``
  process on the device, its process group in ``<workdir>/revert.pid``), apply the
  ports, then ``frr-reload.py --reload`` the candidate; if either step fails, the saved
  state is restored at once and the change is ``ConfigRejected``;
* **confirm**: kill the revert timer's process group, then save FRR's running config
  (``vtysh -c 'write memory'``), so a reboot keeps it; a commit without a confirm window
  saves at once.

Errors: the runners map transport failures (timeouts are ``DeviceTimeout``, a missing
namespace or SSH host ``DeviceUnreachable``); a command that reads and exits non-zero
is ``DeviceUnreachable`` (its daemon does not answer), one that writes and exits
non-zero is ``ConfigRejected``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from ipaddress import IPv4Interface, IPv6Interface

from reconciler.drivers.base import DeviceRef, Driver, checked_candidate
from reconciler.drivers.linux_exec import Ran, Runner
from reconciler.drivers.linux_frr_caps import (
    LINUX_FRR,
    LINUX_NETNS,
    RUNS_PLATFORM,
    LinuxFrrChecker,
)
from reconciler.drivers.linux_frr_config import (
    ConfigError,
    bgp_state,
    candidate,
    config_body,
    multipath_default,
)
from reconciler.drivers.linux_frr_sessions import Session, parse_summary, sessions_state
from reconciler.drivers.linux_links import batch_lines, port_field, ports_state
from reconciler.drivers.linux_qos import (
    dcb_script,
    ecn_lines,
    ecn_state,
    pfc_argv,
    pfc_state,
    probe_result,
    qdisc_probe,
    red_of,
)
from reconciler.errors import ConfigRejected, DeviceUnreachable
from reconciler.settings import Change, Scalar, apply_changes

FRR_RELOAD = "/usr/lib/frr/frr-reload.py"  # Debian: package frr-pythontools
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
BGP_ROLES = ("leaf", "spine", "super-spine")  # inventory.models.BGP_ROLES, by value


@dataclass(frozen=True)
class FrrAccess:
    """Where one device keeps what the driver needs."""

    workdir: str  # plumb's candidate, saved config and revert timer (exists, root only)
    vty_socket: str | None = None  # vtysh --vty_socket; FRR's own default when None
    ports: Mapping[str, str] = field(default_factory=dict)  # port -> Linux name
    frr_reload: str = FRR_RELOAD
    config_dir: str | None = None  # where `write memory` saves; FRR's own (/etc/frr) when None

    def vtysh(self) -> list[str]:
        argv = ["vtysh"]
        if self.vty_socket is not None:
            argv += ["--vty_socket", self.vty_socket]
        if self.config_dir is not None:
            argv += ["--config_dir", self.config_dir]
        return argv

    def reload(self, mode: str, config: str) -> list[str]:
        argv = ["python3", self.frr_reload, mode, "--bindir", "/usr/bin"]
        argv += ["--confdir", self.workdir, "--rundir", self.workdir, "--daemon", "bgpd"]
        if self.vty_socket is not None:
            argv += ["--vty_socket", self.vty_socket]
        return [*argv, config]

    def port_of(self) -> dict[str, str]:
        """Linux name -> port."""
        return {name: port for port, name in self.ports.items()}

    def file(self, name: str) -> str:
        return f"{self.workdir.rstrip('/')}/{name}"


AccessOf = Callable[[DeviceRef], FrrAccess]


@dataclass
class FrrCandidate:
    device: str
    changes: tuple[Change, ...]
    before: dict[str, Scalar]
    running: str  # the running config the candidate was made from
    config: str | None  # the candidate config (None: no BGP change)
    port_lines: list[str]
    multipath: int | None = None  # the build's ECMP width: maximum-paths' default
    tc_lines: list[str] = field(default_factory=list)  # ECN: ``tc -batch`` lines
    tc_revert: list[str] = field(default_factory=list)
    dcb: list[list[str]] = field(default_factory=list)  # PFC: one ``dcb`` command per port
    dcb_revert: list[list[str]] = field(default_factory=list)
    discarded: bool = False


def _host(ref: DeviceRef) -> bool:
    return ref.role == "gpu-node"


def _kind(ref: DeviceRef) -> str:
    return "nics" if _host(ref) else "interfaces"


def _is_bgp(path: str) -> bool:
    return path.startswith("bgp/")


def _is_ecn(path: str) -> bool:
    return path.startswith("qos/ecn/")


def _pfc_port(path: str) -> str | None:
    parts = path.split("/")
    return parts[1] if len(parts) == 3 and parts[2] == "pfc_priorities" else None


def _ifnames(state: Mapping[str, Scalar], access: FrrAccess) -> dict[str, str]:
    """Port -> Linux name of every port observed."""
    ports = [p.split("/")[1] for p in state if p.startswith("interfaces/") and p.endswith("/mtu")]
    return {port: access.ports.get(port, port) for port in sorted(ports)}


class LinuxFrrDriver(Driver):
    name = "linux-frr"

    def __init__(self, runner: Runner, access: AccessOf, commit_timeout: float = 60.0) -> None:
        self.runner = runner
        self.access = access
        self.commit_timeout = commit_timeout
        self._qdiscs: dict[str, tuple[bool, str]] = {}  # the kernel's: fixed until reboot

    # -- reading -----------------------------------------------------------------------

    def _read(self, ref: DeviceRef, argv: Sequence[str]) -> str:
        ran = self.runner.run(ref, argv)
        if ran.status != 0:
            raise DeviceUnreachable(ref.name, f"{shlex.join(argv)[:60]}: {ran.first_error()}")
        return ran.stdout

    def _frr(self, ref: DeviceRef, access: FrrAccess) -> tuple[str, int | None]:
        """The running config and the build's ECMP width."""
        text = self._read(ref, [*access.vtysh(), "-c", "show version", "-c", "show running-config"])
        version, _, running = text.partition("Building configuration...")
        return "\n".join(config_body(running)) + "\n", multipath_default(version)

    def observe(self, device: DeviceRef) -> dict[str, Scalar]:
        access = self.access(device)
        links = self._read(device, ["ip", "-j", "-d", "link", "show"])
        addresses = self._read(device, ["ip", "-j", "address", "show"])
        port_of = access.port_of()
        try:
            state = ports_state(links, addresses, _kind(device), port_of)
        except (ValueError, KeyError) as exc:
            raise DeviceUnreachable(device.name, f"unreadable iproute2 output: {exc}") from None
        if _host(device):
            state[RUNS_PLATFORM] = LINUX_NETNS
            return state
        state[RUNS_PLATFORM] = LINUX_FRR
        try:
            state.update(self._qos(device, state, access))
        except ValueError as exc:
            raise DeviceUnreachable(device.name, f"unreadable tc or dcb output: {exc}") from None
        if device.role in BGP_ROLES:
            running, multipath = self._frr(device, access)
            try:
                state.update(bgp_state(running, multipath, port_of))
                state.update(sessions_state(self.bgp_sessions(device), port_of))
            except (ConfigError, ValueError) as exc:
                raise DeviceUnreachable(device.name, f"unreadable FRR output: {exc}") from None
        return state

    def _qos(
        self, ref: DeviceRef, ports: Mapping[str, Scalar], access: FrrAccess
    ) -> dict[str, Scalar]:
        """ECN (where the kernel has the qdiscs: probed once) and PFC of every port."""
        if ref.name not in self._qdiscs:
            self._qdiscs[ref.name] = probe_result(self._read(ref, ["sh", "-c", qdisc_probe()]))
        has_red, why_not = self._qdiscs[ref.name]
        state: dict[str, Scalar] = {"system/qdisc_red": "yes" if has_red else "no"}
        if why_not:
            state["system/qdisc_probe"] = why_not
        devs = _ifnames(ports, access)
        if has_red:
            shown = self._read(ref, ["tc", "-d", "-j", "qdisc", "show"])
            state.update(ecn_state(shown, list(devs.values())))
        port_of = {name: port for port, name in devs.items()}
        state.update(
            pfc_state(self._read(ref, ["sh", "-c", dcb_script(list(devs.values()))]), port_of)
        )
        return state

    def bgp_sessions(self, device: DeviceRef) -> dict[str, Session]:
        """The switch's BGP sessions now (``show bgp summary json``, every address
        family), keyed as FRR keys them (an interface peer by its Linux name):
        read-only facts for verification and rollout evidence."""
        text = self._read(device, [*self.access(device).vtysh(), "-c", "show bgp summary json"])
        return parse_summary(text)

    # -- writing -----------------------------------------------------------------------

    def _write(self, ref: DeviceRef, argv: Sequence[str], stdin: str | None = None) -> Ran:
        return self.runner.run(ref, argv, stdin=stdin, timeout=self.commit_timeout, write=True)

    def _put(self, ref: DeviceRef, path: str, text: str) -> None:
        ran = self.runner.run(ref, ["sh", "-c", 'umask 077 && cat > "$1"', "sh", path], stdin=text)
        if ran.status != 0:
            raise ConfigRejected(ref.name, f"cannot write {path}: {ran.first_error()}")

    def stage(self, device: DeviceRef, changes: Sequence[Change]) -> FrrCandidate:
        before = self.observe(device)
        refuses = LinuxFrrChecker(before) if not _host(device) else None
        kind = _kind(device)
        for change in changes:
            if port_field(change.path, kind) is not None:
                self._check_port(device, change, before)
            elif not (_is_bgp(change.path) and device.role in BGP_ROLES):
                qos = _is_ecn(change.path) or _pfc_port(change.path) is not None
                reason = (refuses(change.path) if refuses is not None else None) or (
                    None if qos and not _host(device) else "no setting"
                )
                if reason is not None:
                    raise ConfigRejected(
                        device.name, f"linux-frr cannot write {change.path}: {reason}"
                    )
        access = self.access(device)
        lines = batch_lines(changes, kind, access.ports)
        tc_lines, tc_revert = self._ecn(device, changes, before, access)
        dcb, dcb_revert = self._pfc(device, changes, before, access)
        bgp = [c for c in changes if _is_bgp(c.path)]
        running, config, multipath = "", None, None
        if bgp:
            running, multipath = self._frr(device, access)
            now = {p: v for p, v in before.items() if _is_bgp(p)}
            try:
                config = candidate(running, apply_changes(now, bgp), access.ports)
            except ConfigError as exc:
                raise ConfigRejected(device.name, str(exc)) from None
            self._put(device, access.file("candidate.conf"), config)
        return FrrCandidate(
            device.name,
            tuple(changes),
            before,
            running,
            config,
            lines,
            multipath,
            tc_lines,
            tc_revert,
            dcb,
            dcb_revert,
        )

    @staticmethod
    def _ecn(
        ref: DeviceRef, changes: Sequence[Change], before: Mapping[str, Scalar], access: FrrAccess
    ) -> tuple[list[str], list[str]]:
        """``tc -batch`` lines for the ECN changes, and the lines that undo them."""
        ecn = [c for c in changes if _is_ecn(c.path)]
        if not ecn:
            return [], []
        after = apply_changes(before, ecn)
        priorities = sorted({int(c.path.split("/")[2]) for c in ecn})
        was = {p: red_of(before, p) for p in priorities}
        wanted = {p: red_of(after, p) for p in priorities}
        for p in priorities:
            red = wanted[p]
            if red is None and any(
                after.get(f"qos/ecn/{p}/{f}") is not None for f in ("kmin_kb", "kmax_kb")
            ):
                raise ConfigRejected(
                    ref.name, f"qos/ecn/{p}: kmin_kb, kmax_kb and pmax_percent are set together"
                )
            if red is not None and red.kmin_kb >= red.kmax_kb:
                raise ConfigRejected(
                    ref.name, f"qos/ecn/{p}: kmin_kb {red.kmin_kb} >= kmax_kb {red.kmax_kb}"
                )
        devs = list(_ifnames(before, access).values())
        return ecn_lines(devs, was, wanted), ecn_lines(devs, wanted, was)

    @staticmethod
    def _pfc(
        ref: DeviceRef, changes: Sequence[Change], before: Mapping[str, Scalar], access: FrrAccess
    ) -> tuple[list[list[str]], list[list[str]]]:
        """One ``dcb pfc set`` per PFC change, and the commands that undo them."""
        forward: list[list[str]] = []
        back: list[list[str]] = []
        for change in changes:
            port = _pfc_port(change.path)
            if port is None:
                continue
            dev = access.ports.get(port, port)
            try:
                forward.append(pfc_argv(dev, str(change.after or "")))
                back.append(pfc_argv(dev, str(before.get(change.path) or "")))
            except ValueError as exc:
                raise ConfigRejected(ref.name, f"{change.path}: {exc}") from None
        return forward, back

    @staticmethod
    def _check_port(ref: DeviceRef, change: Change, before: Mapping[str, Scalar]) -> None:
        port, name = change.path.split("/")[1], change.path.rsplit("/", 1)[1]
        if f"{change.path.rsplit('/', 1)[0]}/mtu" not in before:
            raise ConfigRejected(ref.name, f"{port}: no such interface")
        if name == "mtu" and not (isinstance(change.after, int) and change.after > 0):
            raise ConfigRejected(ref.name, f"{change.path}: {change.after!r} is no MTU")
        if name.endswith("address") and change.after not in (None, ""):
            family = IPv6Interface if name == "ipv6_address" else IPv4Interface
            try:
                family(str(change.after))
            except ValueError:
                what = "IPv6" if family is IPv6Interface else "IPv4"
                raise ConfigRejected(
                    ref.name, f"{change.path}: {change.after!r} is no {what} address/length"
                ) from None

    def _candidate(self, device: DeviceRef, candidate: object) -> FrrCandidate:
        return checked_candidate(device, candidate, FrrCandidate, "a linux-frr")

    def compare(self, device: DeviceRef, candidate: object) -> list[Change]:
        staged = self._candidate(device, candidate)
        out = [c for c in staged.changes if not _is_bgp(c.path)]
        if staged.config is None:
            return out
        access = self.access(device)
        ran = self.runner.run(device, access.reload("--test", access.file("candidate.conf")))
        if ran.status != 0:
            raise ConfigRejected(device.name, f"FRR refuses the candidate: {_reload_error(ran)}")
        would = bgp_state(staged.config, staged.multipath, access.port_of())
        now = {p: v for p, v in staged.before.items() if _is_bgp(p)}
        for path in sorted(set(now) | set(would)):
            if now.get(path) != would.get(path):
                out.append(Change(path, now.get(path), would.get(path)))
        return out

    def commit(self, device: DeviceRef, candidate: object, confirm_within: float | None) -> None:
        staged = self._candidate(device, candidate)
        access = self.access(device)
        restore = self._save(device, access, staged)
        if confirm_within is not None:
            self._arm(device, access, restore, confirm_within)
        if staged.port_lines:
            ran = self._write(device, ["ip", "-batch", "-"], "\n".join(staged.port_lines) + "\n")
            if ran.status != 0:
                self._restore(device, restore)
                raise ConfigRejected(device.name, f"ip refused a port change: {ran.first_error()}")
        if staged.tc_lines:
            ran = self._write(device, ["tc", "-batch", "-"], "\n".join(staged.tc_lines) + "\n")
            if ran.status != 0:
                self._restore(device, restore)
                raise ConfigRejected(device.name, f"tc refused the ECN change: {ran.first_error()}")
        for argv in staged.dcb:
            ran = self._write(device, argv)
            if ran.status != 0:
                self._restore(device, restore)
                raise ConfigRejected(
                    device.name, f"dcb refused the PFC change: {ran.first_error()}"
                )
        if staged.config is not None:
            ran = self._write(device, access.reload("--reload", access.file("candidate.conf")))
            if ran.status != 0:
                self._restore(device, restore)
                raise ConfigRejected(device.name, f"FRR refused the change: {_reload_error(ran)}")
            if confirm_within is None:
                self.save(device)

    def save(self, device: DeviceRef) -> None:
        """``write memory``: FRR's running config becomes the one it starts with
        (``frr.conf`` in FRR's config directory, or each daemon's own file)."""
        ran = self._write(device, [*self.access(device).vtysh(), "-c", "write memory"])
        if ran.status != 0:
            raise ConfigRejected(
                device.name,
                f"the change is running but `write memory` failed, so a reboot loses it: "
                f"{ran.first_error()}",
            )

    def _save(self, ref: DeviceRef, access: FrrAccess, staged: FrrCandidate) -> str:
        """Save what the commit replaces; returns the shell commands that restore it."""
        kind = _kind(ref)
        back = [
            Change(c.path, c.after, staged.before.get(c.path))
            for c in staged.changes
            if port_field(c.path, kind) is not None
        ]
        steps = []
        lines = batch_lines(back, kind, access.ports)
        if lines:
            self._put(ref, access.file("revert.ip"), "\n".join(lines) + "\n")
            steps.append(f"ip -force -batch {shlex.quote(access.file('revert.ip'))}")
        if staged.tc_revert:
            self._put(ref, access.file("revert.tc"), "\n".join(staged.tc_revert) + "\n")
            steps.append(f"tc -force -batch {shlex.quote(access.file('revert.tc'))}")
        steps += [shlex.join(argv) for argv in staged.dcb_revert]
        if staged.config is not None:
            self._put(ref, access.file("before.conf"), staged.running)
            steps.append(shlex.join(access.reload("--reload", access.file("before.conf"))))
        return "; ".join(steps) or "true"

    def _restore(self, ref: DeviceRef, restore: str) -> None:
        self._write(ref, ["sh", "-c", restore])

    def _arm(self, ref: DeviceRef, access: FrrAccess, restore: str, seconds: float) -> None:
        """Start the revert timer: a process group of its own on the device, detached
        from this one, that restores the saved state unless confirm kills it first."""
        pidfile = shlex.quote(access.file("revert.pid"))
        timer = f"sleep {seconds:.3f}; {restore}; rm -f {pidfile}"
        script = (
            f"setsid sh -c {shlex.quote(timer)} </dev/null >/dev/null 2>&1 & echo $! > {pidfile}"
        )
        ran = self._write(ref, ["sh", "-c", script])
        if ran.status != 0:
            raise ConfigRejected(ref.name, f"cannot start the revert timer: {ran.first_error()}")

    def confirm(self, device: DeviceRef, candidate: object) -> None:
        """Stop the device's revert timer (``candidate`` may be None: after a timeout the
        loop confirms what it found in place)."""
        pidfile = shlex.quote(self.access(device).file("revert.pid"))
        # POSIX sh's kill takes a process group as a negative pid, without "--".
        script = f'if [ -f {pidfile} ]; then kill -TERM "-$(cat {pidfile})" && rm -f {pidfile}; fi'
        ran = self._write(device, ["sh", "-c", script])
        if ran.status != 0:
            raise ConfigRejected(device.name, f"cannot stop the revert timer: {ran.first_error()}")
        if device.role in BGP_ROLES:
            self.save(device)

    def discard(self, device: DeviceRef, candidate: object) -> None:
        if isinstance(candidate, FrrCandidate):
            candidate.discarded = True

    def close(self) -> None:
        self.runner.close()


def _reload_error(ran: Ran) -> str:
    """The line of frr-reload.py's output that says what FRR refused."""
    lines = [_ANSI.sub("", line).strip() for line in (ran.stderr + "\n" + ran.stdout).splitlines()]
    for marker in ("% ", "ERROR", "failed"):
        for line in lines:
            if marker in line:
                return line[:300]
    return ran.first_error()

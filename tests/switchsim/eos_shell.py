"""One EOS CLI session: exec/enable/config modes, prompts and show commands.

Prompts: ``host>`` (exec), ``host#`` (privileged), ``host(config)#`` and
``host(config-s-NAME)#`` with sub-mode suffixes such as ``-if-Et1``.
In ``configure terminal`` every line takes effect at once; in a session it
is staged until ``commit``.  Refused input is answered with a line starting
``% Invalid input`` and changes nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from . import eos_render as render
from . import eos_show as show
from . import eos_show_bgp as show_bgp
from .eos_config import GLOBAL, EosContext, apply_line
from .eos_device import PENDING, EosDevice
from .eos_model import EosConfig
from .eos_sessions import sessions_json, sessions_text
from .replies import Action, CliError, Reply, invalid

_SESSION_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_TIMER = re.compile(r"^(\d{1,2}):([0-5]\d):([0-5]\d)$")
_FIRST_WORD = {"sh": "show", "conf": "configure", "config": "configure", "wr": "write"}


class EosShell:
    """State of one interactive EOS CLI session."""

    def __init__(self, device: EosDevice) -> None:
        self.device = device
        self.privileged = False
        self.configuring = False
        self.session: str | None = None
        self.context: EosContext = GLOBAL
        self.echo = True
        self._awaiting: str | None = None

    @property
    def prompt(self) -> str:
        """The prompt for the current mode."""
        if self._awaiting == "password":
            return "Password: "
        if self._awaiting == "reload":
            return "Proceed with reload? [confirm]"
        host = self.device.running.hostname
        if not self.configuring:
            return f"{host}#" if self.privileged else f"{host}>"
        mode = "config" if self.session is None else f"config-s-{self.session}"
        return f"{host}({mode}{self.context.prompt_suffix()})#"

    def greeting(self) -> str:
        """Text printed before the first prompt."""
        return ""

    def execute(self, line: str) -> Reply:
        """Run one input line."""
        if self._awaiting is not None:
            return self._answer(line)
        text = " ".join(line.split())
        if not text:
            return Reply()
        words = text.split(" ")
        words[0] = _FIRST_WORD.get(words[0], words[0])
        text = " ".join(words)
        try:
            if self.configuring:
                return self._config(text)
            return self._exec(text)
        except CliError as exc:
            return Reply(str(exc))

    # -- exec mode ----------------------------------------------------------

    def _exec(self, text: str) -> Reply:
        if text in ("exit", "logout", "quit"):
            return Reply(action=Action.CLOSE)
        if text.startswith("terminal "):
            return Reply(self._terminal(text))
        if text == "enable":
            if self.privileged or self.device.spec.enable_secret is None:
                self.privileged = True
                return Reply()
            self._awaiting, self.echo = "password", False
            return Reply()
        if text == "disable":
            self.privileged = False
            return Reply()
        if text.startswith("show "):
            return Reply(self._show(text))
        if not self.privileged:
            raise invalid("privileged mode required")
        if text in ("write", "write memory", "copy running-config startup-config"):
            self.device.write_memory()
            return Reply("Copy completed successfully.")
        if text == "reload now":
            return Reply(action=Action.REBOOT)
        if text == "reload":
            self._awaiting = "reload"
            return Reply()
        if text in ("configure", "configure terminal"):
            self.configuring, self.session, self.context = True, None, GLOBAL
            return Reply()
        match text.split(" "):
            case ["configure", "session", name]:
                self.device.open_session(self._session_name(name))
                self.configuring, self.session, self.context = True, name, GLOBAL
                return Reply()
            case ["configure", "session", name, "commit"]:
                return self._commit(lambda: self.device.commit(name))
            case ["configure", "session", name, "commit", "timer", value]:
                total = _timer_seconds(value)
                return self._commit(lambda: self.device.commit_with_timer(name, total))
            case ["configure", "session"] | ["configure", "session", _, "commit", "timer"]:
                raise CliError("% Incomplete command")
            case ["configure", "session", name, "abort"]:
                self.device.abort(name)
                return Reply()
        raise invalid()

    def _terminal(self, text: str) -> str:
        match text.split(" "):
            case ["terminal", "width", width] if width.isdigit():
                return f"Width set to {width} columns."
            case ["terminal", "length", "0"]:
                return "Pagination disabled."
            case ["terminal", "length", length] if length.isdigit():
                return f"Pagination set to {length} lines."
        raise invalid()

    def _answer(self, line: str) -> Reply:
        awaiting, self._awaiting, self.echo = self._awaiting, None, True
        if awaiting == "password":
            if line.rstrip("\r\n") == self.device.spec.enable_secret:
                self.privileged = True
                return Reply()
            return Reply("% Access denied")
        if line.strip().lower() in ("", "y", "yes"):
            return Reply(action=Action.REBOOT)
        return Reply()

    @staticmethod
    def _session_name(name: str) -> str:
        if not _SESSION_NAME.match(name):
            raise invalid(f"bad session name {name}")
        return name

    def _commit(self, apply: Callable[[], None], leave: bool = False) -> Reply:
        fault = self.device.fault
        if fault.drop_before_commit:
            return Reply(action=Action.DROP)
        apply()
        if leave:
            self._leave()
        if fault.drop_mid_commit:
            return Reply(action=Action.DROP)
        return Reply(delay=fault.hang_commit)

    # -- show commands ------------------------------------------------------

    def _show(self, text: str) -> str:
        command, *pipes = [part.strip() for part in text.split("|")]
        as_json = False
        for pipe in pipes:
            words = pipe.split()
            if words == ["json"] or (
                words[:2] == ["json", "revision"] and len(words) == 3 and words[2] in "123"
            ):
                as_json = True  # every revision the simulator models carries the same keys
            elif pipe != "no-more":
                raise invalid(f"unsupported filter {pipe}")
        data = self._show_data(command, as_json)
        return json.dumps(data, indent=2) if as_json else str(data)

    def _show_data(self, command: str, as_json: bool) -> Any:
        device, config, facts = self.device, self.device.running, self.device.facts()
        model, version = device.model, device.version
        current = device.sessions.get(self.session) if self.session else None
        match command.split(" "):
            case ["show", "version"]:
                if as_json:
                    return show.version_json(model, version, facts)
                return show.version_text(model, version, facts)
            case ["show", "hostname"]:
                data = {"hostname": config.hostname, "fqdn": config.hostname}
                return (
                    data if as_json else f"Hostname: {config.hostname}\nFQDN:     {config.hostname}"
                )
            case ["show", "running-config"]:
                return self._config_text(config, as_json)
            case ["show", "startup-config"] if not as_json:
                return device.text(device.startup).replace(
                    "show running-config", "show startup-config"
                )
            case ["show", "interfaces"]:
                if as_json:
                    return show.interfaces_json(config, facts)
                return show.interfaces_text(config, facts)
            case ["show", ("ip" | "ipv6") as family, "bgp", "summary"] | [
                "show",
                "bgp",
                ("ipv4" | "ipv6") as family,
                "unicast",
                "summary",
            ]:
                number = 6 if family == "ipv6" else 4
                if as_json:
                    return show_bgp.bgp_summary_json(config, facts, number)
                return show_bgp.bgp_summary_text(config, facts, number)
            case ["show", "ip", "bgp", "neighbors"]:
                return (
                    show_bgp.bgp_neighbors_json(config)
                    if as_json
                    else show_bgp.bgp_neighbors_text(config)
                )
            case ["show", "bgp", "neighbors", "vrf", "all"] | [
                "show",
                "ip",
                "bgp",
                "neighbors",
                "vrf",
                "all",
            ] if as_json:
                return show_bgp.bgp_neighbors_vrfs_json(config, facts)
            case ["show", "lldp", "neighbors", "detail"] if as_json:
                return show.lldp_json(config, device.spec.lldp, facts)
            case ["show", "lldp", "neighbors"] if not as_json:
                return show.lldp_text(device.spec.lldp)
            case ["show", "boot-config"] if not as_json:
                return show.boot_config_text(device.startup.boot_image)
            case ["show", "configuration", "sessions", *detail] if detail in ([], ["detail"]):
                return sessions_json(device) if as_json else sessions_text(device)
            case ["show", "session-config", "diffs"] if current is not None and not as_json:
                return self._diff(current.config, current.name)
            case ["show", "session-config"] if current is not None:
                return self._config_text(current.config, as_json)
            case ["show", "session-config", "named", name, *rest] if name in device.sessions:
                staged = device.sessions[name].config
                if rest == ["diffs"] and not as_json:
                    return self._diff(staged, name)
                if not rest:
                    return self._config_text(staged, as_json)
            case ["show", "session-config", "named", name, *_]:
                raise CliError(f"% Session {name} does not exist")
        raise invalid()

    def _config_text(self, config: EosConfig, as_json: bool) -> Any:
        text = self.device.text(config)
        return render.config_tree(text) if as_json else text

    def _diff(self, staged: EosConfig, name: str) -> str:
        device = self.device
        return render.session_diff(
            device.text(device.running), device.text(staged), name, device.profile.diff_hunks
        )

    # -- configuration mode ---------------------------------------------------

    def _config(self, text: str) -> Reply:
        if text == "end":
            self.configuring, self.context = False, GLOBAL
            return Reply()
        if text == "exit":
            parent = self.context.parent
            if parent is None:
                self.configuring = False
            self.context = parent or GLOBAL
            return Reply()
        if text.startswith("show "):
            return Reply(self._show(text))
        if self.session is not None:
            reply = self._session_command(self.session, text)
            if reply is not None:
                return reply
        grammar = self.device.grammar
        if self.session is not None:
            session = self.device.sessions.get(self.session)
            if session is None or session.status != PENDING:
                name = self.session
                self._leave()
                raise CliError(f"% Session {name} is no longer pending")
            staged = session.config.clone()
            try:
                if self.device.fault.rejects(text):
                    raise invalid(f"rejected: {text}")
                self.context, notice = apply_line(staged, self.context, text, grammar)
            except CliError:
                session.errors += 1
                raise
            session.config = staged
            return Reply(notice)
        if self.device.fault.rejects(text):
            raise invalid(f"rejected: {text}")
        working = self.device.running.clone()
        self.context, notice = apply_line(working, self.context, text, grammar)
        if working != self.device.running:
            self.device.replace_running(working)
        return Reply(notice)

    def _session_command(self, name: str, text: str) -> Reply | None:
        if text == "abort":
            self.device.abort(name)
            self._leave()
            return Reply()
        if text == "commit":
            return self._commit(lambda: self.device.commit(name), leave=True)
        match text.split(" "):
            case ["commit", "timer", value]:
                total = _timer_seconds(value)
                return self._commit(lambda: self.device.commit_with_timer(name, total), leave=True)
            case ["commit", "timer"]:
                raise CliError("% Incomplete command")
        return None

    def _leave(self) -> None:
        self.configuring, self.session, self.context = False, None, GLOBAL


def _timer_seconds(value: str) -> int:
    """Seconds of a ``commit timer HH:MM:SS`` argument."""
    match = _TIMER.match(value)
    if match is None:
        raise invalid("timer must be HH:MM:SS")
    hours, minutes, seconds = (int(g) for g in match.groups())
    total = hours * 3600 + minutes * 60 + seconds
    if total == 0:
        raise invalid("timer must be positive")
    return total

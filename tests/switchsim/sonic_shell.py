"""One SONiC bash session or exec request: the commands a config_db-patch driver uses.

The prompt is ``USER@HOSTNAME:~$``.  ``echo $?`` prints the previous
command's exit status.  An SSH exec request (``ssh switch 'COMMAND'``) runs
one command line (``;``, ``&&`` and ``||`` lists allowed) and answers with
separate stdout and stderr and the exit status; ``cat > /tmp/NAME`` (or
``tee``) then stores the request's stdin.  Named profiles print
``show version``, ``show runningconfiguration all`` (``bgpraw``, namespaces),
``show lldp table`` and ``docker exec lldp lldpctl -f json`` as their
release does, and run ``config apply-patch`` through `sonic_apply`; refusals
go to stderr as click prints them (``Usage: ...`` / ``Error: ...``, status 2).
A patch reaches the switch as exactly
``echo BASE64 | base64 -d > /tmp/NAME.json``; commit-confirm is emulated
with ``sudo systemd-run --unit=NAME --on-active=SECONDS config rollback
CHECKPOINT`` and cancelled with ``sudo systemctl stop NAME.timer``.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass

from .replies import Action, Reply
from .sonic_apply import PatchRefused
from .sonic_device import LEGACY_PLATFORM, SonicDevice, SonicError, legacy_asic_type
from .sonic_gcu import has_apply_patch
from .sonic_show import lldp_table, lldpctl_json, show_version

_WRITE_FILE = re.compile(
    r"""^echo\s+(['"]?)([A-Za-z0-9+/=]+)\1\s*\|\s*base64\s+(?:-d|--decode)\s*>\s*(/tmp/[A-Za-z0-9_.-]+)$"""
)
_UNIT = re.compile(r"^[A-Za-z0-9_.@-]{1,64}$")
_ROOT_ONLY = ("config", "systemd-run", "systemctl", "sonic-installer", "reboot")
_CONFIG_BIN = ("config", "/usr/local/bin/config")
_STDIN_FILE = re.compile(r"^(?:sudo\s+)?(?:cat\s*>\s*|tee\s+)(/tmp/[A-Za-z0-9_.-]+)$")
_LLDPCTL = re.compile(r"^(?:sudo\s+)?docker\s+exec\s+(?:-i\s+)?lldp\s+lldpctl\s+-f\s+(json0?)$")


@dataclass(frozen=True)
class Outcome:
    """One command's stdout, stderr, exit status and what the session does next."""

    out: str = ""
    err: str = ""
    status: int = 0
    action: Action = Action.PROMPT
    delay: float = 0.0

    @property
    def text(self) -> str:
        """What a terminal shows: stdout, then stderr."""
        return "\n".join(part for part in (self.out, self.err) if part)


def split_list(text: str) -> list[tuple[str, str]]:
    """Split a bash list at ``;``, ``&&``, ``||`` outside quotes: (operator before, command)."""
    parts: list[tuple[str, str]] = []
    quote, start, op, i = "", 0, ";", 0
    while i < len(text):
        char = text[i]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif text.startswith(("&&", "||"), i) or char == ";":
            parts.append((op, text[start:i].strip()))
            op = ";" if char == ";" else text[i : i + 2]
            i += 1 if char == ";" else 2
            start = i
            continue
        i += 1
    parts.append((op, text[start:].strip()))
    return [(o, c) for o, c in parts if c]


class SonicShell:
    """State of one interactive SONiC login shell."""

    def __init__(self, device: SonicDevice, username: str) -> None:
        self.device = device
        self.username = username
        self.status = 0
        self.echo = True

    @property
    def prompt(self) -> str:
        """The bash prompt."""
        return f"{self.username}@{self.device.hostname}:~$ "

    def greeting(self) -> str:
        """Login banner."""
        return "Linux sonic 6.1.0-22-2-amd64 #1 SMP Debian x86_64\n\nYou are on SONiC\n\n"

    def execute(self, line: str) -> Reply:
        """Run one interactive command line."""
        text = line.strip()
        if not text:
            return Reply()
        if text in ("exit", "logout"):
            return Reply(action=Action.CLOSE)
        outcome = self.run(text)
        return Reply(outcome.text, outcome.action, outcome.delay)

    def wants_stdin(self, command: str) -> bool:
        """Whether an exec request of `command` reads its stdin (``cat > /tmp/NAME``)."""
        return _STDIN_FILE.match(command.strip()) is not None

    def run(self, text: str, stdin: bytes | None = None) -> Outcome:
        """Run a command line (a bash list) and return its combined outcome."""
        out: list[str] = []
        err: list[str] = []
        delay = 0.0
        for op, command in split_list(text):
            if (op == "&&" and self.status != 0) or (op == "||" and self.status == 0):
                continue
            one = self._one(command, stdin)
            out += [one.out] if one.out else []
            err += [one.err] if one.err else []
            delay += one.delay
            if one.action is not Action.PROMPT:
                return Outcome("\n".join(out), "\n".join(err), self.status, one.action, delay)
        return Outcome("\n".join(out), "\n".join(err), self.status, Action.PROMPT, delay)

    def _one(self, text: str, stdin: bytes | None) -> Outcome:
        if text == "echo $?":
            return self._done(str(self.status))
        try:
            piped = _STDIN_FILE.match(text)
            if piped is not None:
                self.device.write_file(piped.group(1), stdin or b"")
                return self._done("")
            match = _WRITE_FILE.match(text)
            if match is not None:
                return self._write_file(match.group(2), match.group(3))
            return self._command(text)
        except SonicError as exc:
            return self._done(f"Error: {exc}", 1)

    def _command(self, text: str) -> Outcome:
        try:
            words = shlex.split(text)
        except ValueError as exc:
            return self._done(f"-bash: syntax error: {exc}", 2)
        if not words:
            return self._done("")
        sudo = words[0] == "sudo"
        if sudo:
            words = words[1:] or ["sudo"]
        if words[0] in _ROOT_ONLY and not sudo and self.username != "root":
            return self._done("Root privileges are required for this operation", 1)
        return self._dispatch(words)

    def _done(self, text: str, status: int = 0, action: Action = Action.PROMPT) -> Outcome:
        """A finished command: output on stdout, or on stderr when it failed."""
        self.status = status
        if status == 0:
            return Outcome(out=text, status=status, action=action)
        return Outcome(err=text, status=status, action=action)

    def _fail(self, out: str, err: str, status: int) -> Outcome:
        self.status = status
        return Outcome(out=out, err=err, status=status)

    def _write_file(self, payload: str, path: str) -> Outcome:
        try:
            data = base64.b64decode(payload, validate=True)
        except binascii.Error:
            return self._done("base64: invalid input", 1)
        self.device.write_file(path, data)
        return self._done("")

    def _dispatch(self, words: list[str]) -> Outcome:
        match words:
            case ["show", "version"]:
                return self._done(self._version())
            case ["show", "runningconfiguration", "all"]:
                shown = self.device.shown_running()
                return self._done(json.dumps(shown, indent=4, sort_keys=not self._strict))
            case ["show", "lldp", "table"]:
                return self._done(lldp_table(list(self.device.spec.lldp)))
            case ["docker", "exec", *rest] if _LLDPCTL.match(" ".join(words)):
                collapse = rest[-1] == "json"
                return self._done(lldpctl_json(list(self.device.spec.lldp), collapse))
            case ["echo", *rest]:
                return self._done(" ".join(rest))
            case ["cat", path]:
                if path in self.device.files:
                    return self._done(self.device.files[path].decode(errors="replace"))
                shipped = self.device.platform_file(path)
                if shipped is None:
                    return self._done(f"cat: {path}: No such file or directory", 1)
                return self._done(shipped)
            case ["rm", "-f", path]:
                self.device.files.pop(path, None)
                return self._done("")
            case [binary, *rest] if binary in _CONFIG_BIN:
                return self._config(rest)
            case ["systemd-run", *rest]:
                return self._systemd_run(rest)
            case ["systemctl", "stop", unit]:
                name = unit.removesuffix(".timer")
                if unit.endswith(".timer") and self.device.stop_timer(name):
                    return self._done("")
                return self._done(f"Failed to stop {unit}: Unit {unit} not loaded.", 5)
            case ["sonic-installer", "install", "-y", image]:
                installed = self.device.install(image)
                return self._done(
                    f"Downloading image...\nInstalling image {installed}"
                    " and setting it as default...\nDone"
                )
            case ["sonic-installer", "list"]:
                return self._done(
                    f"Current: SONiC-OS-{self.device.nos_version}\nNext: {self.device.boot_image}"
                )
            case ["reboot"]:
                return self._done("", action=Action.REBOOT)
        return self._done(f"-bash: {words[0]}: command not found", 127)

    @property
    def _strict(self) -> bool:
        return self.device.profile.strict

    def _version(self) -> str:
        if self._strict:
            profile = self.device.running_profile
            asics = max(1, len(profile.namespaces))
            return show_version(profile, self.device.nos_version, self.device.facts(), asics)
        facts, state = self.device.facts(), self.device.state_view()
        return "\n".join(
            [
                f"SONiC Software Version: SONiC.{self.device.nos_version}",
                "SONiC OS Version: 12",
                "Distribution: Debian 12.5",
                "Kernel: 6.1.0-22-2-amd64",
                f"Build commit: {facts.serial.lower()}",
                "Built by: sonicbld@sonic-build",
                "",
                f"Platform: {LEGACY_PLATFORM}",
                f"HwSKU: {state.model}",
                f"ASIC: {legacy_asic_type(state.model)}",
                "ASIC Count: 1",
                f"Serial Number: {facts.serial}",
                f"Uptime: up {int((facts.now - facts.boot_time) // 60)} min",
            ]
        )

    def _commit(self, apply: Callable[[], None], text: str) -> Outcome:
        fault = self.device.fault
        if fault.drop_before_commit:
            return Outcome(action=Action.DROP)
        apply()
        if fault.drop_mid_commit:
            return Outcome(action=Action.DROP)
        self.status = 0
        return Outcome(text, delay=fault.hang_commit)

    def _config(self, args: list[str]) -> Outcome:
        device = self.device
        if args[:1] in (["apply-patch"], ["checkpoint"], ["rollback"]) and not has_apply_patch(
            device.profile
        ):
            return self._done(
                f"Usage: config [OPTIONS] COMMAND [ARGS]...\nError: No such command '{args[0]}'.", 2
            )
        match args:
            case ["apply-patch", *options, path] if set(options) <= {
                "-d",
                "--dry-run",
                "-v",
                "--verbose",
            }:
                return self._apply_patch(path, dry_run=bool({"-d", "--dry-run"} & set(options)))
            case ["checkpoint", name]:
                device.checkpoint(name)
                return self._done(
                    _rollbacker("checkpoint", name) + "\nCheckpoint created successfully."
                )
            case ["rollback", name]:
                if name not in device.checkpoints:
                    raise SonicError(
                        f"Failed to rollback config due to: Checkpoint '{name}' does not exist"
                    )
                return self._commit(
                    lambda: device.rollback(name),
                    _rollbacker("rollbacking", name) + "\nConfig rolled back successfully.",
                )
            case ["list-checkpoints"]:
                return self._done(json.dumps(sorted(device.checkpoints), indent=4))
            case ["delete-checkpoint", name]:
                if device.checkpoints.pop(name, None) is None:
                    raise SonicError(f"Checkpoint '{name}' does not exist")
                device.save()
                return self._done("Checkpoint deleted successfully.")
            case ["save", "-y"]:
                device.save_config()
                return self._done(
                    "Running command: /usr/local/bin/sonic-cfggen -d --print-data"
                    " > /etc/sonic/config_db.json"
                )
            case ["reload", "-y"]:
                return self._commit(
                    device.reload_config,
                    "Running command: /usr/local/bin/sonic-cfggen"
                    " -j /etc/sonic/config_db.json --write-to-db",
                )
        return self._done(
            "Usage: config [OPTIONS] COMMAND [ARGS]...\nError: No such command or bad arguments.", 2
        )

    def _apply_patch(self, path: str, dry_run: bool) -> Outcome:
        device = self.device
        if self._strict:
            return self._apply_patch_strict(path, dry_run)
        if path not in device.files:
            return self._done(
                f"Error: Invalid value for 'PATCH_FILE_PATH': Path '{path}' does not exist.", 2
            )
        try:
            patch = json.loads(device.files[path])
        except ValueError as exc:
            raise SonicError(f"Failed to apply patch due to: {exc}") from exc
        for op in patch if isinstance(patch, list) else []:
            described = (
                f"{op.get('op')} {op.get('path')} {json.dumps(op.get('value'))}"
                if isinstance(op, dict)
                else ""
            )
            if device.fault.rejects(described):
                raise SonicError(f"Failed to apply patch due to: % Invalid input: {described}")
        try:
            candidate = device.patched(patch)
        except SonicError as exc:
            raise SonicError(f"Failed to apply patch due to: {exc}") from exc
        log = [
            "Patch Applier: localhost: Patch application starting.",
            f"Patch Applier: localhost: Patch: {json.dumps(patch)}",
        ]
        if dry_run:
            return self._done(
                "\n".join(
                    [
                        *log,
                        "Patch Applier: localhost: Dry run: nothing applied.",
                        "Patch applied successfully.",
                    ]
                )
            )
        log += [
            "Patch Applier: localhost: Patch application completed.",
            "Patch applied successfully.",
        ]
        return self._commit(lambda: device.replace_running(candidate), "\n".join(log))

    def _usage_error(self, command: str, message: str) -> str:
        """click's UsageError text (click 7 quotes the help hint with ", click 8 with ')."""
        quote = "'" if self.device.profile.click8 else '"'
        argument = "PATCH_FILE_PATH" if command == "apply-patch" else "CHECKPOINT_NAME"
        return (
            f"Usage: config {command} [OPTIONS] {argument}\n"
            f"Try {quote}config {command} -h{quote} for help.\n\nError: {message}"
        )

    def _apply_patch_strict(self, path: str, dry_run: bool) -> Outcome:
        device = self.device
        new = device.profile.release >= "202405"
        banner = ["** DRY RUN EXECUTION **"] if dry_run else []
        if path not in device.files:
            return self._fail(
                "\n".join(banner),
                f"Usage: config apply-patch [OPTIONS] PATCH_FILE_PATH\n\nError: [Errno 2]"
                f" No such file or directory: '{path}'",
                2,
            )
        try:
            patch = json.loads(device.files[path])
            for op in patch if isinstance(patch, list) else []:
                described = (
                    f"{op.get('op')} {op.get('path')} {json.dumps(op.get('value'))}"
                    if isinstance(op, dict)
                    else ""
                )
                if device.fault.rejects(described):
                    raise PatchRefused([], f"% Invalid input: {described}")
            result = device.apply_patch_strict(patch)
        except (ValueError, PatchRefused) as exc:
            log = exc.log if isinstance(exc, PatchRefused) else []
            message = exc.message if isinstance(exc, PatchRefused) else str(exc)
            head = f"Failed to apply patch due to: {message}" if new else "Failed to apply patch"
            return self._fail(
                "\n".join([*banner, *log]),
                head + "\n" + self._usage_error("apply-patch", message),
                2,
            )
        text = "\n".join([*banner, *result.log, "Patch applied successfully."])
        if dry_run:
            return self._done(text)
        return self._commit(lambda: device.replace_running(result.running), text)

    def _systemd_run(self, args: list[str]) -> Outcome:
        options = {
            a.split("=", 1)[0]: a.split("=", 1)[1] for a in args if a.startswith("--") and "=" in a
        }
        command = [a for a in args if not a.startswith("--")]
        unit, delay = options.get("--unit", ""), options.get("--on-active", "").removesuffix("s")
        if not _UNIT.match(unit) or not delay.isdigit() or int(delay) == 0:
            return self._done("systemd-run: needs --unit=NAME and --on-active=SECONDS", 1)
        if len(command) != 3 or command[0] not in _CONFIG_BIN or command[1] != "rollback":
            return self._done(
                "systemd-run: only 'config rollback CHECKPOINT' can be scheduled here", 1
            )
        self.device.start_timer(unit, float(delay), command[2])
        return self._done(
            f"Running timer as unit: {unit}.timer\nWill run service as unit: {unit}.service"
        )


def _rollbacker(action: str, name: str) -> str:
    return "\n".join(
        [
            f"Config Rollbacker: Config {action} starting.",
            f"Config Rollbacker: Checkpoint name: {name}.",
            f"Config Rollbacker: Config {action} completed.",
        ]
    )

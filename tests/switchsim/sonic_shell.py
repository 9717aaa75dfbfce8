"""One SONiC bash session: the handful of commands a config_db-patch driver uses.

The prompt is ``USER@HOSTNAME:~$``.  ``echo $?`` prints the previous
command's exit status.  A patch reaches the switch as exactly
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

from .replies import Action, Reply
from .sonic_device import SonicDevice, SonicError

_WRITE_FILE = re.compile(
    r"""^echo\s+(['"]?)([A-Za-z0-9+/=]+)\1\s*\|\s*base64\s+(?:-d|--decode)\s*>\s*(/tmp/[A-Za-z0-9_.-]+)$"""
)
_UNIT = re.compile(r"^[A-Za-z0-9_.@-]{1,64}$")
_ROOT_ONLY = ("config", "systemd-run", "systemctl", "sonic-installer", "reboot")
_CONFIG_BIN = ("config", "/usr/local/bin/config")


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
        """Run one command line."""
        text = line.strip()
        if not text:
            return Reply()
        if text in ("exit", "logout"):
            return Reply(action=Action.CLOSE)
        if text == "echo $?":
            return self._done(str(self.status))
        try:
            match = _WRITE_FILE.match(text)
            if match is not None:
                return self._write_file(match.group(2), match.group(3))
            return self._command(text)
        except SonicError as exc:
            return self._done(f"Error: {exc}", 1)

    def _command(self, text: str) -> Reply:
        try:
            words = shlex.split(text)
        except ValueError as exc:
            return self._done(f"-bash: syntax error: {exc}", 2)
        sudo = words[0] == "sudo"
        if sudo:
            words = words[1:] or ["sudo"]
        if words[0] in _ROOT_ONLY and not sudo and self.username != "root":
            return self._done("Root privileges are required for this operation", 1)
        return self._dispatch(words)

    def _done(self, text: str, status: int = 0, action: Action = Action.PROMPT) -> Reply:
        self.status = status
        return Reply(text, action)

    def _write_file(self, payload: str, path: str) -> Reply:
        try:
            data = base64.b64decode(payload, validate=True)
        except binascii.Error:
            return self._done("base64: invalid input", 1)
        self.device.write_file(path, data)
        return self._done("")

    def _dispatch(self, words: list[str]) -> Reply:
        match words:
            case ["show", "version"]:
                return self._done(self._version())
            case ["show", "runningconfiguration", "all"]:
                return self._done(json.dumps(self.device.running, indent=4, sort_keys=True))
            case ["echo", *rest]:
                return self._done(" ".join(rest))
            case ["cat", path]:
                if path not in self.device.files:
                    return self._done(f"cat: {path}: No such file or directory", 1)
                return self._done(self.device.files[path].decode(errors="replace"))
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

    def _version(self) -> str:
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
                "Platform: x86_64-generic-r0",
                f"HwSKU: {state.model}",
                "ASIC: broadcom",
                "ASIC Count: 1",
                f"Serial Number: {facts.serial}",
                f"Uptime: up {int((facts.now - facts.boot_time) // 60)} min",
            ]
        )

    def _commit(self, apply: Callable[[], None], text: str) -> Reply:
        fault = self.device.fault
        if fault.drop_before_commit:
            return Reply(action=Action.DROP)
        apply()
        if fault.drop_mid_commit:
            return Reply(action=Action.DROP)
        self.status = 0
        return Reply(text, delay=fault.hang_commit)

    def _config(self, args: list[str]) -> Reply:
        device = self.device
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

    def _apply_patch(self, path: str, dry_run: bool) -> Reply:
        device = self.device
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

    def _systemd_run(self, args: list[str]) -> Reply:
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

"""How the SSH switch drivers reach devices (pure): the options of a ``drivers:`` rule
in ``plumb.yaml``, credentials and the known_hosts file.

Credentials never come from YAML. They are read from environment variables whose
*names* the rule may set (``username_env`` / ``password_env`` / ``secret_env``,
default ``PLUMB_SWITCH_USERNAME`` / ``PLUMB_SWITCH_PASSWORD`` /
``PLUMB_SWITCH_ENABLE_SECRET``), or from a JSON file given by ``credentials_file``
(``{"username": ..., "password": ..., "enable_secret": ...}``) that must lie
outside the fleet repo and be readable by its owner only. Host keys are checked
against ``known_hosts`` (default ``~/.ssh/known_hosts``); ``ssh_strict`` (default
true) refuses unknown and changed keys alike.

Times (``connect_timeout``, ``command_timeout``, ``commit_timeout``,
``reload_timeout``, ``reload_poll``) are seconds: an integer or decimal text.
Bad options raise ``ValueError``; the driver factory reports them as a target error.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

OptionValue = str | int | bool

_DEFAULTS: dict[str, OptionValue] = {
    "known_hosts": "~/.ssh/known_hosts",
    "ssh_strict": True,
    "username_env": "PLUMB_SWITCH_USERNAME",
    "password_env": "PLUMB_SWITCH_PASSWORD",
    "secret_env": "PLUMB_SWITCH_ENABLE_SECRET",
    "credentials_file": "",
    "connect_timeout": 10,
    "command_timeout": 30,
    "commit_timeout": 120,
    "reload_timeout": 900,
    "reload_poll": 5,
    "session_log_dir": "",
    "persist": True,
    "image": "",
    "mgmt_map": "",  # read by reconciler.targets, not by the driver
}


@dataclass(frozen=True)
class Credentials:
    """Login for one rule's devices; ``repr`` never shows the secrets."""

    username: str
    password: str = field(repr=False)
    secret: str = field(default="", repr=False)

    def secrets(self) -> tuple[str, ...]:
        """Every secret value, for scrubbing messages and logs."""
        return tuple(s for s in (self.password, self.secret) if s)


@dataclass(frozen=True)
class SwitchOptions:
    """A rule's options, typed; times in seconds."""

    known_hosts: Path
    ssh_strict: bool
    connect_timeout: float
    command_timeout: float
    commit_timeout: float
    reload_timeout: float
    reload_poll: float
    session_log_dir: Path | None
    persist: bool
    image: str


def _seconds(name: str, value: OptionValue) -> float:
    """Times are whole seconds, or decimal text such as ``"0.5"``."""
    number: float | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str) and re.fullmatch(r"[0-9]{1,6}(?:\.[0-9]{1,3})?", value):
        number = float(value)
    if number is None or number <= 0:
        raise ValueError(f"driver option {name} must be a positive number of seconds")
    return number


def _typed(options: Mapping[str, OptionValue], name: str, kind: type) -> OptionValue:
    value = options.get(name, _DEFAULTS[name])
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"driver option {name} must be {kind.__name__}")
    return value


def _path(text: str) -> Path:
    return Path(os.path.expanduser(text))


def parse_options(options: Mapping[str, OptionValue], *, default_image: str = "") -> SwitchOptions:
    """Typed options; unknown names are refused (a typo must not pass silently)."""
    unknown = sorted(set(options) - set(_DEFAULTS))
    if unknown:
        raise ValueError(f"unknown driver option(s) {unknown}; known: {sorted(_DEFAULTS)}")
    log_dir = str(_typed(options, "session_log_dir", str))
    return SwitchOptions(
        known_hosts=_path(str(_typed(options, "known_hosts", str))),
        ssh_strict=bool(_typed(options, "ssh_strict", bool)),
        connect_timeout=_seconds(
            "connect_timeout", options.get("connect_timeout", _DEFAULTS["connect_timeout"])
        ),
        command_timeout=_seconds(
            "command_timeout", options.get("command_timeout", _DEFAULTS["command_timeout"])
        ),
        commit_timeout=_seconds(
            "commit_timeout", options.get("commit_timeout", _DEFAULTS["commit_timeout"])
        ),
        reload_timeout=_seconds(
            "reload_timeout", options.get("reload_timeout", _DEFAULTS["reload_timeout"])
        ),
        reload_poll=_seconds("reload_poll", options.get("reload_poll", _DEFAULTS["reload_poll"])),
        session_log_dir=_path(log_dir) if log_dir else None,
        persist=bool(_typed(options, "persist", bool)),
        image=str(options.get("image", default_image)),
    )


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def read_credentials_file(path: Path, repo: Path) -> Credentials:
    """Credentials from a JSON file outside ``repo``, private to its owner."""
    if not path.is_absolute():
        raise ValueError("credentials_file must be an absolute path (or start with ~)")
    resolved = path.resolve()
    if _inside(resolved, repo.resolve()):
        raise ValueError(
            f"credentials_file {path} is inside the fleet repo; keep credentials out of git"
        )
    try:
        info = resolved.stat()
    except OSError as exc:
        raise ValueError(f"credentials_file {path}: cannot read ({exc.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"credentials_file {path} is not a regular file")
    if info.st_mode & 0o077:
        raise ValueError(
            f"credentials_file {path} is readable by group or others "
            f"(mode {stat.S_IMODE(info.st_mode):o}); chmod 600 it"
        )
    try:
        data = json.loads(resolved.read_text())
    except ValueError:
        raise ValueError(f"credentials_file {path} is not valid JSON") from None
    if not isinstance(data, dict) or not all(
        isinstance(data.get(k, ""), str) for k in ("username", "password", "enable_secret")
    ):
        raise ValueError(f"credentials_file {path}: expected string username/password")
    if not data.get("username") or not data.get("password"):
        raise ValueError(f"credentials_file {path}: username and password are required")
    return Credentials(data["username"], data["password"], data.get("enable_secret", ""))


def load_credentials(
    options: Mapping[str, OptionValue], repo: Path, environ: Mapping[str, str] | None = None
) -> Credentials:
    """From ``credentials_file`` if set, else from the named environment variables
    (``environ`` instead of the process's environment: tests), taken as they are."""
    from inventory.envsettings import named_secret

    file = str(_typed(options, "credentials_file", str))
    if file:
        return read_credentials_file(_path(file), repo)
    names = {
        k: str(_typed(options, k, str)) for k in ("username_env", "password_env", "secret_env")
    }
    found = {k: named_secret(name, environ, strip=False) for k, name in names.items()}
    missing = [names[k] for k in ("username_env", "password_env") if found[k] is None]
    if missing:
        raise ValueError(
            f"switch credentials: environment variable(s) {missing} not set "
            "(or set credentials_file)"
        )
    value = {k: secret.get_secret_value() if secret else "" for k, secret in found.items()}
    return Credentials(value["username_env"], value["password_env"], value["secret_env"])

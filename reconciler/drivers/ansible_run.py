"""One ansible-runner run of a shipped playbook, with artifacts hygiene.

ansible-runner writes ``artifacts/<ident>/command`` holding the whole environment the
child was given, stores every event under ``job_events/``, and appends to an existing
ident's artifacts. So each run here:

* gets a fresh ident (time + uuid4, checked against existing artifact dirs);
* gives ansible-playbook an environment built from scratch (PATH, locale, HOME,
  ``ANSIBLE_*`` settings this module chooses, and ``SSH_AUTH_SOCK`` for ssh keys):
  nothing from the caller's environment reaches the child, so no secret can be
  written by it; no ``envvars``/``extravars`` files are written (the runner's
  ``RunnerConfig`` is used directly, not ``ansible_runner.run``, which dumps them);
* keeps events in memory only (the event handler returns False, so none is stored);
* afterwards deletes the inventory file and everything in ``artifacts/<ident>/`` but
  ``status``, ``rc`` and ``stdout``, and keeps the last ``keep_runs`` runs.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inventory.extras import optional_imports

with optional_imports():
    from ansible_runner.config.runner import RunnerConfig
    from ansible_runner.runner import Runner

from reconciler.drivers.ansible_events import RunReport, collect

KEEP_ARTIFACTS = ("status", "rc", "stdout")
# Variables the runner itself sets for its callback plugin and event capture.
_RUNNER_KEYS = (
    "ANSIBLE_CALLBACK_PLUGINS",
    "ANSIBLE_STDOUT_CALLBACK",
    "ANSIBLE_RETRY_FILES_ENABLED",
    "ANSIBLE_CACHE_PLUGIN",
    "ANSIBLE_CACHE_PLUGIN_CONNECTION",
    "AWX_ISOLATED_DATA_DIR",
    "RUNNER_OMIT_EVENTS",
    "RUNNER_ONLY_FAILED_EVENTS",
)


@dataclass(frozen=True)
class RunRecord:
    """What one run was and how it ended (kept for tests, benchmarks and debugging)."""

    ident: str
    playbook: str
    hosts: tuple[str, ...]
    check: bool
    status: str
    rc: int | None
    seconds: float


@dataclass(frozen=True)
class RunResult:
    record: RunRecord
    report: RunReport
    error: Exception | None = None  # a runner exception (the run did not finish)


def new_ident(artifacts: Path) -> str:
    while True:
        ident = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:16]}"
        if not (artifacts / ident).exists():
            return ident


class PlaybookRunner:
    """Runs playbooks in one private data dir; safe to call from several threads."""

    def __init__(self, private_dir: Path, *, forks: int, run_timeout: int, keep_runs: int = 20):
        self.private_dir = private_dir
        self.forks = forks
        self.run_timeout = run_timeout
        self.keep_runs = keep_runs
        self.records: deque[RunRecord] = deque(maxlen=200)
        self._lock = threading.Lock()
        for sub in ("artifacts", "inventory", "home", "tmp/local", "tmp/remote"):
            (private_dir / sub).mkdir(parents=True, exist_ok=True, mode=0o700)
        self._config = private_dir / "ansible.cfg"
        self._config.write_text("# plumb: settings come from the environment\n")

    def environment(self) -> dict[str, str]:
        """The child's whole environment (besides the runner's own keys)."""
        base = self.private_dir
        env = {
            "PATH": os.pathsep.join(
                [os.path.dirname(sys.executable), "/usr/sbin:/usr/bin:/sbin:/bin"]
            ),
            "HOME": os.environ.get("HOME", str(base / "home")),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "ANSIBLE_CONFIG": str(self._config),
            "ANSIBLE_HOME": str(base / "home"),
            "ANSIBLE_LOCAL_TEMP": str(base / "tmp/local"),
            "ANSIBLE_REMOTE_TEMP": str(base / "tmp/remote"),
            "ANSIBLE_INVENTORY_ENABLED": "yaml",
            "ANSIBLE_HOST_KEY_CHECKING": "True",
            "ANSIBLE_PIPELINING": "True",
            "ANSIBLE_GATHERING": "explicit",
            "ANSIBLE_DEPRECATION_WARNINGS": "False",
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_COLLECTIONS_SCAN_SYS_PATH": "False",
        }
        if "SSH_AUTH_SOCK" in os.environ:
            env["SSH_AUTH_SOCK"] = os.environ["SSH_AUTH_SOCK"]
        return env

    def run(self, playbook: Path, inventory: Mapping[str, Any], *, check: bool) -> RunResult:
        """Run ``playbook`` over ``inventory``: with ``check``, ansible's check mode
        (``--check --diff``) and no task tagged ``write`` (check mode would skip them
        anyway); without, no task tagged ``check``."""
        artifacts = self.private_dir / "artifacts"
        with self._lock:
            ident = new_ident(artifacts)
            (artifacts / ident).mkdir(mode=0o700)
        hosts = tuple(inventory.get("all", {}).get("hosts", {}))
        inventory_file = self.private_dir / "inventory" / f"{ident}.json"
        inventory_file.write_text(json.dumps(inventory, sort_keys=True))
        inventory_file.chmod(0o600)
        events: list[Mapping[str, Any]] = []

        def keep_in_memory(event: Mapping[str, Any]) -> bool:
            events.append(event)
            return False  # False: the runner stores nothing under job_events/

        started = time.monotonic()
        status, rc, error = "unstarted", None, None
        try:
            env = self.environment()
            config = RunnerConfig(
                private_data_dir=str(self.private_dir),
                playbook=str(playbook),
                inventory=str(inventory_file),
                ident=ident,
                forks=self.forks,
                quiet=True,
                timeout=self.run_timeout,
                rotate_artifacts=self.keep_runs,
                suppress_env_files=True,
                envvars=env,
                cmdline="--check --diff --skip-tags write" if check else "--skip-tags check",
            )
            config.prepare()
            config.env = {k: v for k, v in config.env.items() if k in env or k in _RUNNER_KEYS}
            runner = Runner(config, event_handler=keep_in_memory)
            status, rc = runner.run()
        except Exception as exc:  # every runner exception is mapped per host by the caller
            error = exc
        finally:
            self._clean(ident, inventory_file)
        record = RunRecord(
            ident, playbook.name, hosts, check, str(status), rc, time.monotonic() - started
        )
        with self._lock:
            self.records.append(record)
        return RunResult(record, collect(events), error)

    def _clean(self, ident: str, inventory_file: Path) -> None:
        inventory_file.unlink(missing_ok=True)
        shutil.rmtree(self.private_dir / "env", ignore_errors=True)
        run_dir = self.private_dir / "artifacts" / ident
        if not run_dir.is_dir():
            return
        for entry in run_dir.iterdir():
            if entry.name in KEEP_ARTIFACTS:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)

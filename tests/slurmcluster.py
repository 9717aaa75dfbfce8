"""A real Slurm 22.05 cluster on this host for the drain tests: a private munged, one
slurmctld and one ``slurmd -N gpu-nXX`` per node, all on 127.0.0.1 with a port each,
8 GPUs per node as GRES on fake device files (character devices, as gres/gpu needs).

Pitfalls this handles: the daemons must run under the names ``slurmctld``/``slurmd``
(22.05 drops GRES otherwise), so they are started through symlinks with those names;
a slurmd that cannot bind its port never comes up, so every port is checked free
first; job processes outlive killed daemons, so jobs are cancelled before the stop.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import socket
import stat
import subprocess
import time
from pathlib import Path

DAEMONS = {
    "slurmctld": "/usr/sbin/slurmctld-wlm",
    "slurmd": "/usr/sbin/slurmd-wlm",
    "slurmstepd": "/usr/sbin/slurmstepd-wlm",
}
CLIENTS = ("scontrol", "sinfo", "squeue", "sbatch", "scancel", "munged", "mungekey")


def missing_pieces() -> list[str]:
    """What this host lacks to run the cluster (Debian: slurmctld slurmd slurm-client munge)."""
    missing = [p for p in DAEMONS.values() if not os.access(p, os.X_OK)]
    missing += [c for c in CLIENTS if shutil.which(c) is None]
    if os.geteuid() != 0:
        missing.append("root (the daemons and mknod)")
    return missing


def _free(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _pick_ports(nodes: int) -> int:
    for _ in range(50):
        base = random.randrange(20000, 60000 - nodes - 2)
        if all(_free(p) for p in range(base, base + nodes + 2)):
            return base
    raise RuntimeError("no free port range for the Slurm cluster")


class SlurmCluster:
    """Start with :meth:`start`, stop with :meth:`stop`; ``env`` holds ``SLURM_CONF``."""

    def __init__(self, root: Path, nodes: int = 32) -> None:
        self.root = root
        self.nodes = [f"gpu-n{i:02d}" for i in range(1, nodes + 1)]
        self.conf = root / "etc" / "slurm.conf"
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}
        self._procs: list[subprocess.Popen[bytes]] = []

    def run(self, *argv: str, check: bool = True) -> str:
        done = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=60)
        if check and done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: {done.stderr.strip()}")
        return done.stdout

    def _spawn(self, log: str, *argv: str) -> subprocess.Popen[bytes]:
        with open(self.root / "log" / log, "wb") as out:
            proc = subprocess.Popen(
                argv, env=self.env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        self._procs.append(proc)
        return proc

    def _write_config(self, base: int) -> None:
        r = self.root
        last = len(self.nodes)
        names = f"gpu-n[01-{last:02d}]"
        lines = [
            "ClusterName=plumbtest",
            "SlurmctldHost=localhost(127.0.0.1)",
            f"SlurmctldPort={base}",
            f"SlurmdPort={base + 1}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            f"AuthInfo=socket={r}/run/munge.sock",
            "CredType=cred/munge",
            f"StateSaveLocation={r}/state",
            f"SlurmdSpoolDir={r}/spool/%n",
            f"SlurmctldPidFile={r}/run/slurmctld.pid",
            f"SlurmdPidFile={r}/run/slurmd-%n.pid",
            f"SlurmctldLogFile={r}/log/slurmctld.log",
            f"SlurmdLogFile={r}/log/slurmd-%n.log",
            f"PlugStackConfig={r}/etc/plugstack.conf",
            "MailProg=/bin/true",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "MpiDefault=none",
            "SchedulerType=sched/backfill",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "SlurmdParameters=config_overrides",
            "ReturnToService=2",
            "SlurmdTimeout=60",
            "InactiveLimit=0",
            "KillWait=2",
            "MinJobAge=30",
            "GresTypes=gpu",
            f"NodeName={names} NodeAddr=127.0.0.1 Port=[{base + 2}-{base + 1 + last}] "
            "CPUs=8 RealMemory=1000 Gres=gpu:h100:8 State=UNKNOWN",
            "PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        ]
        (r / "etc" / "slurm.conf").write_text("\n".join(lines) + "\n")
        (r / "etc" / "gres.conf").write_text(
            f"AutoDetect=off\nNodeName={names} Name=gpu Type=h100 File={r}/dev/nvidia[0-7]\n"
        )
        (r / "etc" / "plugstack.conf").write_text("")
        (r / "etc" / "cgroup.conf").write_text("CgroupPlugin=cgroup/v1\n")

    def start(self) -> None:
        r = self.root
        for sub in ("bin", "etc", "run", "log", "state", "spool", "munge", "dev"):
            (r / sub).mkdir(parents=True, exist_ok=True)
        r.chmod(0o755)
        (r / "run").chmod(0o755)  # munged: the socket's folder must be o+x
        (r / "munge").chmod(0o700)
        for name, target in DAEMONS.items():
            (r / "bin" / name).symlink_to(target)
        for gpu in range(8):
            os.mknod(r / "dev" / f"nvidia{gpu}", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        key = r / "munge" / "munge.key"
        self.run("mungekey", "--create", f"--keyfile={key}", "--bits=1024")
        self._spawn(
            "munged.out",
            "munged",
            "-F",
            f"--key-file={key}",
            f"--socket={r}/run/munge.sock",
            f"--pid-file={r}/run/munged.pid",
            f"--log-file={r}/munge/munged.log",
            f"--seed-file={r}/munge/munged.seed",
        )
        self._write_config(_pick_ports(len(self.nodes)))
        ctld = self._spawn(
            "slurmctld.out", str(r / "bin" / "slurmctld"), "-D", "-f", str(self.conf)
        )
        self._until(lambda: "is UP" in self.run("scontrol", "ping", check=False), ctld, 30)
        for node in self.nodes:
            (r / "spool" / node).mkdir(exist_ok=True)
            self._spawn(
                f"slurmd-{node}.out",
                str(r / "bin" / "slurmd"),
                "-D",
                "-N",
                node,
                "-d",
                str(r / "bin" / "slurmstepd"),
                "-f",
                str(self.conf),
            )
        self._until(lambda: self.states().count("idle") == len(self.nodes), ctld, 60)

    def _until(self, ready: object, ctld: subprocess.Popen[bytes], seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not ready():  # type: ignore[operator]
            if ctld.poll() is not None:
                log = (self.root / "log" / "slurmctld.log").read_text(errors="replace")
                raise RuntimeError(f"slurmctld exited: {log[-800:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Slurm not ready in {seconds} s: {self.states()}")
            time.sleep(0.1)

    def states(self) -> list[str]:
        return self.run("sinfo", "-h", "-N", "-o", "%T", check=False).split()

    def node(self, name: str) -> str:
        """``scontrol -o show node NAME`` (the authoritative state)."""
        return self.run("scontrol", "-o", "show", "node", name)

    def submit(self, nodes: str, count: int, command: str = "sleep 300") -> int:
        """A batch job holding all 8 GPUs of ``count`` nodes from ``nodes``."""
        out = self.run(
            "sbatch",
            "--parsable",
            f"--nodelist={nodes}",
            f"--nodes={count}",
            "--gres=gpu:h100:8",
            "-o",
            "/dev/null",
            "--wrap",
            command,
        )
        return int(out.strip().split(";")[0])

    def wait_job(self, job: int, state: str, seconds: float = 30) -> None:
        deadline = time.monotonic() + seconds
        while (now := self.run("squeue", "-h", "-j", str(job), "-o", "%T", check=False)) != (
            state + "\n"
        ):
            if time.monotonic() > deadline:
                raise AssertionError(f"job {job}: wanted {state}, is {now.strip()!r}")
            time.sleep(0.1)

    def reset(self) -> None:
        """No jobs, every node back in service (between tests)."""
        if self._jobs():
            self.run("scancel", *self._jobs(), check=False)
        deadline = time.monotonic() + 30
        while self._jobs() and time.monotonic() < deadline:
            time.sleep(0.1)
        drained = [
            line.split()[0].removeprefix("NodeName=")
            for line in self.run("scontrol", "-o", "show", "node").splitlines()
            if "DRAIN" in line or "State=DOWN" in line
        ]
        if drained:
            self.run("scontrol", "update", "nodename=" + ",".join(drained), "state=resume")

    def _jobs(self) -> list[str]:
        return self.run("squeue", "-h", "-o", "%i", check=False).split()

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            jobs = self._jobs()
            if jobs:
                self.run("scancel", *jobs, check=False)
                deadline = time.monotonic() + 10
                while self._jobs() and time.monotonic() < deadline:
                    time.sleep(0.1)
        for proc in reversed(self._procs):
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
        for proc in self._procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._kill_leftover_job_processes()
        shutil.rmtree(self.root, ignore_errors=True)

    def _kill_leftover_job_processes(self) -> None:
        """Job processes that outlived their slurmstepd carry this cluster's SLURM_CONF
        and a SLURM_JOB_ID (this test process has the first only)."""
        mine = f"SLURM_CONF={self.conf}".encode()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                env = (entry / "environ").read_bytes().split(b"\0")
                cmd = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            stepd = cmd.startswith(b"slurmstepd")
            if mine in env and (stepd or any(v.startswith(b"SLURM_JOB_ID=") for v in env)):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(entry.name), signal.SIGKILL)

"""Switch driver benchmark: one MTU + QoS change on 64 simulated EOS switches, by plumb's
EOS driver and by ansible's ``arista.eos.eos_config``, against the same simulator.

    .venv/bin/python benchmarks/bench_switches.py [--switches 64] [--ports 32]
        [--concurrency 32] [--forks 32] [--skip-ansible]

Every switch starts with MTU 9216 and ECN Kmin 200 KB (queue 3) on all its ports; the
change is MTU 9214 and Kmin 180 KB on all ports. The simulator runs in a process of its
own (``python -m tests.switchsim serve``) and is restarted from the same initial state
between the two runs.

1. plumb: observe every switch (``observe_many``), diff against the desired state, then
   ``apply_plan`` (stage -> compare -> timed commit -> observe -> confirm, then the loop's
   verify observe) with the given concurrency; host keys checked against known_hosts.
2. ansible: ``ansible-playbook`` with one ``arista.eos.eos_config`` task (``src`` holding
   every port's lines; the module diffs against ``show running-config`` and commits in a
   configuration session) over ``ansible.netcommon.network_cli``, with the given forks.
   The ``ansible`` package (with its collections) and paramiko are installed on first
   use into a throwaway venv under ``$PLUMB_BENCH_CACHE`` (default
   ``~/.cache/plumb-bench``); host key checking is off for ansible.

Both results are verified from the simulator's own records. Printed: wall seconds per
tool, plumb's per-device apply time run alone, and the ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from inventory.problems import UNKNOWN  # noqa: E402
from reconciler.drivers.base import DeviceRef, Driver  # noqa: E402
from reconciler.drivers.netmiko_eos import EosDriver  # noqa: E402
from reconciler.drivers.switch_access import Credentials, parse_options  # noqa: E402
from reconciler.loop import apply_plan  # noqa: E402
from reconciler.order import Step  # noqa: E402
from reconciler.plan import DevicePlan, Plan  # noqa: E402
from reconciler.settings import Owned, diff  # noqa: E402
from reconciler.targets import Targets  # noqa: E402
from tests.switchsim import DeviceSpec, EcnQueue, default_state  # noqa: E402
from tests.switchsim_process import SimProcess, serve  # noqa: E402

USER, PASSWORD = "bench", "bench-pw"
ECN_LINE = (
    "random-detect ecn minimum-threshold {kmin} kbytes maximum-threshold 800 kbytes "
    "max-mark-probability 20"
)
PLAYBOOK = """- name: MTU and ECN on every port
  hosts: switches
  gather_facts: false
  tasks:
    - name: eos_config from one candidate
      arista.eos.eos_config:
        src: {src}
"""


def specs(count: int, ports: int) -> list[DeviceSpec]:
    out = []
    for index in range(1, count + 1):
        state = default_state(f"sw-{index}", "eos", ports=ports)
        for port in state.interfaces.values():
            port.mtu = 9216
            port.ecn[3] = EcnQueue(200, 800, 20)
        out.append(DeviceSpec(f"sw-{index}", "eos", USER, PASSWORD, initial=state))
    return out


def desired(ports: int) -> dict[str, Owned]:
    want: dict[str, Owned] = {
        f"interfaces/Ethernet{i}/mtu": Owned(9214, UNKNOWN) for i in range(1, ports + 1)
    }
    want["qos/ecn/3/kmin_kb"] = Owned(180, UNKNOWN)
    return want


def verify(sim: SimProcess, names: list[str], tool: str) -> None:
    wrong = []
    for name in names:
        state = sim.running(name)
        if any(p.mtu != 9214 or p.ecn[3].kmin_kb != 180 for p in state.interfaces.values()):
            wrong.append(name)
    if wrong:
        raise SystemExit(f"{tool}: {len(wrong)} switch(es) not changed: {wrong[:5]}")


class BenchTargets(Targets):
    """Targets without a fleet repo: every device is a simulated switch on loopback."""

    def __init__(self, driver: Driver, refs: dict[str, DeviceRef]) -> None:
        self.bench_driver, self.refs = driver, refs

    def ref(self, name: str) -> DeviceRef:
        return self.refs[name]

    def driver(self, name: str) -> Driver:
        return self.bench_driver

    def close(self) -> None:
        self.bench_driver.close()


def eos_driver(sim: SimProcess, work: Path) -> tuple[EosDriver, dict[str, DeviceRef]]:
    known = work / "known_hosts"
    known.write_text(sim.known_hosts())
    options = parse_options({"known_hosts": str(known), "commit_timeout": 60})
    refs = {n: DeviceRef(n, "eos", "leaf", sim.host, sim.port(n)) for n in sim.devices}
    return EosDriver(options, Credentials(USER, PASSWORD)), refs


def run_plumb(sim: SimProcess, work: Path, ports: int, concurrency: int) -> float:
    driver, refs = eos_driver(sim, work)
    want = desired(ports)
    started = time.perf_counter()
    observed = driver.observe_many(list(refs.values()), concurrency)
    changes = {}
    for name, state in observed.items():
        if not isinstance(state, dict):
            raise SystemExit(f"plumb: observe {name}: {state}")
        changes[name] = tuple(diff(want, state))
    plan = Plan({n: DevicePlan(n, c) for n, c in changes.items()}, (Step(1, "qos-mtu", changes),))
    report = apply_plan(
        plan, BenchTargets(driver, refs), dry_run=False, confirm_within=120, concurrency=concurrency
    )
    elapsed = time.perf_counter() - started
    driver.close()
    if not report.ok():
        bad = [r for r in report.results if r.error][:3]
        raise SystemExit(f"plumb: {report.by_outcome()} {bad}")
    return elapsed


def per_device(sim: SimProcess, work: Path, ports: int, samples: int) -> list[float]:
    """One device at a time: observe, diff, apply with commit-confirm, verify."""
    driver, refs = eos_driver(sim, work)
    want, times = desired(ports), []
    for ref in list(refs.values())[:samples]:
        started = time.perf_counter()
        changes = diff(want, driver.observe(ref))
        assert (
            driver.apply(ref, changes, dry_run=False, confirm_within=120).outcome.value == "applied"
        )
        assert diff(want, driver.observe(ref)) == []
        times.append(time.perf_counter() - started)
    driver.close()
    return times


def ansible_venv(cache: Path) -> Path:
    venv = cache / "ansible-venv"
    playbook = venv / "bin" / "ansible-playbook"
    if playbook.exists():
        return playbook
    print(f"installing ansible into {venv} (first run only) ...", flush=True)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "pip"), "install", "--quiet", "ansible", "paramiko"]
    subprocess.run(pip, check=True)
    print(f"  done in {time.perf_counter() - started:.0f} s", flush=True)
    return playbook


def run_ansible(sim: SimProcess, work: Path, playbook_bin: Path, ports: int, forks: int) -> float:
    lines = []
    for index in range(1, ports + 1):
        lines += [f"interface Ethernet{index}", "   mtu 9214", "   tx-queue 3"]
        lines.append("      " + ECN_LINE.format(kmin=180))
    (work / "candidate.cfg").write_text("\n".join(lines) + "\n")
    (work / "playbook.yml").write_text(PLAYBOOK.format(src=work / "candidate.cfg"))
    inventory = ["[switches]"]
    inventory += [f"{n} ansible_host={sim.host} ansible_port={sim.port(n)}" for n in sim.devices]
    inventory += [
        "[switches:vars]",
        "ansible_network_os=arista.eos.eos",
        "ansible_connection=ansible.netcommon.network_cli",
        f"ansible_user={USER}",
        f"ansible_password={PASSWORD}",
        "ansible_become=yes",
        "ansible_become_method=enable",
    ]
    (work / "inventory.ini").write_text("\n".join(inventory) + "\n")
    env = dict(os.environ)
    env.update(
        ANSIBLE_HOME=str(work / "ansible-home"),
        ANSIBLE_LOCAL_TEMP=str(work / "ansible-tmp"),
        ANSIBLE_HOST_KEY_CHECKING="False",
        ANSIBLE_DEPRECATION_WARNINGS="False",
        ANSIBLE_PERSISTENT_COMMAND_TIMEOUT="120",
    )
    command = [str(playbook_bin), "-i", str(work / "inventory.ini"), "--forks", str(forks)]
    started = time.perf_counter()
    done = subprocess.run(
        [*command, str(work / "playbook.yml")], env=env, capture_output=True, text=True
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"ansible-playbook failed:\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--switches", type=int, default=64)
    parser.add_argument("--ports", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--forks", type=int, default=32)
    parser.add_argument("--skip-ansible", action="store_true")
    args = parser.parse_args()
    cache = Path(os.environ.get("PLUMB_BENCH_CACHE", Path.home() / ".cache" / "plumb-bench"))
    playbook_bin = None if args.skip_ansible else ansible_venv(cache)
    devices = specs(args.switches, args.ports)
    names = [d.name for d in devices]
    print(f"{args.switches} EOS switches x {args.ports} ports: MTU 9216->9214, ECN Kmin 200->180")
    with tempfile.TemporaryDirectory(prefix="bench-switches-") as tmp:
        work = Path(tmp)
        with serve(work / "plumb-sim", devices) as sim:
            plumb = run_plumb(sim, work, args.ports, args.concurrency)
            verify(sim, names, "plumb")
        with serve(work / "single-sim", devices[:5]) as sim:
            single = per_device(sim, work, args.ports, 5)
        print(f"plumb   {plumb:7.1f} s  (concurrency {args.concurrency}; verified)")
        print(
            f"        per device alone: {statistics.median(single):.2f} s median "
            f"(observe + stage + compare + timed commit + confirm + verify)"
        )
        if playbook_bin is None:
            return
        with serve(work / "ansible-sim", devices) as sim:
            ansible = run_ansible(sim, work, playbook_bin, args.ports, args.forks)
            verify(sim, names, "ansible")
        print(f"ansible {ansible:7.1f} s  (arista.eos.eos_config, forks {args.forks}; verified)")
        print(f"ansible / plumb = {ansible / plumb:.1f}x")


if __name__ == "__main__":
    main()

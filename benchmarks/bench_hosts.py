"""Host driver benchmark: set MTU 1500 -> 9000 on eth0 of 50 namespace hosts.

    sudo .venv/bin/python benchmarks/bench_hosts.py [--hosts 50] [--forks 10]

1. plumb: the ansible driver's batch path (:meth:`AnsibleHostDriver.apply_many`, the
   same stage -> compare -> commit per device that the reconcile loop runs, joined into
   one ansible run per step), then the loop's verify observe for every host;
2. plain ansible: after resetting every MTU to 1500, one ``ansible-playbook`` run of a
   minimal playbook (``connection: local``, ``ip -n <ns> link set ...``, forks as
   given), once with ``raw`` tasks (what plumb's playbooks use) and once with
   ``command`` (a Python module per host).

Every result is checked with ``ip -n <ns> -j link show``. Printed: wall seconds, the
runs plumb made, and plumb's time over each plain run's.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reconciler.drivers.ansible_host import AnsibleHostDriver  # noqa: E402
from reconciler.drivers.ansible_inventory import HostOptions  # noqa: E402
from reconciler.drivers.base import DeviceRef, Outcome  # noqa: E402
from reconciler.settings import Change  # noqa: E402
from tests.netns import NetnsLab  # noqa: E402

PLAYBOOK = """- name: plain mtu
  hosts: all
  gather_facts: false
  tasks:
    - name: mtu
      ansible.builtin.{module}: ip -n {{{{ ns }}}} link set dev eth0 mtu 9000
"""


def check_all(lab: NetnsLab, names: list[str], mtu: int) -> None:
    wrong = [name for name in names if lab.mtu(name, "eth0") != mtu]
    if wrong:
        raise SystemExit(f"{len(wrong)} host(s) not at MTU {mtu}: {wrong[:5]}")


def run_plumb(lab: NetnsLab, names: list[str], work: Path, forks: int) -> tuple[float, int]:
    options = HostOptions.parse({"mode": "netns", "netns": f"{lab.prefix}{{name}}", "forks": forks})
    driver = AnsibleHostDriver(work / "state", options)
    refs = [DeviceRef(name, "linux", "gpu-node", "198.18.0.1") for name in names]
    requests = [(ref, [Change("nics/eth0/mtu", 1500, 9000)]) for ref in refs]
    started = time.perf_counter()
    results = driver.apply_many(requests, dry_run=False)
    for ref in refs:  # the reconcile loop's verify step (served by the commit read-back)
        assert driver.observe(ref)["nics/eth0/mtu"] == 9000
    elapsed = time.perf_counter() - started
    bad = {n: r for n, r in results.items() if getattr(r, "outcome", None) is not Outcome.applied}
    if bad:
        raise SystemExit(f"plumb: {len(bad)} host(s) not applied: {list(bad.items())[:3]}")
    for run in driver.runs:
        kind = "check " if run.check else "commit"
        print(f"  plumb run {kind} {len(run.hosts):3d} hosts {run.seconds:6.2f} s {run.status}")
    return elapsed, len(driver.runs)


def run_plain(lab: NetnsLab, names: list[str], work: Path, forks: int, module: str) -> float:
    playbook = work / f"plain-{module}.yml"
    playbook.write_text(PLAYBOOK.format(module=module))
    inventory = work / "plain.ini"
    inventory.write_text(
        "".join(
            f"{name} ansible_connection=local ns={lab.namespace(name)} "
            f"ansible_python_interpreter=/usr/bin/python3\n"
            for name in names
        )
    )
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": str(work),
        "LC_ALL": "C.UTF-8",
        "ANSIBLE_HOME": str(work / "ansible-home"),
        "ANSIBLE_LOCAL_TEMP": str(work / "tmp-local"),
        "ANSIBLE_REMOTE_TEMP": str(work / "tmp-remote"),
        "ANSIBLE_HOST_KEY_CHECKING": "False",
        "ANSIBLE_CONFIG": str(work / "ansible.cfg"),
    }
    (work / "ansible.cfg").write_text("[defaults]\n")
    started = time.perf_counter()
    subprocess.run(
        ["ansible-playbook", "-i", str(inventory), "-f", str(forks), str(playbook)],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", type=int, default=50)
    parser.add_argument("--forks", type=int, default=10)
    args = parser.parse_args()
    names = [f"node-{i:03d}" for i in range(args.hosts)]
    lab = NetnsLab()
    try:
        started = time.perf_counter()
        for name in names:
            lab.add_host(name, ["eth0"])
        print(f"{args.hosts} namespaces made in {time.perf_counter() - started:.2f} s")
        with tempfile.TemporaryDirectory(prefix="plumb-bench-hosts-") as tmp:
            work = Path(tmp)
            plumb_s, runs = run_plumb(lab, names, work, args.forks)
            check_all(lab, names, 9000)
            print(f"plumb apply_many + verify: {plumb_s:6.2f} s in {runs} ansible runs")
            for module in ("raw", "command"):
                for name in names:
                    lab.set_mtu(name, "eth0", 1500)
                plain_s = run_plain(lab, names, work, args.forks, module)
                check_all(lab, names, 9000)
                print(
                    f"plain ansible-playbook ({module:7s}): {plain_s:6.2f} s; "
                    f"plumb / plain = {plumb_s / plain_s:.2f}"
                )
    finally:
        lab.close()


if __name__ == "__main__":
    main()

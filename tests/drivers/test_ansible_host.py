"""The ansible host driver against real network namespaces: it reads and writes the
kernel for real, maps failures to plumb's errors, batches hosts into few runs and
leaves no environment or secret on disk.

One lab and one driver serve the module; each test works on its own hosts. Every
ansible run costs seconds, so each test makes as few as its behaviour needs.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.drivers.ansible_host import AnsibleHostDriver
from reconciler.drivers.ansible_inventory import SHIM, HostOptions, host_vars
from reconciler.drivers.base import DeviceRef, Outcome
from reconciler.drivers.hoststate import HostWrite
from reconciler.errors import ConfigRejected, DeviceUnreachable
from reconciler.settings import Change, Scalar
from tests.netns import NetnsLab, NetnsUnavailable

HOSTS = {
    "obs-a": ("eth0", "eth1"),
    "obs-b": ("eth0",),
    "dry": ("eth0",),
    "wet": ("eth0", "eth1"),
    "bad": ("eth0", "eth1"),
    "gone": ("eth0",),
    "batch-a": ("eth0",),
    "batch-b": ("eth0",),
}


def ref(name: str) -> DeviceRef:
    return DeviceRef(name, "linux", "gpu-node", "198.18.3.1")


def shim(state_dir: Path, *args: str) -> dict[str, object]:
    done = subprocess.run(
        ["/usr/bin/python3", str(SHIM), "--state-dir", str(state_dir), *args],
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, object] = json.loads(done.stdout)
    return found


@pytest.fixture(scope="module")
def lab() -> Iterator[NetnsLab]:
    try:
        made = NetnsLab()
    except NetnsUnavailable as exc:
        pytest.skip(f"needs network namespaces: {exc}")
    try:
        for device, nics in HOSTS.items():
            made.add_host(device, nics)
        yield made
    finally:
        made.close()


@pytest.fixture(scope="module")
def driver(lab: NetnsLab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AnsibleHostDriver]:
    options = HostOptions.parse({"mode": "netns", "netns": f"{lab.prefix}{{name}}"})
    made = AnsibleHostDriver(tmp_path_factory.mktemp("fleet-state"), options)
    for device in HOSTS:
        vendor = Path(options.vendor_dir(ref(device), made.private_dir))
        shim(vendor, "seed", json.dumps({"firmware/bios": "1.7.0", "nics/eth0/rdma_mtu": 1024}))
    yield made
    made.close()


def vendor_dir(driver: AnsibleHostDriver, device: str) -> Path:
    return Path(driver.options.vendor_dir(ref(device), driver.private_dir))


def test_observe_reads_the_kernel_and_the_vendor_tool(
    driver: AnsibleHostDriver, lab: NetnsLab
) -> None:
    """observe gives MTU and address from the kernel and the rest from the vendor tool."""
    lab.set_mtu("obs-a", "eth1", 4200)
    state = driver.observe(ref("obs-a"))
    assert state == {
        "firmware/bios": "1.7.0",
        "nics/eth0/address": None,
        "nics/eth0/mtu": 1500,
        "nics/eth0/rdma_mtu": 1024,
        "nics/eth1/address": None,
        "nics/eth1/mtu": 4200,
    }


def test_observe_many_is_one_run_for_all_hosts(driver: AnsibleHostDriver) -> None:
    """observe_many observes every host in a single ansible run."""
    before = len(driver.runs)
    found = driver.observe_many([ref("obs-a"), ref("obs-b"), ref("dry")])
    assert sorted(found) == ["dry", "obs-a", "obs-b"]
    assert all(isinstance(state, dict) for state in found.values())
    assert len(driver.runs) == before + 1
    assert driver.runs[-1].hosts == ("obs-a", "obs-b", "dry")


def test_dry_run_plans_and_changes_nothing(driver: AnsibleHostDriver, lab: NetnsLab) -> None:
    """A dry run (ansible check mode) is 'planned' and leaves kernel and vendor tool alone."""
    changes = [Change("nics/eth0/mtu", 1500, 9000), Change("nics/eth0/rdma_mtu", 1024, 4096)]
    result = driver.apply(ref("dry"), changes, dry_run=True)
    assert result.outcome is Outcome.planned
    assert driver.runs[-1].check
    assert lab.mtu("dry", "eth0") == 1500
    assert shim(vendor_dir(driver, "dry"), "stats")["writes"] == 0


def test_apply_changes_the_kernel_for_real(driver: AnsibleHostDriver, lab: NetnsLab) -> None:
    """apply sets MTU and address in the namespace (read back with ip -j) and the RDMA MTU."""
    changes = [
        Change("nics/eth0/mtu", 1500, 9000),
        Change("nics/eth0/address", None, "10.1.0.1/31"),
        Change("nics/eth1/mtu", 1500, 9000),
        Change("nics/eth0/rdma_mtu", 1024, 4096),
    ]
    result = driver.apply(ref("wet"), changes, dry_run=False)
    assert result.outcome is Outcome.applied, result.error
    assert (lab.mtu("wet", "eth0"), lab.mtu("wet", "eth1")) == (9000, 9000)
    assert lab.address("wet", "eth0") == "10.1.0.1/31"
    runs = len(driver.runs)
    assert driver.observe(ref("wet"))["nics/eth0/rdma_mtu"] == 4096
    assert len(driver.runs) == runs  # the commit's read-back served this observe


def test_a_refused_mtu_is_rejected_and_nothing_stays_half_applied(
    driver: AnsibleHostDriver, lab: NetnsLab
) -> None:
    """MTU 99999 is refused by the kernel: ConfigRejected with its message, all undone."""
    changes = [
        Change("nics/eth0/mtu", 1500, 9000),
        Change("nics/eth0/address", None, "10.1.0.3/31"),
        Change("nics/eth1/mtu", 1500, 99999),
        Change("nics/eth1/rdma_mtu", None, 4096),
    ]
    with pytest.raises(ConfigRejected, match="mtu greater than device maximum"):
        driver.apply(ref("bad"), changes, dry_run=False)
    assert (lab.mtu("bad", "eth0"), lab.mtu("bad", "eth1")) == (1500, 1500)
    assert lab.address("bad", "eth0") is None
    assert shim(vendor_dir(driver, "bad"), "stats")["writes"] == 0


def test_a_value_the_vendor_tool_refuses_is_rejected_before_any_write(
    driver: AnsibleHostDriver, lab: NetnsLab
) -> None:
    """An RDMA MTU the tool does not support fails the compare step: nothing is written."""
    changes = [Change("nics/eth0/mtu", 1500, 9000), Change("nics/eth0/rdma_mtu", 1024, 4000)]
    with pytest.raises(ConfigRejected, match="RDMA MTU 4000 is not one of"):
        driver.apply(ref("bad"), changes, dry_run=False)
    assert lab.mtu("bad", "eth0") == 1500
    assert driver.runs[-1].check


def test_a_vanished_namespace_is_unreachable(driver: AnsibleHostDriver, lab: NetnsLab) -> None:
    """A host whose namespace is gone is DeviceUnreachable (nothing can have been written)."""
    lab.remove_host("gone")
    with pytest.raises(DeviceUnreachable, match="Cannot open network namespace"):
        driver.observe(ref("gone"))


def test_apply_many_takes_one_run_per_step(driver: AnsibleHostDriver, lab: NetnsLab) -> None:
    """Applying to several hosts at once makes one check run and one commit run in all."""
    before = len(driver.runs)
    changes = [Change("nics/eth0/mtu", 1500, 9000)]
    results = driver.apply_many(
        [(ref("batch-a"), changes), (ref("batch-b"), changes)], dry_run=False
    )
    assert {name: r.outcome for name, r in results.items()} == {  # type: ignore[union-attr]
        "batch-a": Outcome.applied,
        "batch-b": Outcome.applied,
    }
    assert [(r.check, sorted(r.hosts)) for r in driver.runs[before:]] == [
        (True, ["batch-a", "batch-b"]),
        (False, ["batch-a", "batch-b"]),
    ]
    assert (lab.mtu("batch-a", "eth0"), lab.mtu("batch-b", "eth0")) == (9000, 9000)


def test_runs_leave_no_environment_and_no_secret_on_disk(
    driver: AnsibleHostDriver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A secret in the caller's environment reaches no file; no env dump, events or inventory."""
    secret = f"not-a-real-secret-{uuid.uuid4().hex}"
    monkeypatch.setenv("PLUMB_TEST_API_TOKEN", secret)
    driver.observe(ref("obs-b"))
    files = [p for p in driver.private_dir.rglob("*") if p.is_file()]
    leaked = [p for p in files if secret.encode() in p.read_bytes()]
    assert leaked == []
    for run_dir in (driver.private_dir / "artifacts").iterdir():
        assert {p.name for p in run_dir.iterdir()} <= {"status", "rc", "stdout"}
    assert not (driver.private_dir / "env").exists()
    assert list((driver.private_dir / "inventory").iterdir()) == []


def test_every_run_gets_a_new_ident(driver: AnsibleHostDriver) -> None:
    """Consecutive runs never share an ident (a reused one corrupts the results)."""
    while len(driver.runs) < 2:  # the module's earlier tests usually made many already
        driver.observe(ref("obs-b"))
    idents = [run.ident for run in driver.runs]
    assert len(idents) == len(set(idents))
    artifacts = {p.name for p in (driver.private_dir / "artifacts").iterdir()}
    assert set(idents[-2:]) <= artifacts


def test_the_interpreter_wrapper_runs_python_inside_the_namespace(
    driver: AnsibleHostDriver, lab: NetnsLab
) -> None:
    """ansible_python_interpreter is a wrapper that enters the host's namespace first."""
    wrapper = host_vars(ref("obs-a"), driver.options, driver.private_dir)[
        "ansible_python_interpreter"
    ]
    assert lab.namespace("obs-a") in wrapper and " " not in wrapper
    seen = subprocess.run(
        [wrapper, "-c", "import socket; print(sorted(n for _, n in socket.if_nameindex()))"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert seen.stdout.strip() == "['eth0', 'eth1', 'lo']"


class LossyHost(AnsibleHostDriver):
    """The driver with its runs replaced by a host that drops the RDMA MTU on commit."""

    def __init__(self, state_dir: Path) -> None:
        super().__init__(state_dir, HostOptions(mode="netns"))
        self.state: dict[str, Scalar] = {"nics/eth0/mtu": 1500, "nics/eth0/rdma_mtu": 1024}
        self.commits: list[list[tuple[str, Scalar]]] = []

    def observe(self, device: DeviceRef) -> dict[str, Scalar]:
        return dict(self.state)

    def compare(self, device: DeviceRef, candidate: object) -> list[Change]:
        assert isinstance(candidate, HostWrite)
        return list(candidate.changes)

    def commit(self, device: DeviceRef, candidate: object, confirm_within: float | None) -> None:
        assert isinstance(candidate, HostWrite)
        self.commits.append([(c.path, c.after) for c in candidate.changes])
        self.state.update({c.path: c.after for c in candidate.changes if "rdma" not in c.path})


def test_a_commit_that_did_not_take_is_reverted_by_the_driver(tmp_path: Path) -> None:
    """Under confirm_within a read-back that differs is reverted (hosts have no timer)."""
    host = LossyHost(tmp_path)
    changes = [Change("nics/eth0/mtu", 1500, 9000), Change("nics/eth0/rdma_mtu", 1024, 4096)]
    result = host.apply(ref("h"), changes, dry_run=False, confirm_within=30.0)
    assert result.outcome is Outcome.failed
    assert result.error is not None and "the driver reverted the changes" in result.error
    assert host.commits[-1] == [("nics/eth0/mtu", 1500), ("nics/eth0/rdma_mtu", 1024)]
    assert host.state["nics/eth0/mtu"] == 1500


def test_a_command_runs_inside_the_host_with_its_exit_status_and_output(
    driver: AnsibleHostDriver,
) -> None:
    """An acceptance test's command: run on the node (its own links), words quoted, a
    non-zero exit reported as the command's result."""
    out = driver.run_command(
        ref("obs-b"),
        ["sh", "-c", "echo 'busbw=389.5 GB/s'; ip -o link show | grep -c eth; exit 3", "$x"],
        30,
    )
    assert out.rc == 3
    assert out.stdout.splitlines()[:2] == ["busbw=389.5 GB/s", "1"]  # obs-b has only eth0

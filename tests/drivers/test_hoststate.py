"""Host tool output -> flat state, and change lists -> ip-batch scripts (pure)."""

from __future__ import annotations

import json
import threading
import time

import pytest

from reconciler.drivers.batching import Coalescer
from reconciler.drivers.hoststate import flat_state, plan_write, planned_changes
from reconciler.errors import ConfigRejected
from reconciler.settings import Change

LINKS = json.dumps(
    [
        {"ifname": "lo", "mtu": 65536, "link_type": "loopback"},
        {"ifname": "eth0", "mtu": 9000, "link_type": "ether"},
        {"ifname": "eth1", "mtu": 1500, "link_type": "ether"},
    ]
)
ADDRESSES = json.dumps(
    [
        {
            "ifname": "lo",
            "link_type": "loopback",
            "addr_info": [
                {"family": "inet", "local": "127.0.0.1", "prefixlen": 8, "scope": "host"}
            ],
        },
        {
            "ifname": "eth0",
            "addr_info": [
                {"family": "inet6", "local": "fe80::1", "prefixlen": 64, "scope": "link"},
                {"family": "inet", "local": "10.1.0.1", "prefixlen": 31, "scope": "global"},
            ],
        },
        {"ifname": "eth1", "addr_info": []},
    ]
)
VENDOR = json.dumps({"settings": {"firmware/bios": "1.8.0", "qos/dscp/26": 3, "junk/x": 1}})


def test_flat_state_merges_kernel_and_vendor_reads() -> None:
    """Links give MTU, addresses the first global IPv4, the vendor tool the rest."""
    assert flat_state(LINKS, ADDRESSES, VENDOR) == {
        "firmware/bios": "1.8.0",
        "nics/eth0/address": "10.1.0.1/31",
        "nics/eth0/mtu": 9000,
        "nics/eth1/address": None,
        "nics/eth1/mtu": 1500,
        "qos/dscp/26": 3,
    }


def test_plan_write_orders_mtu_before_address_and_undoes_in_reverse() -> None:
    """The batch sets each NIC's MTU then its address; the undo script runs backwards."""
    write = plan_write(
        "n",
        [
            Change("nics/eth0/address", "10.0.0.1/31", "10.1.0.1/31"),
            Change("nics/eth0/mtu", 1500, 9000),
            Change("nics/eth0/rdma_mtu", 1024, 4096),
        ],
    )
    assert write.ip_apply == (
        "link set dev eth0 mtu 9000",
        "address del 10.0.0.1/31 dev eth0",
        "address add 10.1.0.1/31 dev eth0",
    )
    assert write.ip_undo == (
        "address del 10.1.0.1/31 dev eth0",
        "address add 10.0.0.1/31 dev eth0",
        "link set dev eth0 mtu 1500",
    )
    assert write.vendor == {"nics/eth0/rdma_mtu": 4096}


@pytest.mark.parametrize(
    "change",
    [
        Change("bgp/asn", None, 65001),
        Change("nics/eth0/mtu", 1500, "9000; reboot"),
        Change("nics/eth0 x/mtu", 1500, 9000),
        Change("nics/eth0/address", None, "10.0.0.1/31 dev lo"),
        Change("nics/eth0\n/mtu", 1500, 9000),
        Change("nics/eth0/mtu\n", 1500, 9000),
        Change("firmware/nic\n", None, "28.43.1014"),
    ],
)
def test_plan_write_rejects_what_it_cannot_write_safely(change: Change) -> None:
    """Unknown paths and malformed values are rejected before anything runs."""
    with pytest.raises(ConfigRejected):
        plan_write("n", [change])


def test_planned_changes_need_the_nic_to_exist() -> None:
    """A change for a NIC the host does not have is rejected at compare."""
    write = plan_write("n", [Change("nics/eth9/mtu", None, 9000)])
    with pytest.raises(ConfigRejected, match="no NIC eth9"):
        planned_changes(write, {"nics/eth0/mtu": 1500}, [])


def test_coalescer_joins_concurrent_calls_into_one_batch() -> None:
    """Calls that arrive together run as one batch; each caller gets its own result."""
    batches: list[list[str]] = []

    def run(key: object, items: dict[str, int]) -> dict[str, int]:
        batches.append(sorted(items))
        time.sleep(0.05)
        return {name: value * 2 for name, value in items.items()}

    coalescer: Coalescer[int, int] = Coalescer(run, quiet=0.05)  # type: ignore[arg-type]
    results: dict[str, int] = {}

    def call(name: str, value: int) -> None:
        results[name] = coalescer.submit("k", name, value)

    threads = [threading.Thread(target=call, args=(f"d{i}", i)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {f"d{i}": i * 2 for i in range(8)}
    assert batches == [[f"d{i}" for i in range(8)]]


def test_vendor_settings_with_a_trailing_newline_in_their_path_are_not_read() -> None:
    """A vendor path with a trailing newline is no setting plumb knows."""
    vendor = json.dumps({"settings": {"firmware/nic\n": "x", "firmware/nic": "28.43.1014"}})
    assert flat_state("[]", "[]", vendor) == {"firmware/nic": "28.43.1014"}

"""SSH exec channels (reconciler.drivers.ssh_exec) against the simulator's sshd:
an answer is read whole up to its end of file, whatever the order in which the
exit status and the last output arrive, and fresh logins in numbers all answer
their first command in step."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

from reconciler.drivers.ssh_exec import ExecPool
from tests.drivers.conftest import Switches
from tests.switchsim import EcnQueue, InterfaceState, SwitchState

PORTS = 128


def big_switch(name: str) -> SwitchState:
    """A SONiC switch whose config_db is larger than paramiko's smallest window."""
    ports = {
        f"Ethernet{4 * n}": InterfaceState(
            mtu=9100,
            description=f"backend rail {n % 8} to gpu node {n:03d}",
            pfc_priorities=[3, 4],
            ecn={3: EcnQueue(200, 800, 20), 4: EcnQueue(160, 640, 15)},
        )
        for n in range(PORTS)
    }
    return SwitchState(name, "ACS-SN5600", "202411", "SONiC-OS-202411", interfaces=ports)


def test_output_queued_behind_a_full_window_is_read_whole(switches: Switches) -> None:
    """With a channel window smaller than the answer, sshd sends the exit status while
    output is still queued behind the window; the whole answer is read all the same."""
    ref = switches.add("sonic", big_switch("big"))
    pool: ExecPool = switches.driver("sonic").exec
    with pool.session(ref) as session:
        whole = session.run("show runningconfiguration all")
        transport = session.client.get_transport()
        assert transport is not None
        transport.default_window_size = 1  # paramiko's floor: 32 KiB per channel
        narrow = session.run("show runningconfiguration all")
    assert len(whole.stdout) > 32768  # more than one window
    assert narrow.status == 0
    assert narrow.stdout == whole.stdout
    assert len(json.loads(narrow.stdout)["PORT"]) == PORTS


def test_many_fresh_logins_answer_their_first_command_in_step(switches: Switches) -> None:
    """Fresh clients logging in at once (a new process's first contact with a fleet)
    each get their own first answer: status 0, this switch's version, nothing else."""
    refs = [switches.add("sonic") for _ in range(24)]

    def first_answer(index: int) -> tuple[int, str, str]:
        ref = refs[index % len(refs)]
        pool: ExecPool = switches.driver("sonic").exec
        try:
            with pool.session(ref) as session:
                result = session.run("show version")
                return result.status, result.stdout, result.stderr
        finally:
            pool.close()

    with ThreadPoolExecutor(16) as workers:
        answers = list(workers.map(first_answer, range(96)))
    assert [a for a in answers if a[0] != 0 or a[2]] == []
    assert all(a[1].startswith("SONiC Software Version: ") for a in answers), answers[0][1][:80]

"""Parsing what Slurm 22.05 prints (golden outputs captured from a real cluster):
node states and drain reasons, jobs and their GPUs, host lists; and the pure pieces of
acceptance tests (command lines, key=value figures)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rollouts.commands import command_argv, figures
from rollouts.slurmparse import (
    SlurmOutputError,
    drained_by,
    expand_hostlist,
    jobs_on,
    parse_jobs,
    parse_node_line,
    parse_nodes,
    plumb_reason,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "slurm-22.05"


def _nodes() -> str:
    return (FIXTURES / "scontrol-show-node" / "draining" / "output.txt").read_text()


def _jobs() -> str:
    return (FIXTURES / "squeue-json" / "running-gang" / "output.json").read_text()


def test_node_states_flags_and_reasons() -> None:
    """Base state, flags and the reason without Slurm's [user@time] suffix."""
    nodes = parse_nodes(_nodes())
    assert len(nodes) == 8
    assert (nodes["gpu-n03"].base, nodes["gpu-n03"].flags) == ("MIXED", frozenset({"DRAIN"}))
    assert nodes["gpu-n03"].reason == "plumb rollout fw-1: wave 1"
    assert nodes["gpu-n03"].reason_by == "root"
    assert nodes["gpu-n06"].state == "IDLE+DRAIN" and nodes["gpu-n06"].reason == "hw ticket 4711"
    assert nodes["gpu-n01"].reason is None and not nodes["gpu-n01"].drain_flag


def test_drained_means_the_flag_and_no_job_left() -> None:
    nodes = parse_nodes(_nodes())
    assert not nodes["gpu-n03"].drained  # MIXED+DRAIN: the job still runs there
    assert nodes["gpu-n06"].drained  # IDLE+DRAIN
    assert not nodes["gpu-n05"].drained  # idle, in service
    assert not parse_node_line("NodeName=a State=IDLE+DRAIN+COMPLETING").drained


def test_not_responding_is_a_flag() -> None:
    node = parse_node_line("NodeName=gpu-n01 State=IDLE+NOT_RESPONDING")
    assert node.base == "IDLE" and "NOT_RESPONDING" in node.flags


def test_only_this_rollouts_drains_are_its_own() -> None:
    """Another actor's drain, a down node, another rollout's repair: all refused."""
    nodes = parse_nodes(_nodes())
    assert drained_by(nodes["gpu-n03"], "fw-1") is None
    assert drained_by(nodes["gpu-n05"], "fw-1") is None
    refused = drained_by(nodes["gpu-n06"], "fw-1")
    assert refused is not None and "hw ticket 4711" in refused and "by root" in refused
    assert drained_by(nodes["gpu-n07"], "fw-1") is not None  # DOWN, "bad psu"
    assert drained_by(nodes["gpu-n03"], "fw-10") is not None  # a prefix is not a match
    assert drained_by(nodes["gpu-n03"], "fw") is not None


def test_a_record_without_name_or_state_is_refused() -> None:
    with pytest.raises(SlurmOutputError):
        parse_node_line("SensorsWatts=0 ExtSensorsTemp=n/s")


def test_jobs_with_their_nodes_and_gpus() -> None:
    """The running 4-node job holds 8 GPUs on each node (gres_detail)."""
    jobs = parse_jobs(_jobs())
    assert [(j.state, j.nodes, j.gpus) for j in jobs] == [
        ("RUNNING", ("gpu-n01", "gpu-n02", "gpu-n03", "gpu-n04"), 32)
    ]
    assert jobs_on(jobs, ["gpu-n03"]) == jobs
    assert jobs_on(jobs, ["gpu-n05"]) == []


def test_gpus_from_tres_per_node_without_gres_detail() -> None:
    text = (
        '{"errors": [], "jobs": [{"job_id": 9, "job_state": "RUNNING", "nodes": "a[1-2]",'
        ' "tres_per_node": "gres:gpu:h100:4"}, {"job_id": 10, "job_state": "PENDING",'
        ' "nodes": ""}]}'
    )
    assert [(j.id, j.gpus) for j in parse_jobs(text)] == [(9, 8)]


def test_squeue_errors_and_garbage_are_refused() -> None:
    with pytest.raises(SlurmOutputError, match="errors"):
        parse_jobs('{"errors": [{"error": "down"}], "jobs": []}')
    with pytest.raises(SlurmOutputError, match="not JSON"):
        parse_jobs("slurm_load_jobs error: Unable to contact slurm controller")


def test_host_lists() -> None:
    assert expand_hostlist("gpu-n[01-03,07],login1") == [
        "gpu-n01",
        "gpu-n02",
        "gpu-n03",
        "gpu-n07",
        "login1",
    ]
    assert expand_hostlist("r[1-2]n[1-2]") == ["r1n1", "r1n2", "r2n1", "r2n2"]
    with pytest.raises(SlurmOutputError):
        expand_hostlist("gpu-n[03-01]")


@given(st.lists(st.integers(0, 999), min_size=1, max_size=20, unique=True))
def test_a_host_list_round_trips(numbers: list[int]) -> None:
    """Any set of zero-padded names written as one bracket list expands back to it."""
    names = [f"n{n:03d}" for n in sorted(numbers)]
    text = "n[" + ",".join(f"{n:03d}" for n in sorted(numbers)) + "]"
    assert expand_hostlist(text) == names


def test_plumbs_reason_names_the_rollout() -> None:
    assert plumb_reason("fw-1", "wave 2") == "plumb rollout fw-1: wave 2"


def test_a_command_line_keeps_each_value_in_one_word() -> None:
    argv = command_argv('drain.sh --node {node} --why "{reason}"', {"node": "n1", "reason": "a b"})
    assert argv == ["drain.sh", "--node", "n1", "--why", "a b"]
    assert command_argv("x {node}", {"node": "$(rm -rf /)"}) == ["x", "$(rm -rf /)"]


def test_figures_from_key_value_lines() -> None:
    """Numbers (a unit dropped) and text; other lines ignored."""
    out = "# nccl-tests\nbusbw=389.5 GB/s\n  algbw = 201.2\nresult=PASS\nnot a figure\n=x\n"
    assert figures(out) == {"busbw": 389.5, "algbw": 201.2, "result": "PASS"}

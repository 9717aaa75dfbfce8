"""The rollout specs of a generated fleet: a firmware bundle rollout over every GPU node
and a QoS / MTU change over the backend switches (``rollouts/*.yaml``).

Written by :func:`benchmarks.genfleet.generate_fleet` beside the inventory and intent,
so that ``examples/orion`` stays exactly what the generator writes.
"""

from __future__ import annotations

FIRMWARE = """\
# yaml-language-server: $schema=../schemas/rollout.schema.json
# Move every HX8 GPU node to bundle hx8-2026.09 (GPU driver, CUDA, NIC firmware and
# driver, BIOS, BMC, fabric manager), declared before the first node is touched.
# Plan it with: plumb rollout plan firmware-hx8-2026-09 <fleet repo>
rollout:
  name: firmware-hx8-2026-09
  description: >-
    HX8 bundle hx8-2026.06 -> hx8-2026.09 on all {nodes} GPU nodes. The NIC firmware moves
    28.41 -> 28.43; the {per_rack} nodes of {last_rack} carry revision B0 NICs, a minority only a
    stratified canary is sure to cover.
  targets:
    select: role=gpu-node
    paths: ["firmware/*"]           # the bundle only; other drift is not this rollout's
  strata:
    extra_attributes: [label.nic_revision]
    canary_per_stratum: 1
  waves:
    growth: 2.0
  caps:
    per_wave: 8
    per_rack: 2
    per_dp_replica: 1               # a wave never takes two nodes of one DP replica
  bake:
    mode: auto
    baseline_failures_per_target_hour: 0.01   # XID errors, link flaps, ECC: all fault events
    detect_rate_ratio: 5.0
    confidence: 0.9
    min_minutes: 30.0
    max_minutes: 1440.0
  drain: true                       # firmware needs a reboot: the node leaves its gang
  price:
    usd_per_gpu_hour: 3.0
    drain_minutes: 20.0             # cordon, flash, reboot, acceptance, return to service
  abort:
    metrics:
      - name: step_time
        source: lab
        signal: step_time_s           # seconds per training step, per node
        statistic: median_ratio
        test: permutation
        direction: higher_is_worse
        threshold: 1.03             # 3 % slower training steps is a practical regression
        alpha: 0.05
        min_samples: 2              # the 2-node canary vs 30 controls: exact p down to 1/496
    hard_faults: [fec_uncorrectable, unreachable, unknown, acceptance_failed]
  rollback:
    scope: wave
    automatic: true
  seed: 2026
"""

QOS_MTU = """\
# yaml-language-server: $schema=../schemas/rollout.schema.json
# A switch QoS / MTU change (ECN thresholds, PFC priorities, port MTU) over the rail
# leaves and the spines. Nothing is drained: the change is hitless on the switches.
# Plan it with: plumb rollout plan qos-mtu-tune <fleet repo>
rollout:
  name: qos-mtu-tune
  description: >-
    Lossless-class tuning on the backend switches. Leaves of both vendors and the
    spines are separate strata, so the canary holds one of each.
  targets:
    select: role=leaf|spine
    paths: ["qos/*", "interfaces/*/mtu", "interfaces/*/pfc_priorities"]
  strata:
    canary_per_stratum: 1
    canary_waves: 2                 # 3 strata (EOS leaf, SONiC leaf, spine) at 2 per wave
  waves:
    growth: 2.0
  caps:
    per_wave: 2
  bake:
    mode: auto
    baseline_failures_per_target_hour: 0.02   # link flaps, BGP resets, lossless discards
    detect_rate_ratio: 5.0
    confidence: 0.9
    min_minutes: 30.0
    max_minutes: 240.0
  drain: false
  abort:
    metrics:
      - name: link_flap_rate
        source: lab
        signal: link_flaps            # events per target-hour
        statistic: rate_difference    # wave minus controls
        test: permutation
        direction: higher_is_worse
        threshold: 0.5
        alpha: 0.05
        min_samples: 2              # waves of 2 switches (caps.per_wave)
    hard_faults: [lossless_discards, bgp_down, unreachable, unknown]
  rollback:
    scope: wave
    automatic: true
"""


def rollout_files(nodes: int, per_rack: int, last_rack: str) -> dict[str, str]:
    """``rollouts/<name>.yaml`` -> text, for a fleet of ``nodes`` GPU nodes whose last
    rack ``last_rack`` (of ``per_rack`` nodes) carries the B0 NICs."""
    return {
        "rollouts/firmware-hx8-2026-09.yaml": FIRMWARE.format(
            nodes=nodes, per_rack=per_rack, last_rack=last_rack
        ),
        "rollouts/qos-mtu-tune.yaml": QOS_MTU.format(),
    }

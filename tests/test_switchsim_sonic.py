"""The SONiC simulator's release profiles, over real SSH exec requests (paramiko) and netmiko."""

from __future__ import annotations

import itertools
import json
from typing import Any

import paramiko
import pytest
from netmiko import ConnectHandler

from tests.switchsim import DeviceSpec, SwitchSim

PASSWORD = "pw"
LLDP = (("Ethernet0", "ARISTA01T2", "Ethernet1"), ("Ethernet4", "ARISTA02T2", "Ethernet1"))
_names = itertools.count(1)


class Switch:
    """An SSH client running exec requests against one simulated switch."""

    def __init__(self, sim: SwitchSim, name: str) -> None:
        self.name = name
        self.client = paramiko.SSHClient()
        self.client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        self.client.connect(
            "127.0.0.1",
            port=sim.port(name),
            username="admin",
            password=PASSWORD,
            look_for_keys=False,
            allow_agent=False,
            timeout=5,
        )

    def run(self, command: str, stdin: str | None = None) -> tuple[str, str, int]:
        """stdout, stderr and exit status of one exec request."""
        sin, out, err = self.client.exec_command(command, timeout=10)
        if stdin is not None:
            sin.write(stdin)
            sin.channel.shutdown_write()
        return out.read().decode(), err.read().decode(), out.channel.recv_exit_status()

    def patch(self, ops: list[dict[str, Any]], dry_run: bool = False) -> tuple[str, str, int]:
        """Upload `ops` on stdin and run ``config apply-patch`` on it."""
        assert self.run("cat > /tmp/p.json", json.dumps(ops))[2] == 0
        flag = " --dry-run" if dry_run else ""
        return self.run(f"sudo config apply-patch{flag} /tmp/p.json")

    def running(self) -> Any:
        out, _err, status = self.run("show runningconfiguration all")
        assert status == 0
        return json.loads(out)


def switch(sim: SwitchSim, profile: str, lldp: tuple[tuple[str, str, str], ...] = ()) -> Switch:
    name = f"sonic-p{next(_names)}"
    sim.add_device(
        DeviceSpec(name=name, dialect="sonic", password=PASSWORD, profile=profile, lldp=lldp)
    )
    return Switch(sim, name)


@pytest.mark.parametrize(
    ("profile", "version", "hwsku"),
    [
        ("sonic-202205", "SONiC.20220531.45", "Mellanox-SN4600C-C64"),
        ("sonic-202405", "SONiC.202405.123456-abcdef12", "Nokia-IXR7220-H4-64D"),
        ("sonic-202405-multiasic", "SONiC.202405.123456-abcdef12", "Nokia-IXR7250E-36x400G"),
    ],
)
def test_show_version_names_build_and_hwsku(
    sim: SwitchSim, profile: str, version: str, hwsku: str
) -> None:
    """`show version` prints the build version after `SONiC.` and the profile's HwSKU."""
    out, err, status = switch(sim, profile).run("show version")
    assert (err, status) == ("", 0)
    assert f"SONiC Software Version: {version}\n" in out
    assert f"HwSKU: {hwsku}\n" in out


def test_exec_unknown_command_goes_to_stderr_with_status(sim: SwitchSim) -> None:
    """An exec request of an unknown command answers on stderr with status 127."""
    assert switch(sim, "sonic-202405").run("frobnicate") == (
        "",
        "-bash: frobnicate: command not found\n",
        127,
    )


def test_exec_list_stops_after_failure(sim: SwitchSim) -> None:
    """`a && b` skips b when a fails; the status is a's."""
    out, _err, status = switch(sim, "sonic-202405").run("frobnicate && echo reached")
    assert (out, status) == ("", 127)


def test_bgpraw_only_from_202405(sim: SwitchSim) -> None:
    """202405 adds FRR's running config as `bgpraw`; the 2022 build of 202205 does not."""
    assert "bgpraw" not in switch(sim, "sonic-202205").running()
    raw = switch(sim, "sonic-202405").running()["bgpraw"]
    assert "router bgp 65100\n bgp router-id 10.1.0.1\n" in raw
    assert " neighbor 10.0.0.1 remote-as 65200\n" in raw
    assert " neighbor fc00::2 peer-group PEER_V6\n" in raw
    assert "  maximum-paths 64\n" in raw


def test_multiasic_running_config_is_per_namespace(sim: SwitchSim) -> None:
    """A multi-ASIC switch nests config per namespace; only ASIC namespaces carry bgpraw."""
    shown = switch(sim, "sonic-202405-multiasic").running()
    assert sorted(shown) == ["asic0", "asic1", "localhost"]
    assert "bgpraw" not in shown["localhost"] and "PORT" not in shown["localhost"]
    assert "Ethernet0" in shown["asic0"]["PORT"] and "Ethernet16" in shown["asic1"]["PORT"]
    assert "router bgp 65100" in shown["asic0"]["bgpraw"]


def test_dual_stack_interfaces_and_lossless_buffers(sim: SwitchSim) -> None:
    """Active ports are dual-stack; PG 0 is lossy and PGs 3-4 lossless with xon/xoff/size."""
    db = switch(sim, "sonic-202205").running()
    assert "Ethernet0|fc00::1/126" in db["INTERFACE"] and "Ethernet0|10.0.0.0/31" in db["INTERFACE"]
    assert db["BUFFER_PG"]["Ethernet0|0"] == {"profile": "ingress_lossy_profile"}
    lossless = db["BUFFER_PROFILE"][db["BUFFER_PG"]["Ethernet0|3-4"]["profile"]]
    assert {"xon", "xoff", "size", "dynamic_th", "pool"} <= set(lossless)
    assert "xoff" not in db["BUFFER_PROFILE"]["ingress_lossy_profile"]
    assert db["QUEUE"]["Ethernet0|3"]["wred_profile"] == "AZURE_LOSSLESS"
    assert db["PORT"]["Ethernet28"]["admin_status"] == "down"
    assert not any(key.startswith("Ethernet28|") for key in db["BUFFER_PG"])


def test_dynamic_buffer_model_leaves_lossless_pgs_to_buffermgrd(sim: SwitchSim) -> None:
    """With `buffer_model: dynamic` lossless PGs are NULL and headroom is not in config_db."""
    sw = switch(sim, "sonic-202405-dynamic")
    db = sw.running()
    assert db["DEVICE_METADATA"]["localhost"]["buffer_model"] == "dynamic"
    assert db["BUFFER_PG"]["Ethernet0|3-4"] == {"profile": "NULL"}
    assert sim.state(sw.name).interfaces["Ethernet0"].pfc_headroom_kb is None


def test_wred_green_threshold_replace_is_applied(sim: SwitchSim) -> None:
    """Replacing AZURE_LOSSLESS's green minimum is allowed and shows in the state."""
    sw = switch(sim, "sonic-202405")
    out, err, status = sw.patch(
        [
            {
                "op": "replace",
                "path": "/WRED_PROFILE/AZURE_LOSSLESS/green_min_threshold",
                "value": "409600",
            }
        ]
    )
    assert (status, err) == (0, ""), err
    assert out.endswith("Patch applied successfully.\n")
    assert sim.state(sw.name).interfaces["Ethernet0"].ecn[3].kmin_kb == 400


def test_new_buffer_profile_is_refused_by_field_rules(sim: SwitchSim) -> None:
    """Adding a BUFFER_PROFILE is not a permitted field operation: status 2, click's error."""
    sw = switch(sim, "sonic-202405")
    profile = {"dynamic_th": "0", "pool": "ingress_lossless_pool", "size": "1270", "xoff": "1"}
    _out, err, status = sw.patch(
        [{"op": "add", "path": "/BUFFER_PROFILE/pg_lossless_custom_profile", "value": profile}]
    )
    assert status == 2
    assert err.startswith("Failed to apply patch due to: Failed to apply patch on the following")
    assert (
        "- localhost: Modification of BUFFER_PROFILE table is illegal- validating function" in err
    )
    assert "Try 'config apply-patch -h' for help." in err
    assert sim.write_count(sw.name) == 0


def test_202205_refusal_uses_its_own_wording(sim: SwitchSim) -> None:
    """202205 prints `Failed to apply patch` and click 7's double-quoted help hint."""
    sw = switch(sim, "sonic-202205")
    _out, err, status = sw.patch(
        [{"op": "replace", "path": "/WRED_PROFILE/AZURE_LOSSLESS/ecn", "value": "ecn_green"}]
    )
    assert status == 2
    assert err.startswith("Failed to apply patch\nUsage: config apply-patch")
    assert 'Try "config apply-patch -h" for help.' in err
    assert "Error: Modification of WRED_PROFILE table is illegal" in err


def test_headroom_xoff_replace_allowed_on_spectrum3(sim: SwitchSim) -> None:
    """PG headroom modification (`xoff` replace) is allowed on SN4600C from 20220500."""
    sw = switch(sim, "sonic-202205")
    profile = sw.running()["BUFFER_PG"]["Ethernet0|3-4"]["profile"]
    _out, err, status = sw.patch(
        [{"op": "replace", "path": f"/BUFFER_PROFILE/{profile}/xoff", "value": str(64 * 1024)}]
    )
    assert status == 0, err
    assert sim.state(sw.name).interfaces["Ethernet0"].pfc_headroom_kb == 64


def test_dry_run_validates_without_writing(sim: SwitchSim) -> None:
    """`--dry-run` prints the banner, validates and changes nothing."""
    sw = switch(sim, "sonic-202405")
    out, _err, status = sw.patch(
        [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9000"}], dry_run=True
    )
    assert status == 0 and out.startswith("** DRY RUN EXECUTION **\n")
    assert sim.state(sw.name).interfaces["Ethernet0"].mtu == 9100
    assert sim.write_count(sw.name) == 0


def test_yang_range_and_leafref_are_enforced(sim: SwitchSim) -> None:
    """An out-of-range MTU and a PG pointing at a missing profile are both refused."""
    sw = switch(sim, "sonic-202405")
    _o, err, status = sw.patch([{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9217"}])
    assert status == 2 and "Failed validating patch" in err
    _o, err, status = sw.patch(
        [{"op": "replace", "path": "/BUFFER_PG/Ethernet0|0/profile", "value": "nope"}]
    )
    assert status == 2 and "Failed validating patch" in err
    assert sim.write_count(sw.name) == 0


def test_emptying_a_table_is_refused(sim: SwitchSim) -> None:
    """A patch that leaves a table empty is refused (ConfigDb cannot hold empty tables)."""
    sw = switch(sim, "sonic-202405")
    _o, err, status = sw.patch([{"op": "replace", "path": "/CABLE_LENGTH", "value": {}}])
    assert status == 2 and "empty tables" in err and "Table: CABLE_LENGTH" in err


def test_neighbor_asn_change_in_place_is_refused_but_readd_works(sim: SwitchSim) -> None:
    """bgpcfgd cannot change a peer's asn in place; remove + add of the row does it."""
    sw = switch(sim, "sonic-202405")
    _o, err, status = sw.patch(
        [{"op": "replace", "path": "/BGP_NEIGHBOR/10.0.0.1/asn", "value": "65300"}]
    )
    assert status == 2 and "bgpcfgd" in err
    row = dict(sw.running()["BGP_NEIGHBOR"]["10.0.0.1"], asn="65300")
    _o, err, status = sw.patch(
        [
            {"op": "remove", "path": "/BGP_NEIGHBOR/10.0.0.1"},
            {"op": "add", "path": "/BGP_NEIGHBOR/10.0.0.1", "value": row},
        ]
    )
    assert status == 2, "one patch's net effect is still an in-place change"
    sw.patch([{"op": "remove", "path": "/BGP_NEIGHBOR/10.0.0.1"}])
    assert sw.patch([{"op": "add", "path": "/BGP_NEIGHBOR/10.0.0.1", "value": row}])[2] == 0
    assert sim.state(sw.name).bgp.neighbors["10.0.0.1"].remote_as == 65300  # type: ignore[union-attr]
    assert " neighbor 10.0.0.1 remote-as 65300\n" in sw.running()["bgpraw"]


def test_multiasic_patch_is_scoped_by_namespace(sim: SwitchSim) -> None:
    """`/asic1/...` paths change that ASIC's config; unprefixed table paths fail validation."""
    sw = switch(sim, "sonic-202405-multiasic")
    ok = sw.patch([{"op": "replace", "path": "/asic1/PORT/Ethernet16/mtu", "value": "9000"}])
    assert ok[2] == 0, ok[1]
    assert sw.running()["asic1"]["PORT"]["Ethernet16"]["mtu"] == "9000"
    _o, err, status = sw.patch([{"op": "replace", "path": "/PORT/Ethernet16/mtu", "value": "1"}])
    assert status == 2 and "Validate json patch" in err


def test_checkpoint_and_rollback_over_exec(sim: SwitchSim) -> None:
    """A checkpoint, an applied patch and a rollback round-trip the config over exec."""
    sw = switch(sim, "sonic-202405")
    assert sw.run("sudo config checkpoint before")[2] == 0
    assert sw.patch([{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9000"}])[2] == 0
    assert sw.run("sudo config rollback before")[2] == 0
    assert sim.state(sw.name).interfaces["Ethernet0"].mtu == 9100
    assert json.loads(sw.run("sudo config list-checkpoints")[0]) == ["before"]


def test_lldp_table_and_lldpctl_json(sim: SwitchSim) -> None:
    """`show lldp table` and `docker exec lldp lldpctl -f json` report the spec's neighbours."""
    sw = switch(sim, "sonic-202405", LLDP)
    table = sw.run("show lldp table")[0]
    assert "Ethernet4  ARISTA02T2    Ethernet1" in table
    assert table.rstrip().endswith("Total entries displayed:  2")
    data = json.loads(sw.run("docker exec lldp lldpctl -f json")[0])
    entries = data["lldp"]["interface"]
    assert [next(iter(e)) for e in entries] == ["Ethernet0", "Ethernet4"]
    assert entries[1]["Ethernet4"]["port"]["id"] == {"type": "ifname", "value": "Ethernet1"}
    assert "ARISTA02T2" in entries[1]["Ethernet4"]["chassis"]


def test_lldpctl_json_collapses_a_single_neighbour(sim: SwitchSim) -> None:
    """With one neighbour lldpd's json format gives an object, json0 still a list."""
    sw = switch(sim, "sonic-202405", LLDP[:1])
    assert (
        "Ethernet0"
        in json.loads(sw.run("docker exec lldp lldpctl -f json")[0])["lldp"]["interface"]
    )
    listed = json.loads(sw.run("sudo docker exec -i lldp lldpctl -f json0")[0])
    assert isinstance(listed["lldp"]["interface"], list)


def test_interactive_session_still_works_with_a_profile(sim: SwitchSim) -> None:
    """netmiko's linux driver reads a profile's running config over the interactive shell."""
    sw = switch(sim, "sonic-202205")
    with ConnectHandler(
        device_type="linux",
        host="127.0.0.1",
        port=sim.port(sw.name),
        username="admin",
        password=PASSWORD,
        fast_cli=True,
    ) as conn:
        db = json.loads(str(conn.send_command("show runningconfiguration all", read_timeout=10)))
    assert db["DEVICE_METADATA"]["localhost"]["hwsku"] == "Mellanox-SN4600C-C64"

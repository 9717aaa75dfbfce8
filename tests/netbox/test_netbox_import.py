"""`plumb inventory import netbox` against a real NetBox 4.7 filled through pynetbox."""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchmarks.genfleet import generate_fleet
from intent.fleet import load_fleet
from inventory.netbox_write import read_owned
from plumb.cli import app
from tests.netbox.populate import client, push_fleet, small_fabric

pytestmark = pytest.mark.slow

EXPECTED_BACKEND = """\
# yaml-language-server: $schema=../../schemas/inventory.schema.json
# Backend cables (lengths in metres). Imported from NetBox by `plumb inventory import netbox`:
# change them in NetBox and import again; edits made here are overwritten.
links:
  - {a: gpu-n01, a_port: eth0, b: leaf-r0, b_port: Ethernet1, class: host-leaf, length_m: 3.5, speed_gbps: 400}
  - {a: gpu-n01, a_port: eth1, b: leaf-r1, b_port: Ethernet1, class: host-leaf, length_m: 3.048, speed_gbps: 400}
  - {a: gpu-n02, a_port: eth0, b: leaf-r0, b_port: Ethernet2, class: host-leaf, length_m: 2.5, speed_gbps: 400}
  - {a: gpu-n02, a_port: eth1, b: leaf-r1, b_port: Ethernet2, class: host-leaf, length_m: 4.0, speed_gbps: 400}
  - {a: leaf-r0, a_port: Ethernet33, b: spine-1, b_port: Ethernet1, class: leaf-spine, length_m: 22.0, speed_gbps: 400}
  - {a: leaf-r1, a_port: Ethernet33, b: spine-1, b_port: Ethernet2, class: leaf-spine, length_m: 20.5, speed_gbps: 400}
"""  # noqa: E501 (one cable a line, as the importer writes them)

EXPECTED_NODE = """\
  - name: gpu-n01
    role: gpu-node
    vendor: halcyon
    model: HX8
    platform: linux
    rack: gpu-r01
    mgmt: 198.18.3.1
    gpus: 8
    nics:
      - {name: eth0, speed_gbps: 400, rail: 0}
      - {name: eth1, speed_gbps: 400, rail: 1}
"""


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str


def plumb(*args: str, token: str | None = None) -> Run:
    env = {"NETBOX_TOKEN": token} if token is not None else {"NETBOX_TOKEN": ""}
    result = CliRunner().invoke(app, list(args), env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Run(result.exit_code, result.stdout, result.stderr)


def new_repo(tmp_path: Path, extra: str = "") -> Path:
    repo = tmp_path / "fleet"
    repo.mkdir()
    (repo / "plumb.yaml").write_text(f"fleet: nb\n{extra}")
    return repo


def snapshot(repo: Path) -> dict[str, bytes]:
    return {
        p.relative_to(repo).as_posix(): p.read_bytes()
        for p in sorted((repo / "inventory").rglob("*.yaml"))
    }


def test_import_writes_the_inventory_reimports_byte_for_byte_and_check_names_drift(
    netbox_url: str, tmp_path: Path
) -> None:
    """Cables in m, cm and ft land in metres with the lowest tier as ``a``; a second
    import changes no byte and --check exits 0; after a cable length changes and a device
    is added in NetBox, --check exits 1 naming both (text and JSON) and writes nothing."""
    api = client(netbox_url)
    objects = small_fabric(api)
    repo = new_repo(tmp_path)
    token_file = tmp_path / "token"
    token_file.write_text(f"{api.token}\n")
    token_file.chmod(0o600)
    args = ("inventory", "import", "netbox", netbox_url, str(repo))
    first = plumb(*args, "--token-file", str(token_file))
    assert first.exit_code == 0, first.stderr
    assert first.stdout.splitlines()[0] == f"netbox {netbox_url}: 2 racks, 5 devices, 6 links"
    assert first.stdout.splitlines()[-1] == "wrote 5 file(s)"
    assert (repo / "inventory/links/backend.yaml").read_text() == EXPECTED_BACKEND
    assert EXPECTED_NODE in (repo / "inventory/devices/nodes.yaml").read_text()
    assert "rail: 1\n" in (repo / "inventory/devices/leaves.yaml").read_text()
    before = snapshot(repo)
    again = plumb(*args, token=api.token)
    assert (again.exit_code, again.stdout.splitlines()[-1]) == (
        0,
        "unchanged: the inventory files already match NetBox",
    )
    assert snapshot(repo) == before
    check = plumb(*args, "--check", token=api.token)
    assert (check.exit_code, check.stdout.splitlines()[-1]) == (
        0,
        "in sync: the inventory files match NetBox",
    )

    moved = objects["gpu-n01:eth0--leaf-r0:Ethernet1"]
    moved.length = 7
    moved.save()
    new = api.dcim.devices.create(
        name="gpu-n03",
        device_type=objects["types"]["hx8"].id,
        role=objects["roles"]["gpu-node"].id,
        site=objects["site"].id,
        platform=objects["platforms"]["linux"].id,
        rack=objects["racks"]["gpu-r01"].id,
        status="active",
    )
    port = api.dcim.interfaces.create(
        device=new.id, name="mgmt0", type="1000base-t", mgmt_only=True
    )
    ip = api.ipam.ip_addresses.create(
        address="198.18.3.3/24", assigned_object_type="dcim.interface", assigned_object_id=port.id
    )
    new.primary_ip4 = ip.id
    new.save()
    check = plumb(*args, "--check", token=api.token)
    assert check.exit_code == 1, check.stderr
    lines = check.stdout.splitlines()
    assert "~ link gpu-n01:eth0 -- leaf-r0:Ethernet1: length_m 3.5 -> 7.0" in lines
    assert "+ device gpu-n03: in NetBox, not in plumb" in lines
    assert "  update inventory/devices/nodes.yaml" in lines
    assert lines[-1].startswith("drift: 2 record(s), 2 file(s) differ from NetBox")
    report = json.loads(plumb(*args, "--check", "--format", "json", token=api.token).stdout)
    assert report["in_sync"] is False and report["written"] is False
    assert {(r["kind"], r["key"], r["change"]) for r in report["records"]} == {
        ("link", "gpu-n01:eth0 -- leaf-r0:Ethernet1", "changed"),
        ("device", "gpu-n03", "added"),
    }
    assert snapshot(repo) == before


@pytest.mark.timeout(600)  # 68 cables: NetBox traces each one's path as it is created
def test_a_fleet_pushed_to_netbox_imports_back_and_validates(
    netbox_url: str, tmp_path: Path
) -> None:
    """A generated 4-node fleet written into NetBox, its inventory files removed, then
    imported: plumb validate passes and --check reports it in sync."""
    repo = tmp_path / "fleet"
    generate_fleet(repo, 4)
    api = client(netbox_url)
    push_fleet(api, load_fleet(repo))
    for path in read_owned(repo):
        (repo / path).unlink()
    url = netbox_url
    imported = plumb("inventory", "import", "netbox", url, str(repo), token=api.token)
    assert imported.exit_code == 0, imported.stderr
    assert "17 devices, 68 links" in imported.stdout.splitlines()[0]
    validated = plumb("validate", str(repo))
    assert validated.exit_code == 0, validated.stdout + validated.stderr
    check = plumb("inventory", "import", "netbox", url, str(repo), "--check", token=api.token)
    assert check.exit_code == 0, check.stdout


def test_token_url_and_mapping_problems_are_one_line_errors(
    netbox_url: str, tmp_path: Path
) -> None:
    """A refused token, a closed port, a world-readable token file and a device whose
    role plumb cannot map each exit 2 with one message and no traceback; the token is
    never printed; mapping the role to null leaves the device out."""
    api = client(netbox_url)
    repo = new_repo(tmp_path)
    args = ("inventory", "import", "netbox", netbox_url, str(repo))
    wrong = "nbt_0123456789ab.wrongwrongwrongwrongwrongwrongwrongwrong"
    refused = plumb(*args, token=wrong)
    assert refused.exit_code == 2
    assert "refused the token (HTTP 403)" in refused.stderr
    assert "wrongwrong" not in refused.stdout + refused.stderr
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    unreachable = plumb(
        "inventory", "import", "netbox", f"http://127.0.0.1:{closed}", str(repo), token=api.token
    )
    assert (unreachable.exit_code, unreachable.stderr) == (
        2,
        f"error: cannot reach NetBox at http://127.0.0.1:{closed} (ConnectionError)\n",
    )
    open_file = tmp_path / "token"
    open_file.write_text(api.token)
    open_file.chmod(0o644)
    loose = plumb(*args, "--token-file", str(open_file))
    assert loose.exit_code == 2 and "has mode 0644" in loose.stderr
    assert api.token not in loose.stderr
    role = api.dcim.device_roles.create(name="pdu", slug="pdu", color="ff0000")
    maker = api.dcim.manufacturers.create(name="servertech", slug="servertech")
    kind = api.dcim.device_types.create(manufacturer=maker.id, model="PRO2", slug="pro2")
    site = api.dcim.sites.create(name="dc1", slug="dc1", status="active")
    pdu = api.dcim.devices.create(
        name="pdu-1", device_type=kind.id, role=role.id, site=site.id, status="active"
    )
    unmapped = plumb(*args, token=api.token)
    assert (unmapped.exit_code, unmapped.stderr) == (
        2,
        f"error: dcim.device {pdu.id} (pdu-1): role 'pdu' has no plumb role; map it under"
        " sources.netbox.roles in plumb.yaml (null: not imported)\n",
    )
    assert not (repo / "inventory").exists()
    (repo / "plumb.yaml").write_text("fleet: nb\nsources:\n  netbox:\n    site: dc9\n")
    no_site = plumb(*args, token=api.token)
    assert no_site.exit_code == 2
    assert no_site.stderr.startswith(f"error: NetBox at {netbox_url} refused the query (HTTP 400)")
    assert "dc9" in no_site.stderr
    (repo / "plumb.yaml").write_text("fleet: nb\nsources:\n  netbox:\n    roles: {pdu: null}\n")
    mapped = plumb(*args, token=api.token)
    assert mapped.exit_code == 0, mapped.stderr
    assert mapped.stdout.splitlines()[0] == f"netbox {netbox_url}: 0 racks, 0 devices, 0 links"
    assert not (repo / "inventory").exists()

"""A loaded fleet's records share the sets of the field names they were given (one per
model class and way of writing it), and a copy of one still gets a set of its own."""

from __future__ import annotations

from inventory.models import InventoryFile
from inventory.source import parse_text
from inventory.validation import validate_document

CABLES = b"""
devices:
  - {name: leaf-1, role: leaf, vendor: arista, model: 7060DX5-64S, platform: eos, rack: r1,
     mgmt: 10.0.0.1}
  - name: node-1
    mgmt: 10.0.0.2
    role: gpu-node
    vendor: nvidia
    model: HX8
    platform: linux
    rack: r1
    nics:
      - {name: eth0, speed_gbps: 400, rail: 0}
      - {name: eth1, speed_gbps: 400, rail: 1}
      - {name: fe0, speed_gbps: 200}
links:
  - {a: node-1, a_port: eth0, b: leaf-1, b_port: Ethernet1, class: host-leaf, length_m: 3.0}
  - {a: node-1, a_port: eth1, b: leaf-1, b_port: Ethernet2, class: host-leaf, length_m: 4.0}
  - {a: node-1, a_port: fe0, b: leaf-1, b_port: Ethernet3, class: host-leaf, length_m: 5.0,
     speed_gbps: 200}
"""


def test_records_written_alike_share_one_set_of_field_names() -> None:
    inventory = validate_document(parse_text("i.yaml", CABLES), InventoryFile)
    first, second, third = inventory.links
    assert first.model_fields_set is second.model_fields_set
    assert third.model_fields_set == first.model_fields_set | {"speed_gbps"}
    nics = inventory.devices[1].nics
    assert nics[0].model_fields_set is nics[1].model_fields_set
    assert nics[2].model_fields_set == {"name", "speed_gbps"}


def test_a_copy_gets_a_set_of_its_own() -> None:
    inventory = validate_document(parse_text("i.yaml", CABLES), InventoryFile)
    first, second, _ = inventory.links
    moved = first.model_copy(update={"speed_gbps": 400})
    assert "speed_gbps" in moved.model_fields_set
    assert "speed_gbps" not in first.model_fields_set | second.model_fields_set

"""JSON Schemas of the fleet repo files: generated from the models plumb validates with,
committed next to the example, accepting every example file and refusing what plumb
refuses (unknown keys included)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ci.schemas import FILE_KINDS, schema_for
from inventory.problems import InputError
from inventory.source import parse_text
from inventory.validation import validate_document

ROOT = Path(__file__).resolve().parent.parent
ORION = ROOT / "examples" / "orion"
COMMITTED = ORION / "schemas"
MODELINE = re.compile(r"^# yaml-language-server: \$schema=(\S+)$")
EXAMPLE_FILES = sorted(p.relative_to(ORION).as_posix() for p in ORION.rglob("*.yaml"))


def validator(kind: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema_for(kind))


def schema_errors(kind: str, yaml_text: str) -> list[str]:
    """Messages of every schema error, including those under anyOf branches."""
    data = parse_text(f"{kind}.yaml", yaml_text.encode()).data
    messages: list[str] = []
    pending = list(validator(kind).iter_errors(data))
    while pending:
        error = pending.pop()
        messages.append(error.message)
        pending.extend(error.context or ())
    return messages


def plumb_refuses(kind: str, yaml_text: str) -> bool:
    doc = parse_text(f"{kind}.yaml", yaml_text.encode())
    try:
        validate_document(doc, FILE_KINDS[kind])
    except InputError:
        return True
    return False


def test_schema_command_writes_a_schema_per_file_kind(tmp_path: Path) -> None:
    """``plumb schema --out DIR`` writes one Draft 2020-12 schema per file kind."""
    done = subprocess.run(
        [str(Path(sys.executable).with_name("plumb")), "schema", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    names = ["plumb", "inventory", "intent", "waivers", "rollout"]
    assert done.stdout.splitlines() == [str(tmp_path / f"{n}.schema.json") for n in names]
    for name in names:
        schema = json.loads((tmp_path / f"{name}.schema.json").read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["$id"] == f"https://plumb.invalid/schemas/{name}.schema.json"


@pytest.mark.parametrize("kind", list(FILE_KINDS))
def test_committed_schemas_are_current(kind: str) -> None:
    """The example's committed schemas equal freshly generated ones, byte for byte."""
    committed = (COMMITTED / f"{kind}.schema.json").read_text()
    assert committed == json.dumps(schema_for(kind), indent=2, sort_keys=True) + "\n", (
        "regenerate with: plumb schema --out examples/orion/schemas"
    )


@pytest.mark.parametrize("relative", EXAMPLE_FILES)
def test_example_file_validates_against_its_modeline_schema(relative: str) -> None:
    """Each example YAML names its schema in a modeline, and validates against it."""
    raw = (ORION / relative).read_bytes()
    first_line = raw.decode().splitlines()[0]
    match = MODELINE.match(first_line)
    assert match, f"{relative} has no yaml-language-server modeline"
    schema_path = ((ORION / relative).parent / match.group(1)).resolve()
    assert schema_path.parent == COMMITTED.resolve()
    schema = json.loads(schema_path.read_text())
    data = parse_text(relative, raw).data
    errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(data)]
    assert errors == []


@pytest.mark.parametrize(
    ("kind", "yaml_text"),
    [
        ("intent", "mut: {}\n"),
        ("intent", "mtu: {host-leaf: {host: 9000, rdma_mtu: 4096}}\n"),
        ("intent", "groups: [{name: g, match: {names: ['*']}, set: {}, when: always}]\n"),
        (
            "inventory",
            "links: [{a: x, a_port: e1, b: y, b_port: e2, class: frontend,"
            " length_m: 1.0, colour: blue}]\n",
        ),
        ("plumb", "fleet: orion\ndefaults: {link_speed: 400}\n"),
        (
            "waivers",
            "waivers: [{policy: p, subject: s, reason: r, expires: 2027-01-01, owner: me}]\n",
        ),
    ],
    ids=["top-level", "mtu-layer", "group", "link", "defaults", "waiver"],
)
def test_unknown_key_fails_the_schema_too(kind: str, yaml_text: str) -> None:
    """A key plumb does not know is refused by the JSON Schema as well."""
    assert plumb_refuses(kind, yaml_text)
    assert any("Additional properties are not allowed" in e for e in schema_errors(kind, yaml_text))


@pytest.mark.parametrize(
    ("kind", "yaml_text"),
    [
        ("intent", "devices: {'bad name!': {}}\n"),
        ("intent", "bgp: {leaf_asns: {'-leaf': 64601}}\n"),
        (
            "inventory",
            "devices: [{name: d, role: leaf, vendor: v, model: m, platform: eos,"
            " rack: r, mgmt: 10.0.0.1, labels: {'not ok': x}}]\n",
        ),
    ],
    ids=["device-name", "leaf-asn-name", "label"],
)
def test_mapping_key_plumb_refuses_fails_the_schema_too(kind: str, yaml_text: str) -> None:
    """A name-keyed mapping refuses, in the schema as in plumb, a key that is not a name."""
    assert plumb_refuses(kind, yaml_text)
    assert schema_errors(kind, yaml_text)


@pytest.mark.parametrize(
    "host",
    ['"9000"', "9000.5", "true", "99999", "null"],
    ids=["string", "float", "bool", "too-big", "null"],
)
def test_schema_and_plumb_agree_on_a_value(host: str) -> None:
    """For a host MTU, the schema accepts exactly what plumb accepts."""
    text = f"mtu: {{host-leaf: {{host: {host}}}}}\n"
    assert (not schema_errors("intent", text)) == (not plumb_refuses("intent", text))


def test_link_class_is_spelled_class_in_the_schema() -> None:
    """The link class is the ``class`` key, as written in the inventory files."""
    link: dict[str, Any] = schema_for("inventory")["$defs"]["Link"]
    assert "class" in link["properties"] and "class" in link["required"]
    assert "link_class" not in link["properties"]

"""The compact ORION example: generated, clean, the same fleet as examples/orion, and
expandable back into records by ``plumb inventory expand``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import date
from pathlib import Path

import jsonschema
import pytest

from benchmarks.genfleet import generate_fleet
from intent.fleet import load_fleet
from inventory.source import parse_text
from plumb.cli import run_validation

ROOT = Path(__file__).resolve().parents[1]
COMPACT = ROOT / "examples" / "orion-compact"
MODELINE = re.compile(r"^# yaml-language-server: \$schema=(\S+)$")
PLUMB = str(Path(sys.executable).with_name("plumb"))


def test_the_example_is_the_compact_generator_output(tmp_path: Path) -> None:
    """examples/orion-compact is ``genfleet.py --nodes 32 --compact``, file for file."""
    generate_fleet(tmp_path, 32, compact=True)
    made = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert made
    for relative in made:
        assert (COMPACT / relative).read_bytes() == (tmp_path / relative).read_bytes(), relative


def test_the_example_validates_clean() -> None:
    """No problems, no violations."""
    outcome = run_validation(COMPACT, today=date(2026, 12, 1))
    assert outcome.problems == ()
    assert outcome.report is not None and outcome.report.violations == ()


def test_the_topology_file_validates_against_its_modeline_schema() -> None:
    """Editors validate the compact section with the committed inventory schema."""
    relative = "inventory/topology.yaml"
    raw = (COMPACT / relative).read_bytes()
    match = MODELINE.match(raw.decode().splitlines()[0])
    assert match
    schema = json.loads(((COMPACT / relative).parent / match.group(1)).read_text())
    data = parse_text(relative, raw).data
    assert [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(data)] == []
    bad = dict(data, topology={**data["topology"], "rack": []})
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(bad))


@pytest.mark.parametrize("format", ["text", "json"])
def test_expand_writes_records_that_load_to_the_same_fleet(tmp_path: Path, format: str) -> None:
    """``plumb inventory expand --out`` writes an ordinary record file; put in place of
    the topology file, the fleet loads the same."""
    out = tmp_path / "out"
    done = subprocess.run(
        [PLUMB, "inventory", "expand", str(COMPACT), "--out", str(out), "--format", format],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    written = out / "inventory" / "topology.yaml"
    if format == "json":
        assert json.loads(done.stdout) == {"written": [str(written)]}
    else:
        assert done.stdout == f"wrote {written}\n"
    text = written.read_text()
    assert "\ntopology:" not in text and text.count("\n  - {a: ") == 544
    repo = tmp_path / "repo"
    subprocess.run(["cp", "-r", str(COMPACT), str(repo)], check=True)
    (repo / "inventory" / "topology.yaml").write_text(text)
    expanded, compact = load_fleet(repo), load_fleet(COMPACT)
    assert list(expanded.devices.items()) == list(compact.devices.items())
    assert expanded.links == compact.links
    assert list(expanded.racks.items()) == list(compact.racks.items())


def test_expand_of_a_broken_section_exits_2_at_the_line(tmp_path: Path) -> None:
    """A section that does not expand: file:line:col on stderr, exit 2, nothing written."""
    repo = tmp_path / "repo"
    subprocess.run(["cp", "-r", str(COMPACT), str(repo)], check=True)
    topology = repo / "inventory" / "topology.yaml"
    text = topology.read_text().replace("a_port: eth{r}", "a_port: eth{q}", 1)
    topology.write_text(text)
    line = next(i + 1 for i, s in enumerate(text.splitlines()) if "eth{q}" in s)
    done = subprocess.run(
        [PLUMB, "inventory", "expand", str(repo), "--out", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith(
        f"inventory/topology.yaml:{line}:15: a_port: unknown name 'q' (known here:"
    ), done.stderr
    assert not (tmp_path / "out").exists()

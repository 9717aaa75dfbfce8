"""The located YAML loader: values keep file:line:col, and hostile input is refused
with a clear, located error in bounded time and memory."""

from __future__ import annotations

import os
import re
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inventory.loadfile import load_document
from inventory.problems import InputError
from inventory.source import MAX_FILE_BYTES, parse_text, resolve_plain


def _error(raw: bytes, path: str = "f.yaml") -> str:
    with pytest.raises(InputError) as caught:
        parse_text(path, raw)
    return str(caught.value)


def test_locations_point_at_values_and_keys() -> None:
    """Every value and key reports its 1-based line and column."""
    doc = parse_text("x.yaml", b"a:\n  b: [1, 2]\n  c: {d: hello}\n")
    assert str(doc.where("a", "b", 1)) == "x.yaml:2:10"
    assert str(doc.where("a", "c", "d")) == "x.yaml:3:10"
    assert str(doc.key_where("a", "c")) == "x.yaml:3:3"
    assert str(doc.where("a", "missing")) == "x.yaml:2:3"


def test_yaml_12_core_schema_keeps_norway_a_string() -> None:
    """Plain scalars resolve by YAML 1.2: yes/on/no stay strings, versions stay strings."""
    doc = parse_text("x.yaml", b"a: [yes, no, on, true, 012, 0x1F, 1.5, 4.32.2F, ~, '12']\n")
    assert doc.data["a"] == ["yes", "no", "on", True, 12, 31, 1.5, "4.32.2F", None, "12"]


@given(st.integers(min_value=-(10**12), max_value=10**12))
def test_integers_round_trip(value: int) -> None:
    """Any decimal integer written plainly reads back as that integer."""
    assert resolve_plain(str(value)) == value


def _core_schema(text: str) -> object:
    """A plain scalar by the YAML 1.2 core schema's own regular expressions (10.3.2)."""
    if re.fullmatch(r"[-+]?[0-9]+", text):
        return int(text)
    if re.fullmatch(r"0o[0-7]+", text):
        return int(text[2:], 8)
    if re.fullmatch(r"0x[0-9a-fA-F]+", text):
        return int(text[2:], 16)
    if re.fullmatch(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?", text):
        return float(text)
    return text


@given(st.from_regex(r"[0-9][0-9.eEox+\-a-fA-F/]{0,12}", fullmatch=True))
def test_a_scalar_starting_with_a_digit_resolves_by_the_core_schema(text: str) -> None:
    """Counts, lengths, versions and addresses (a digit first) resolve as the core schema
    says, as a value of a mapping, an item of a list and on their own."""
    expected = _core_schema(text)
    assert resolve_plain(text) == expected
    doc = parse_text("n.yaml", f"k: {text}\nl: [{text}]\n".encode())
    assert doc.data == {"k": expected, "l": [expected]}


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40))
def test_quoted_strings_stay_strings(text: str) -> None:
    """A double-quoted scalar is always the exact string, whatever it contains."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    escaped = "".join(c if c.isprintable() else f"\\U{ord(c):08x}" for c in escaped)
    assert parse_text("q.yaml", f'k: "{escaped}"\n'.encode()).data["k"] == text


def test_duplicate_keys_name_both_lines() -> None:
    """A key given twice is an error at the second, naming the first line."""
    message = _error(b"mtu: 1\nqos: 2\nmtu: 3\n")
    assert "f.yaml:3:1: duplicate key 'mtu' (first defined at line 1)" in message


def test_syntax_error_has_a_location() -> None:
    """Broken YAML reports the line and column the parser stopped at."""
    message = _error(b"a: [1, 2\nb: 3\n")
    assert message.startswith("f.yaml:") and "YAML syntax" in message


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        (b'fleet: orion\nstate_dir: .plumb\ndescription: "a\x01b"\n', "f.yaml:3:16"),
        (b"a: 1\nb: x\x07\n", "f.yaml:2:5"),
        ("\ufeffa: 1\nbb: caf\u00e9\x1b\n".encode(), "f.yaml:2:9"),
    ],
)
def test_a_control_character_is_reported_where_it_is(raw: bytes, where: str) -> None:
    """A control character YAML forbids is reported at its own line and column."""
    message = _error(raw)
    assert message.startswith(f"{where}: YAML syntax: control character U+00"), message
    assert "is not allowed" in message


def test_billion_laughs_is_refused_before_it_expands() -> None:
    """An alias bomb (9**9 nodes expanded) stops at the expansion limit: refused, with
    memory bounded (a measure of work done that no machine load moves)."""
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        refs = ",".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    tracemalloc.start()
    message = _error(("\n".join(lines) + "\n").encode())
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert "alias bomb" in message
    assert peak < 50 * 1024 * 1024


def test_non_utf8_bytes_are_located() -> None:
    """Invalid UTF-8 is reported at its line and column with the offending byte."""
    message = _error(b"a: 1\nb: caf\xe9\n")
    assert "f.yaml:2:7: not UTF-8: byte 0xe9" in message


def test_python_tags_are_refused() -> None:
    """Explicit non-standard tags (object constructors) are refused, not executed."""
    message = _error(b"a: !!python/object/apply:os.system ['true']\n")
    assert "tag tag:yaml.org,2002:python/object/apply:os.system is not allowed" in message


def test_multiple_documents_are_refused() -> None:
    """One file holds one document."""
    assert "more than one YAML document" in _error(b"a: 1\n---\nb: 2\n")


def test_deep_nesting_is_refused() -> None:
    """Nesting beyond the depth limit is an error, not a recursion crash."""
    assert "nesting deeper than" in _error(b"a: " + b"[" * 200 + b"]" * 200 + b"\n")


def test_empty_file_reads_as_nothing() -> None:
    """An empty file has no data; the schema layer turns that into 'file is empty'."""
    assert parse_text("e.yaml", b"").data is None
    assert parse_text("e.yaml", b"# only a comment\n").data is None


def test_oversize_file_is_refused_before_reading(tmp_path: Path) -> None:
    """A 50 MB file is refused by size, in bounded time and memory."""
    big = tmp_path / "big.yaml"
    with big.open("wb") as out:
        out.truncate(50 * 1024 * 1024)
    tracemalloc.start()
    with pytest.raises(InputError) as caught:
        load_document(tmp_path, Path("big.yaml"))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert f"the limit is {MAX_FILE_BYTES:,}" in str(caught.value)
    assert peak < 5 * 1024 * 1024  # never read: bounded whatever the machine's load


def test_symlink_outside_the_repo_is_refused(tmp_path: Path) -> None:
    """A symlink that leaves the fleet repo is refused with the target named."""
    outside = tmp_path / "secret.yaml"
    outside.write_text("a: 1\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    os.symlink(outside, repo / "link.yaml")
    with pytest.raises(InputError) as caught:
        load_document(repo, Path("link.yaml"))
    assert "link.yaml:1:1: points outside the fleet repo" in str(caught.value)

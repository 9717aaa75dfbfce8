"""Parsed bulk files are kept by content hash: the same bytes are read back with the
same data and locations, changed bytes are parsed again, a damaged or unwritable cache
falls back to parsing, and problems are never kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from inventory.loadfile import load_document
from inventory.parsecache import CACHE_ENV, MIN_BYTES, entry_path, parse_cached
from inventory.problems import InputError
from inventory.source import Document, parse_text


def _bulk(count: int, first: str = "leaf-001") -> bytes:
    """A links file over the size worth caching."""
    rows = [
        f"  - {{a: {first}, a_port: Ethernet{i}, b: gpu-{i:05d}, b_port: eth0}}"
        for i in range(count)
    ]
    text = "links:\n" + "\n".join(rows) + "\n"
    assert len(text) >= MIN_BYTES
    return text.encode()


class Counting:
    """parse_text, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, path: str, raw: bytes) -> Document:
        self.calls += 1
        return parse_text(path, raw)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(cache))
    return cache


def test_same_bytes_are_read_back_with_their_locations(folder: Path) -> None:
    """The second parse of the same bytes is the cache's, equal in data and locations."""
    raw, parse = _bulk(2000), Counting()
    first = parse_cached("inventory/links.yaml", raw, parse)
    again = parse_cached("inventory/other.yaml", raw, parse)
    assert parse.calls == 1
    assert again.data == first.data and again.locs == first.locs
    assert again.path == "inventory/other.yaml"
    line = raw.decode().splitlines()[2000]
    at = again.where("links", 1999, "b")
    assert (at.file, at.line, at.col) == ("inventory/other.yaml", 2001, line.index("gpu-01999") + 1)


def test_changed_bytes_are_parsed_again(folder: Path) -> None:
    """One changed character makes another entry."""
    parse = Counting()
    parse_cached("l.yaml", _bulk(2000), parse)
    changed = parse_cached("l.yaml", _bulk(2000, first="leaf-002"), parse)
    assert parse.calls == 2
    assert changed.data["links"][0]["a"] == "leaf-002"


def test_a_damaged_entry_is_parsed_and_replaced(folder: Path) -> None:
    """Garbage in an entry is passed over, and the entry is written anew."""
    raw, parse = _bulk(2000), Counting()
    parse_cached("l.yaml", raw, parse)
    entry = entry_path(folder, raw)
    entry.write_bytes(b"\x00garbage")
    doc = parse_cached("l.yaml", raw, parse)
    assert parse.calls == 2 and doc.data["links"][5]["b"] == "gpu-00005"
    parse_cached("l.yaml", raw, parse)
    assert parse.calls == 2


def test_an_unwritable_cache_still_parses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache path that cannot be a folder costs only the cache."""
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(CACHE_ENV, str(blocker / "cache"))
    parse = Counting()
    for _ in range(2):
        assert parse_cached("l.yaml", _bulk(2000), parse).data["links"][0]["a"] == "leaf-001"
    assert parse.calls == 2


def test_off_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """PLUMB_CACHE_DIR=off parses every time."""
    monkeypatch.setenv(CACHE_ENV, "off")
    parse = Counting()
    parse_cached("l.yaml", _bulk(2000), parse)
    parse_cached("l.yaml", _bulk(2000), parse)
    assert parse.calls == 2


def test_a_file_with_a_problem_fails_every_time(folder: Path) -> None:
    """A YAML error is reported again on the next load, at its line."""
    raw = _bulk(2000) + b"  - {a: x, a: y}\n"
    for _ in range(2):
        with pytest.raises(InputError) as caught:
            parse_cached("l.yaml", raw, parse_text)
        assert "duplicate key 'a'" in str(caught.value.problems[0])
        assert caught.value.problems[0].location.line == 2002
    assert not list(folder.glob("*.marshal"))


def test_load_document_uses_it(folder: Path, tmp_path: Path) -> None:
    """Loading a bulk file from a repo twice parses it once; small files are not kept."""
    repo = tmp_path / "repo"
    (repo / "inventory").mkdir(parents=True)
    (repo / "inventory" / "links.yaml").write_bytes(_bulk(2000))
    (repo / "inventory" / "racks.yaml").write_text("racks: []\n")
    for _ in range(2):
        load_document(repo, Path("inventory/links.yaml"))
        load_document(repo, Path("inventory/racks.yaml"))
    assert len(list(folder.glob("*.marshal"))) == 1


def test_a_kept_document_reads_its_locations_and_data_back(folder: Path) -> None:
    """A document from the cache holds its data but not its location tree, read from the
    entry when a location is asked for; kept without data, it reads the data back too.
    Should the entry be gone by then, the bytes are parsed again."""
    raw, parse = _bulk(2000), Counting()
    parse_cached("l.yaml", raw, parse)
    doc = parse_cached("l.yaml", raw, parse)
    assert parse.calls == 1
    assert doc.held_locs is None
    kept = doc.without_data()
    assert kept.held_data is not doc.held_data and kept.data == doc.data
    assert kept.where("links", 7, "a_port").line == 9
    assert kept.held_locs is not None and doc.held_locs is None
    entry_path(folder, raw).unlink()
    gone = parse_cached("l.yaml", _bulk(2000, first="leaf-002"), parse).without_data()
    for path in folder.glob("*.marshal"):
        path.unlink()
    assert gone.data["links"][0]["a"] == "leaf-002"
    assert gone.where("links", 1999, "b").line == 2001
    assert parse.calls == 4


def test_a_parsed_document_is_kept_without_its_tree(folder: Path) -> None:
    """The first parse writes the entry and leaves its location tree there."""
    doc = parse_cached("l.yaml", _bulk(2000), parse_text)
    assert doc.held_locs is None and doc.where("links", 0).line == 2


def test_the_first_parse_is_returned_as_the_entry_holds_it(folder: Path) -> None:
    """A file parsed and kept comes back as its entry reads (as the next run reads it):
    equal to the parse, its data in the entry's order, the parser called once."""
    raw, parse = _bulk(2000), Counting()
    first = parse_cached("l.yaml", raw, parse)
    parsed = parse_text("l.yaml", raw)
    assert first.data == parsed.data and first.locs == parsed.locs
    assert first.stored is not None and parse.calls == 1

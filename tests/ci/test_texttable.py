"""Plain-text tables: columns as wide as their cells, the same lines in a terminal, a
pipe or a CI log, cells taken as text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci.texttable import GAP, Column, _rich_lines, table_lines, table_text


def test_columns_line_up_numbers_to_the_right() -> None:
    """Header first, left text, right numbers, two spaces between, nothing after."""
    text = table_text(
        (Column("id"), Column("size", "right"), Column("reason")),
        [("a1", 3, "held"), ("bbbbb", 12345, "")],
        indent=2,
    )
    assert text == ("  id      size  reason\n  a1         3  held\n  bbbbb  12345\n")


def test_without_header_and_without_rows() -> None:
    """No header: rows only; no rows: the header alone, or nothing."""
    columns = (Column("a"), Column("b"))
    assert table_lines(columns, [("x", "y")], header=False) == ["x  y"]
    assert table_lines(columns, []) == ["a  b"]
    assert table_lines(columns, [], header=False) == []


def test_cells_are_text_not_markup() -> None:
    """A cell holding rich markup or an emoji code prints as written."""
    cells = ("[bold]x[/]", ":smile: [pending 4]")
    [line] = table_lines((Column(), Column()), [cells], header=False)
    assert line == "[bold]x[/]  :smile: [pending 4]"


def test_long_lines_are_neither_wrapped_nor_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    """A narrow terminal (COLUMNS=40) does not wrap a 5,000-character cell."""
    monkeypatch.setenv("COLUMNS", "40")
    long = "x" * 5000
    assert table_lines((Column(), Column()), [("id", long)], header=False) == [f"id  {long}"]


def test_no_colour_even_when_forced(monkeypatch: pytest.MonkeyPatch) -> None:
    """FORCE_COLOR and a colour terminal do not put escape codes into the text."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("NO_COLOR", raising=False)
    text = table_text((Column("n", "right"), Column("state")), [(1, "FAILED"), (22, "ok")])
    assert "\x1b" not in text
    assert text == " n  state\n 1  FAILED\n22  ok\n"


_printable = st.characters(min_codepoint=32, max_codepoint=126)
_cells = st.text(alphabet=_printable, max_size=12).map(str.strip)  # as plumb's cells are


@settings(max_examples=100, deadline=None)
@given(
    rows=st.integers(1, 4).flatmap(
        lambda width: st.lists(st.lists(_cells, min_size=width, max_size=width), max_size=6)
    ),
    right=st.lists(st.booleans(), min_size=4, max_size=4),
)
def test_every_cell_sits_in_its_column(rows: list[list[str]], right: list[bool]) -> None:
    """Each column is as wide as its widest cell (header included); every cell starts
    (left) or ends (right) at its column's edge, columns GAP apart."""
    width = len(rows[0]) if rows else 1
    headers = [f"h{i}" for i in range(width)]
    columns = [Column(h, "right" if r else "left") for h, r in zip(headers, right, strict=False)]
    lines = table_lines(columns, rows)
    widths = [max(len(c) for c in column) for column in zip(headers, *rows, strict=True)]
    for line, cells in zip(lines, [headers, *rows], strict=True):
        start = 0
        for column, cell, wide in zip(columns, cells, widths, strict=True):
            field = line[start : start + wide].ljust(wide)
            assert field == (cell.rjust(wide) if column.justify == "right" else cell.ljust(wide))
            start += wide + GAP
        assert line == line.rstrip()


_any_cells = st.one_of(
    _cells,
    st.text(alphabet=st.sampled_from(" ab-[]:é中\t"), max_size=6),  # rich lays these out
)


@settings(max_examples=300, deadline=None)
@given(
    table=st.integers(1, 4).flatmap(
        lambda width: st.tuples(
            st.lists(st.tuples(_any_cells, st.booleans()), min_size=width, max_size=width),
            st.lists(st.lists(_any_cells, min_size=width, max_size=width), max_size=5),
        )
    ),
    header=st.booleans(),
    indent=st.integers(0, 2),
)
def test_the_plain_layout_is_the_same_as_richs(
    table: tuple[list[tuple[str, bool]], list[list[str]]], header: bool, indent: int
) -> None:
    """A table of plain cells is laid out without rich, to the very lines rich gives
    (rich itself is the reference); other tables are rich's own."""
    heads, rows = table
    columns = [Column(h, "right" if right else "left") for h, right in heads]
    expected = _rich_lines(columns, rows, header=header, indent=indent)
    assert table_lines(columns, rows, header=header, indent=indent) == expected

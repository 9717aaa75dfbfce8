"""Plain-text tables for the text output formats (``ci/*fmt.py``), the CLI's listings
and the benchmarks: rich's ``Table`` without borders, colour or markup, each column as
wide as its widest cell, so a terminal, a pipe and a CI log all get the same lines.

Columns are separated by :data:`GAP` spaces; a line ends at its last character (no
padding after the last column). Cells are never cut, and wrapped only in a column
given a ``wrap`` width (between words, onto the lines below, the other columns
aligned); the console is :data:`WIDTH` columns wide, more than any line plumb prints.
rich lays out a table that wraps a column or holds a cell it measures differently from
its length (not printable ASCII, or space at either end); the others, nearly every
table plumb prints, are laid out here to the same lines at a fraction of the cost (the
wave table of a 4,096-node rollout has 500 rows). rich is imported only when it renders
a table, so commands that print none do not pay for it.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

GAP = 2
WIDTH = 100_000


@dataclass(frozen=True)
class Column:
    """A column's header and how its cells line up (numbers: ``right``)."""

    header: str = ""
    justify: Literal["left", "right"] = "left"
    wrap: int | None = None  # longer cells go on to the next lines at this width


def table_lines(
    columns: Sequence[Column],
    rows: Iterable[Sequence[object]],
    *,
    header: bool = True,
    indent: int = 0,
) -> list[str]:
    """The table's lines, the header first when ``header``; each cell is ``str(cell)``,
    taken as plain text (``[bold]`` stays as written)."""
    texts = [[str(cell) for cell in row] for row in rows]
    plain = _plain_lines(columns, texts, header)
    if plain is not None:
        margin = " " * indent
        return [(margin + line).rstrip() for line in plain]
    return _rich_lines(columns, texts, header=header, indent=indent)


def _plain(text: str) -> bool:
    return text.isascii() and text.isprintable() and text == text.strip()


def _plain_lines(
    columns: Sequence[Column], rows: list[list[str]], header: bool
) -> list[str] | None:
    """The lines rich lays out for a table of plain cells, or None when rich must."""
    if not columns or not rows or any(column.wrap is not None for column in columns):
        return None
    lines = [[column.header for column in columns]] if header else []
    lines += rows
    if any(len(line) != len(columns) or not all(map(_plain, line)) for line in lines):
        return None
    widths = [max(map(len, cells)) for cells in zip(*lines, strict=True)]
    pads = [str.rjust if column.justify == "right" else str.ljust for column in columns]
    gap = " " * GAP
    return [
        gap.join(pad(cell, width) for pad, cell, width in zip(pads, line, widths, strict=True))
        for line in lines
    ]


def _rich_lines(
    columns: Sequence[Column], rows: list[list[str]], *, header: bool, indent: int
) -> list[str]:
    from rich.console import Console
    from rich.table import Table

    table = Table(
        box=None,
        show_header=header,
        show_edge=False,
        pad_edge=False,
        padding=(0, GAP, 0, 0),
        header_style="",
        expand=False,
    )
    for column in columns:
        table.add_column(
            column.header,
            justify=column.justify,
            no_wrap=column.wrap is None,
            max_width=column.wrap,
            overflow="fold",
        )
    for row in rows:
        table.add_row(*row)
    out = io.StringIO()
    console = Console(
        file=out,
        width=WIDTH,
        color_system=None,
        force_terminal=False,
        no_color=True,
        highlight=False,
        markup=False,
        emoji=False,
        legacy_windows=False,
    )
    console.print(table)
    margin = " " * indent
    return [(margin + line).rstrip() for line in out.getvalue().splitlines()]


def table_text(
    columns: Sequence[Column],
    rows: Iterable[Sequence[object]],
    *,
    header: bool = True,
    indent: int = 0,
) -> str:
    """:func:`table_lines` joined, ending with a newline."""
    return "".join(f"{line}\n" for line in table_lines(columns, rows, header=header, indent=indent))

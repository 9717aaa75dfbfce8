"""Plain-text tables for the text output formats (``ci/*fmt.py``), the CLI's listings
and the benchmarks: rich's ``Table`` without borders, colour or markup, each column as
wide as its widest cell, so a terminal, a pipe and a CI log all get the same lines.

Columns are separated by :data:`GAP` spaces; a line ends at its last character (no
padding after the last column). Cells are never cut, and wrapped only in a column
given a ``wrap`` width (between words, onto the lines below, the other columns
aligned); the console is :data:`WIDTH` columns wide, more than any line plumb prints.
rich is imported when a table is rendered, not with this module, so commands that print
none do not pay for it.
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
        table.add_row(*(str(cell) for cell in row))
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

"""docs/drivers.md "Capabilities" holds the EOS rows the code renders, and every row's
refusal column is what the EOS rule answers for its examples."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.drivers.eos_capability_table import ROWS, Row, markdown_rows
from reconciler.drivers.eos_caps import eos_inexpressible

DOC = Path(__file__).resolve().parent.parent.parent / "docs" / "drivers.md"


def test_the_documentation_holds_the_rows_in_order() -> None:
    """The EOS rows of the table are exactly the rendered ones, in the same order."""
    documented = [
        line
        for line in DOC.read_text().splitlines()
        if line.startswith("| eos | `") and "lldp/" not in line
    ]
    assert documented == markdown_rows()


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.paths)
def test_each_row_says_what_the_rule_does(row: Row) -> None:
    """A refusal example is refused with the row's reason; an expressible one is not."""
    for path, observed, phrase in row.examples:
        reason = eos_inexpressible(path, observed)
        if phrase is None:
            assert reason is None, (path, reason)
        else:
            assert reason is not None and phrase in reason, (path, reason)
    if row.refused.startswith("never"):
        assert all(phrase is None for _, _, phrase in row.examples)

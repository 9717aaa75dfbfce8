"""docs/drivers.md "Capabilities" holds the SONiC rows and the release matrix the code
renders, and every row's refusal column is what the SONiC rule answers for its
examples."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.drivers.sonic_capability_table import ROWS, Row, markdown_rows, release_rows
from reconciler.drivers.sonic_caps import sonic_inexpressible
from reconciler.drivers.sonic_gcu import releases

DOC = Path(__file__).resolve().parent.parent.parent / "docs" / "drivers.md"


def test_the_documentation_holds_the_rows_in_order() -> None:
    documented = [
        line
        for line in DOC.read_text().splitlines()
        if line.startswith("| sonic | `") and "lldp/" not in line
    ]
    assert documented == markdown_rows()


def test_the_documentation_holds_the_release_matrix() -> None:
    documented = [
        line
        for line in DOC.read_text().splitlines()
        if line.startswith("| ") and line.split(" | ")[0][2:] in releases()
    ]
    assert documented == release_rows()


def test_the_matrix_says_what_the_issue_of_each_release_is() -> None:
    """ECN outside AZURE_LOSSLESS is refused through 202411, and allowed from 202505."""
    rows = {row.split(" | ")[0][2:]: row.split(" | ")[2] for row in release_rows()}
    assert rows["202405"] == rows["202411"] == "none"
    assert rows["202505"].startswith("all ")


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.paths)
def test_each_row_says_what_the_rule_does(row: Row) -> None:
    for path, observed, phrase in row.examples:
        reason = sonic_inexpressible(path, observed)
        if phrase is None:
            assert reason is None, (path, reason)
        else:
            assert reason is not None and phrase in reason, (path, reason)
    if row.refused.startswith("never"):
        assert all(phrase is None for _, _, phrase in row.examples)

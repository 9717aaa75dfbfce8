"""docs/architecture.md's picture is drawn from the code and kept current."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from tests.test_layering import STAGES

ROOT = Path(__file__).resolve().parent.parent


def _drawer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("architecture", ROOT / "docs/architecture.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_picture_names_the_layering_floors() -> None:
    """The drawing and the layering check agree on the floors and their order."""
    assert _drawer().FLOORS == STAGES


def test_the_picture_is_current() -> None:
    """Regenerating the picture from the code changes nothing in the doc."""
    drawer = _drawer()
    assert drawer.render(drawer.DOC.read_text()) == drawer.DOC.read_text(), (
        "docs/architecture.md is stale: run python docs/architecture.py"
    )


def test_the_reduction_keeps_only_arrows_no_path_implies() -> None:
    """A -> B -> C and A -> C: the direct A -> C is implied and dropped."""
    drawer = _drawer()
    edges = {("a", "b"), ("b", "c"), ("a", "c"), ("d", "c")}
    assert drawer.reduced(edges) == {("a", "b"), ("b", "c"), ("d", "c")}

"""Output formats for a validation outcome, chosen by name.

Each format is a function ``(ValidateOutcome) -> str``; ``FORMATS`` maps the names the
CLI accepts to them, so adding a format is one module and one line here.
"""

from __future__ import annotations

from collections.abc import Callable

from ci.formats import github, json_format, junit, sarif, text
from ci.outcome import ValidateOutcome

Renderer = Callable[[ValidateOutcome], str]

FORMATS: dict[str, Renderer] = {
    "text": text.render,
    "json": json_format.render,
    "sarif": sarif.render,
    "junit": junit.render,
    "github": github.render,
}

"""Review output formats by name: ``REVIEW_FORMATS[name](review) -> str``."""

from __future__ import annotations

import json
from collections.abc import Callable

from ci.review.cifmt import render_github, render_junit, render_sarif
from ci.review.jsondoc import review_json
from ci.review.markdown import render_markdown
from ci.review.model import Review

ReviewRenderer = Callable[[Review], str]


def render_json(review: Review) -> str:
    return json.dumps(review_json(review), indent=2, default=str) + "\n"


REVIEW_FORMATS: dict[str, ReviewRenderer] = {
    "markdown": render_markdown,
    "json": render_json,
    "sarif": render_sarif,
    "junit": render_junit,
    "github": render_github,
}

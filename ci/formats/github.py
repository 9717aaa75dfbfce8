"""GitHub Actions workflow commands: one ``::error``/``::warning`` annotation per policy
and place, saying how many findings it stands for when more than one."""

from __future__ import annotations

from ci.formats.collapse import collapse
from ci.outcome import ValidateOutcome
from inventory.problems import Location


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _annotation(
    outcome: ValidateOutcome, level: str, location: Location, title: str, message: str
) -> str:
    props = []
    if location.line:  # line 0: no place in the repo, so no file to annotate
        props += [
            f"file={_escape_property(outcome.path(location))}",
            f"line={location.line}",
            f"col={location.col}",
        ]
    props.append(f"title={_escape_property(title)}")
    return f"::{level} {','.join(props)}::{_escape_data(message)}"


def render(outcome: ValidateOutcome) -> str:
    lines = [
        _annotation(outcome, "error", p.location, "plumb: input error", p.message)
        for p in outcome.problems
    ]
    report = outcome.report
    if report is not None:
        for group in collapse(report.violations):
            v = group.first
            level = "error" if v.severity.value == "deny" else "warning"
            title = f"plumb {v.policy}"
            lines.append(_annotation(outcome, level, v.location, title, group.message()))
        for error in report.errors:
            lines.append(
                f"::error title=plumb engine error::{_escape_data(error.policy)}: "
                f"{_escape_data(error.error)}"
            )
    return "\n".join(lines) + ("\n" if lines else "")

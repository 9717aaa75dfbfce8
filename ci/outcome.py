"""The result of validating a fleet repo, as data every output format renders.

Either the repo could not be loaded (``problems``: exit 2) or it was loaded and the
policies ran (``report``). The exit code comes from the data, never from the format.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from inventory.problems import Location, Problem
from policies.engine import PolicyReport


@dataclass(frozen=True)
class ValidateOutcome:
    root: Path
    fleet: str | None
    problems: tuple[Problem, ...] = ()
    report: PolicyReport | None = None
    path_prefix: str = ""

    def exit_code(self) -> int:
        if self.problems or self.report is None:
            return 2
        return self.report.exit_code()

    def path(self, location: Location) -> str:
        """A location's file as CI tools want it: relative to the workspace root."""
        return f"{self.path_prefix}{location.file}" if location.line else location.file

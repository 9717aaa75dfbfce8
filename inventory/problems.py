"""Locations and input problems: the vocabulary every stage uses to point at the YAML.

A :class:`Location` is ``file:line:col`` (1-based). An :class:`InputError` carries
one or more :class:`Problem` s and is what the CLI turns into exit code 2; it is
never shown as a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Location:
    """Where a value came from: repo-relative file, 1-based line and column."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


UNKNOWN = Location("<derived>", 0, 0)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input, at one location."""

    location: Location
    message: str

    def __post_init__(self) -> None:
        # a location in a topology rule names the generated record it is about
        about = getattr(self.location, "about", "")
        if about and not self.message.startswith(about):
            object.__setattr__(self, "message", f"{about}: {self.message}")

    def __str__(self) -> str:
        if not self.location.line:  # no place in a file: no file:line to make up
            return f"error: {self.message}"
        return f"{self.location}: {self.message}"


class InputError(Exception):
    """The fleet repo cannot be loaded; every problem found is listed."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(problems, key=lambda p: (p.location, p.message))
        super().__init__("\n".join(str(p) for p in self.problems))

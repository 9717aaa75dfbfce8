"""Load a fleet repo's own policies from ``policies/*.py``.

Each file is executed with ``@policy`` registering into a fresh registry, so a repo
policy can never replace a built-in one silently (same id -> error). Loading runs
the repo's Python code: CI that reviews untrusted changes should pass
``--no-repo-policies`` (see docs/policies.md).
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from intent.fleet import Fleet
from inventory.problems import InputError, Location, Problem
from policies.engine import BUILTIN, Check, Finding, Policy, Registry, registering_into


def load_repo_policies(root: Path) -> list[Policy]:
    """Import every ``policies/*.py`` of the repo and return the policies they register."""
    registry = Registry()
    problems: list[Problem] = []
    root_resolved = root.resolve()
    for path in sorted((root / "policies").glob("*.py")):
        display = path.relative_to(root).as_posix()
        resolved = path.resolve()
        if root_resolved not in resolved.parents:
            problems.append(
                Problem(Location(display, 1, 1), f"points outside the fleet repo (to {resolved})")
            )
            continue
        module_name = f"plumb_repo_policies.{path.stem}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            problems.append(Problem(Location(display, 1, 1), "cannot load as a Python module"))
            continue
        module = importlib.util.module_from_spec(spec)
        before = set(registry.policies)
        try:
            with registering_into(registry):
                sys.modules[module_name] = module
                spec.loader.exec_module(module)
        except SyntaxError as exc:
            where = Location(display, exc.lineno or 1, exc.offset or 1)
            problems.append(Problem(where, f"syntax error: {exc.msg}"))
        except (Exception, SystemExit) as exc:
            line = _line_in(display, exc)
            summary = traceback.format_exception_only(type(exc), exc)[-1].strip()
            problems.append(Problem(Location(display, line, 1), f"loading failed: {summary}"))
        finally:
            sys.modules.pop(module_name, None)
        for policy_id in sorted(set(registry.policies) - before):
            if policy_id in BUILTIN.policies:
                where = Location(display, _line_of(registry.policies[policy_id].check), 1)
                problems.append(Problem(where, f"policy {policy_id} is already a built-in policy"))
    if problems:
        raise InputError(problems)
    return [replace(pol, check=_no_exit(pol.check)) for pol in registry]


def _line_in(display: str, exc: BaseException) -> int:
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename.endswith(display):
            return frame.lineno or 1
    return 1


def _line_of(check: Check) -> int:
    """First line of a check function (its decorator, when decorated)."""
    code = getattr(check, "__code__", None)
    return code.co_firstlineno if code is not None else 1


def _no_exit(check: Check) -> Check:
    """Make ``sys.exit()`` inside a repo check an exception, so the engine reports it.

    The engine turns an ``Exception`` into an engine error; ``SystemExit`` is not one
    and would otherwise end ``plumb validate`` with the status the policy chose.
    """

    def run(fleet: Fleet) -> Iterable[Finding]:
        try:
            return list(check(fleet))
        except SystemExit as exc:
            raise RuntimeError(f"the policy called sys.exit({exc.code!r})") from None

    return run

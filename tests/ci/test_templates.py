"""The CI templates are YAML, and every `plumb ...` command line they run parses against
the real command tree: each subcommand and option they use exists and takes the
values given."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from ruamel.yaml import YAML

from plumb.cli import app

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "ci" / "templates"
HOOKS = ROOT / ".pre-commit-hooks.yaml"
SHELL_OPERATORS = {"||", "&&", ";", "|", ">", ">>", "&", "<"}


def load(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text())


def scripts(name: str) -> Iterator[str]:
    """The shell a CI template runs: GitHub steps' ``run``, GitLab jobs' scripts."""
    document = load(TEMPLATES / name)
    if "jobs" in document:
        for job in document["jobs"].values():
            yield from (step["run"] for step in job["steps"] if "run" in step)
        return
    for job in document.values():
        for key in ("before_script", "script", "after_script"):
            yield from job.get(key, [])


def plumb_commands(script: str) -> list[list[str]]:
    """Every `plumb ...` command in a shell script, up to its first shell operator."""
    found = []
    for line in script.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line.strip(), posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            words = list(lexer)
        except ValueError:
            continue
        if words[:1] != ["plumb"]:
            continue
        cut = next((i for i, w in enumerate(words) if w in SHELL_OPERATORS), len(words))
        found.append(words[1:cut])
    return found


def parse(argv: list[str]) -> None:
    """Parse ``plumb ARGV`` with the app's command tree (raises on an unknown subcommand,
    option or bad value); nothing runs."""
    command: Any = typer.main.get_command(app)
    words = list(argv)
    path = ["plumb"]
    while hasattr(command, "commands") and words and words[0] in command.commands:
        path.append(words[0])
        command = command.commands[words.pop(0)]
    assert not hasattr(command, "commands"), f"{' '.join(path)}: no subcommand {words[:1]}"
    with command.make_context(" ".join(path), words) as context:
        assert context.params is not None


def template_commands() -> list[tuple[str, list[str]]]:
    found = []
    for name in ("github-review.yml", "gitlab-review.yml"):
        for script in scripts(name):
            found += [(name, argv) for argv in plumb_commands(script)]
    hooks = {hook["id"]: hook for hook in load(HOOKS)}
    for repo in load(TEMPLATES / "pre-commit-config.yaml")["repos"]:
        for hook in repo["hooks"]:
            definition = hooks[hook["id"]]
            line = (
                f"{definition['entry']} {shlex.join(hook.get('args', definition.get('args', [])))}"
            )
            found += [("pre-commit-config.yaml", argv) for argv in plumb_commands(line)]
    for hook in hooks.values():
        line = f"{hook['entry']} {shlex.join(hook.get('args', []))}"
        found += [(".pre-commit-hooks.yaml", argv) for argv in plumb_commands(line)]
    return found


def test_every_template_is_yaml() -> None:
    """Each template and the hook definitions parse as YAML mappings or lists."""
    for path in [*TEMPLATES.glob("*.yml"), *TEMPLATES.glob("*.yaml"), HOOKS]:
        assert isinstance(load(path), dict | list), path


def test_templates_run_review_and_validate() -> None:
    """The workflows run `plumb review`, the hooks `plumb validate`: the scan finds them."""
    found = {(name, argv[0]) for name, argv in template_commands()}
    assert found == {
        ("github-review.yml", "review"),
        ("gitlab-review.yml", "review"),
        ("pre-commit-config.yaml", "validate"),
        (".pre-commit-hooks.yaml", "validate"),
    }


@pytest.mark.parametrize(
    ("name", "argv"),
    [pytest.param(name, argv, id=f"{name}: plumb {argv[0]}") for name, argv in template_commands()],
)
def test_template_command_parses(name: str, argv: list[str]) -> None:
    """The command line parses against the real app."""
    parse(argv)


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["review", ".", "--base", "x", "--bogus"], "NoSuchOption"),
        (["reviews", "."], "AssertionError"),
        (["review", "."], "MissingParameter"),
        (["plan", ".", "--against"], "BadOptionUsage"),
    ],
    ids=["unknown option", "unknown command", "missing --base", "option without value"],
)
def test_the_parser_check_rejects_a_bad_command_line(argv: list[str], error: str) -> None:
    """The check is not vacuous: a wrong command line fails it, for the right reason."""
    with pytest.raises(Exception) as raised:  # click's usage errors are not public here
        parse(argv)
    assert type(raised.value).__name__ == error


def test_review_reports_in_templates_are_known_formats() -> None:
    """Every --report FORMAT=FILE in the templates names a review format."""
    from ci.review.render import REVIEW_FORMATS

    for _, argv in template_commands():
        for index, word in enumerate(argv):
            if word == "--report":
                assert argv[index + 1].split("=")[0] in REVIEW_FORMATS


def test_github_workflow_uploads_sarif_and_comments() -> None:
    """The workflow posts the Markdown and uploads the SARIF the review writes."""
    steps = load(TEMPLATES / "github-review.yml")["jobs"]["review"]["steps"]
    uses = {step.get("uses", "").split("@")[0]: step for step in steps}
    assert uses["github/codeql-action/upload-sarif"]["with"]["sarif_file"] == "plumb-review.sarif"
    assert "plumb-review.md" in uses["actions/github-script"]["with"]["script"]
    review = next(step["run"] for step in steps if "plumb review" in step.get("run", ""))
    assert "markdown=plumb-review.md" in review and "sarif=plumb-review.sarif" in review


def test_gitlab_job_reports_junit_and_keeps_sarif() -> None:
    job = load(TEMPLATES / "gitlab-review.yml")["plumb-review"]
    assert job["artifacts"]["reports"]["junit"] == "plumb-review.xml"
    assert "plumb-review.sarif" in job["artifacts"]["paths"]
    assert any("/notes" in line for line in job["script"])

"""The git edge (gitpython): which commit the fleet repo's intent is at, and whether
given paths are clean. The only module of ``ci`` that imports git."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import git


@dataclass(frozen=True)
class RepoState:
    commit: str | None
    dirty: tuple[str, ...]
    toplevel: Path | None


def repo_state(root: Path, paths: tuple[str, ...] = ("intent", "inventory")) -> RepoState:
    """HEAD commit of the repo containing ``root`` and which of ``paths`` have changes."""
    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return RepoState(None, (), None)
    with repo:
        try:
            commit: str | None = repo.head.commit.hexsha
        except ValueError:
            commit = None
        top = Path(repo.working_tree_dir or root).resolve()
        prefix = root.resolve().relative_to(top).as_posix() if root.resolve() != top else ""
        scoped = [f"{prefix}/{p}" if prefix else p for p in paths]
        dirty = repo.git.status("--porcelain", "--", *scoped).splitlines()
        return RepoState(commit, tuple(line[3:] for line in dirty), top)

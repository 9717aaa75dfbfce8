"""The controller's git edge (gitpython): fetch the followed branch from its remote and
fast-forward the controller-owned clone to it. Nothing else is ever done to the clone:
a branch that was rewritten (no fast-forward) or a clone with local edits is refused,
and the clone stays at the commit it had, for a human to look at."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import git


class PollError(Exception):
    """The clone could not be brought to the remote's head; it is left as it was."""


@dataclass(frozen=True)
class Polled:
    before: str | None
    after: str

    @property
    def moved(self) -> bool:
        return self.before != self.after


def head_commit(root: Path) -> str | None:
    try:
        with git.Repo(root, search_parent_directories=True) as repo:
            return repo.head.commit.hexsha
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, ValueError):
        return None


def fetch_and_fast_forward(root: Path, remote: str, branch: str) -> Polled:
    """Fetch ``remote``/``branch`` and fast-forward the checked-out branch to it."""
    try:
        with git.Repo(root, search_parent_directories=True) as repo:
            before = repo.head.commit.hexsha if repo.head.is_valid() else None
            repo.git.fetch("--quiet", remote, branch)
            fetched = repo.commit("FETCH_HEAD").hexsha
            if before == fetched:
                return Polled(before, fetched)
            if repo.is_dirty(untracked_files=False):
                raise PollError(f"{root} has local changes: the controller's clone is never edited")
            if before is not None and not repo.is_ancestor(
                repo.commit(before), repo.commit(fetched)
            ):
                raise PollError(
                    f"{remote}/{branch} at {fetched[:12]} does not descend from {before[:12]}:"
                    " the branch was rewritten; the clone is left as it is"
                )
            repo.git.merge("--ff-only", "--quiet", fetched)
            return Polled(before, repo.head.commit.hexsha)
    except git.GitCommandError as exc:
        raise PollError(f"git: {' '.join(map(str, exc.command))}: {exc.stderr.strip()}") from exc
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise PollError(f"{root} is not a git clone") from exc

"""The git edge of ``plumb review`` (gitpython): resolve revisions, materialise one
revision's copy of the fleet repo into a directory, and list the files a change
touches. Every git error becomes a :class:`GitRevError` with a message for people.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import git

SYMLINK_MODE = 0o120000


class GitRevError(Exception):
    """A revision or repository problem, worded for the command line."""


@dataclass(frozen=True)
class Revision:
    """A revision as given (``main``, ``HEAD~1``) and the commit it names."""

    name: str
    commit: str
    summary: str

    @property
    def short(self) -> str:
        return self.commit[:10]


class FleetHistory:
    """The git repository holding a fleet repo directory, opened once per review."""

    def __init__(self, path: Path) -> None:
        if not path.is_dir():
            raise GitRevError(f"{path}: no such directory")
        try:
            self._repo = git.Repo(path, search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise GitRevError(f"{path} is not inside a git repository") from None
        if self._repo.working_tree_dir is None:
            self._repo.close()
            raise GitRevError(f"{path}: a bare repository has no fleet directory to review")
        self.top = Path(self._repo.working_tree_dir).resolve()
        inner = path.resolve().relative_to(self.top).as_posix()
        self.subdir = "" if inner == "." else inner

    def __enter__(self) -> FleetHistory:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._repo.close()

    @property
    def prefix(self) -> str:
        """The fleet directory as a path prefix from the repository top (``""`` at the top)."""
        return f"{self.subdir}/" if self.subdir else ""

    def resolve(self, rev: str) -> Revision:
        """The commit ``rev`` names; a GitRevError says why when it names none."""
        if not rev or rev.startswith("-"):
            raise GitRevError(f"{rev!r} is not a revision")
        try:
            commit = self._repo.commit(rev)
        except (git.BadName, git.BadObject):
            raise GitRevError(f"unknown revision {rev!r} in {self.top}") from None
        except ValueError as exc:  # a tree or blob, or a repository without commits
            raise GitRevError(f"revision {rev!r} does not name a commit ({exc})") from None
        message = commit.message
        text = message.decode(errors="replace") if isinstance(message, bytes) else message
        return Revision(rev, commit.hexsha, text.strip().splitlines()[0] if text.strip() else "")

    def export(self, revision: Revision, destination: Path) -> bool:
        """Write the fleet directory as of ``revision`` into ``destination``.

        False when the directory does not exist at that revision. Symlinks stay
        symlinks, so the loader refuses one that leaves the fleet repo as it would in a
        checkout; submodules are skipped."""
        tree = self._repo.commit(revision.commit).tree
        if self.subdir:
            try:
                found = tree / self.subdir
            except KeyError:
                return False
            if not isinstance(found, git.Tree):
                return False
            tree = found
        destination.mkdir(parents=True, exist_ok=True)
        for item in tree.traverse():
            if not isinstance(item, git.Blob):
                continue
            inner = Path(item.path).relative_to(tree.path) if tree.path else Path(item.path)
            target = destination / inner
            target.parent.mkdir(parents=True, exist_ok=True)
            data = item.data_stream.read()
            if item.mode == SYMLINK_MODE:
                os.symlink(data.decode(errors="replace"), target)
            else:
                target.write_bytes(data)
        return True

    def changed_files(self, base: Revision, head: Revision) -> tuple[str, ...]:
        """Files of the fleet directory that differ between the revisions (both names of
        a rename), relative to the fleet directory, sorted."""
        old = self._repo.commit(base.commit)
        found: set[str] = set()
        for entry in old.diff(head.commit, paths=self.subdir or None):
            for name in (entry.a_path, entry.b_path):
                if name is not None:
                    found.add(name[len(self.prefix) :] if self.prefix else name)
        return tuple(sorted(found))

"""The git edge of rollouts (gitpython): a rollout starts only from a spec and intent
that are committed, and a rollback can propose the revert of the intent change on a
new branch, for review, without touching the operator's checkout.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import git

INTENT_PATHS = ("intent", "inventory", "policies", "plumb.yaml")


class NotDeclared(Exception):
    """The spec or the intent is not committed: a rollout would not be reproducible."""


@dataclass(frozen=True)
class Declaration:
    intent_commit: str
    spec_commit: str
    toplevel: Path


def _repo(root: Path) -> git.Repo:
    try:
        return git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise NotDeclared(
            f"{root} is not in a git repository: a rollout starts only from a committed "
            "spec and intent"
        ) from None


def _scoped(repo: git.Repo, root: Path, paths: tuple[str, ...]) -> list[str]:
    top = Path(repo.working_tree_dir or root).resolve()
    base = root.resolve()
    prefix = base.relative_to(top).as_posix() if base != top else ""
    return [f"{prefix}/{p}" if prefix else p for p in paths]


def declared(root: Path, spec_path: str) -> Declaration:
    """The commits a rollout of ``spec_path`` (relative to ``root``) starts from;
    NotDeclared naming the files when anything it depends on is not committed."""
    with _repo(root) as repo:
        try:
            head = repo.head.commit.hexsha
        except ValueError:
            raise NotDeclared(f"{root}: the repository has no commits yet") from None
        scoped = _scoped(repo, root, (*INTENT_PATHS, spec_path))
        dirty = repo.git.status("--porcelain", "--untracked-files=all", "--", *scoped)
        if dirty.strip():
            files = [line[3:] for line in dirty.splitlines()]
            shown = ", ".join(files[:6]) + (f" and {len(files) - 6} more" if len(files) > 6 else "")
            raise NotDeclared(
                f"uncommitted changes in {shown}: commit the spec and the intent "
                "before a rollout starts"
            )
        spec_commit = repo.git.log("-1", "--format=%H", "--", scoped[-1]).strip()
        if not spec_commit:
            raise NotDeclared(f"{spec_path} is not committed")
        top = Path(repo.working_tree_dir or root).resolve()
        return Declaration(head, spec_commit, top)


def spec_changed_since(root: Path, spec_path: str, commit: str) -> bool:
    """Has ``spec_path`` changed (committed or not) since ``commit``?"""
    with _repo(root) as repo:
        scoped = _scoped(repo, root, (spec_path,))
        committed = repo.git.diff("--name-only", commit, "HEAD", "--", *scoped).strip()
        local = repo.git.status("--porcelain", "--", *scoped).strip()
        return bool(committed or local)


def intent_change(root: Path, commit: str) -> str | None:
    """The last commit at or before ``commit`` that changed the intent or inventory."""
    with _repo(root) as repo:
        scoped = _scoped(repo, root, ("intent", "inventory"))
        found = repo.git.log("-1", "--format=%H", commit, "--", *scoped).strip()
        return found or None


def _identity(repo: git.Repo) -> dict[str, str]:
    """A committer identity for the revert when git has none configured."""
    reader = repo.config_reader()
    if reader.get_value("user", "email", "") and reader.get_value("user", "name", ""):
        return {}
    return {
        "GIT_AUTHOR_NAME": "plumb",
        "GIT_AUTHOR_EMAIL": "plumb@localhost",
        "GIT_COMMITTER_NAME": "plumb",
        "GIT_COMMITTER_EMAIL": "plumb@localhost",
    }


def revert_branch(root: Path, commit: str, branch: str) -> str:
    """Create ``branch`` at HEAD holding ``git revert`` of ``commit``, in a temporary
    worktree (the checkout stays as it is); returns the revert commit. Raises
    NotDeclared if the branch exists or the revert does not apply cleanly."""
    with _repo(root) as repo:
        if branch in [h.name for h in repo.heads]:
            raise NotDeclared(f"branch {branch} already exists")
        with tempfile.TemporaryDirectory(prefix="plumb-revert-") as scratch:
            where = str(Path(scratch) / "tree")
            repo.git.worktree("add", "-b", branch, where, "HEAD")
            try:
                tree = git.Repo(where)
                with tree:
                    try:
                        with tree.git.custom_environment(**_identity(tree)):
                            tree.git.revert("--no-edit", commit)
                    except git.GitCommandError as exc:
                        tree.git.revert("--abort")
                        repo.git.worktree("remove", "--force", where)
                        repo.git.branch("-D", branch)
                        raise NotDeclared(
                            f"the revert of {commit[:12]} does not apply cleanly on HEAD: "
                            f"{exc.stderr.strip() or exc}"
                        ) from None
                    return tree.head.commit.hexsha
            finally:
                if Path(where).exists():
                    repo.git.worktree("remove", "--force", where)


def has_commit(root: Path, commit: str) -> bool:
    """Is ``commit`` HEAD or one of its ancestors (has this clone got it yet)?"""
    with _repo(root) as repo:
        try:
            return bool(repo.is_ancestor(repo.commit(commit), repo.head.commit))
        except (git.GitCommandError, git.BadName, ValueError):
            return False

"""The git edge: revisions resolve or say why not, a revision's fleet directory is
written out as committed (symlinks included), and changed files are fleet-relative."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ci.gitrev import FleetHistory, GitRevError
from tests.ci.gitfleet import GitFleet


@pytest.fixture
def tiny(tmp_path: Path) -> GitFleet:
    repo = GitFleet(tmp_path / "repo")
    (repo.top / "fleet" / "intent").mkdir(parents=True)
    (repo.top / "fleet" / "plumb.yaml").write_text("fleet: one\n")
    (repo.top / "fleet" / "intent" / "mtu.yaml").write_text("mtu: {}\n")
    os.symlink("mtu.yaml", repo.top / "fleet" / "intent" / "alias.yaml")
    (repo.top / "elsewhere.txt").write_text("not the fleet\n")
    repo.git("init", "-q", "-b", "main")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "first")
    (repo.top / "fleet" / "intent" / "mtu.yaml").write_text("mtu: {x: 1}\n")
    (repo.top / "elsewhere.txt").write_text("changed too\n")
    repo.git("commit", "-q", "-am", "second")
    return repo


def test_export_writes_the_committed_fleet_directory(tiny: GitFleet, tmp_path: Path) -> None:
    """The first revision's files come back byte for byte, the symlink as a symlink."""
    with FleetHistory(tiny.top / "fleet") as history:
        first = history.resolve("HEAD~1")
        assert history.export(first, tmp_path / "out")
    out = tmp_path / "out"
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if not p.is_dir()) == [
        "intent/alias.yaml",
        "intent/mtu.yaml",
        "plumb.yaml",
    ]
    assert (out / "intent" / "mtu.yaml").read_text() == "mtu: {}\n"
    assert os.readlink(out / "intent" / "alias.yaml") == "mtu.yaml"


def test_changed_files_are_relative_to_the_fleet(tiny: GitFleet) -> None:
    """Only the fleet directory's changes are listed, without its prefix."""
    with FleetHistory(tiny.top / "fleet") as history:
        assert history.prefix == "fleet/"
        files = history.changed_files(history.resolve("HEAD~1"), history.resolve("HEAD"))
    assert files == ("intent/mtu.yaml",)


def test_a_directory_missing_at_a_revision_exports_nothing(tiny: GitFleet, tmp_path: Path) -> None:
    (tiny.top / "other").mkdir()
    (tiny.top / "other" / "plumb.yaml").write_text("fleet: two\n")
    with FleetHistory(tiny.top / "other") as history:
        assert not history.export(history.resolve("HEAD"), tmp_path / "out")


@pytest.mark.parametrize(
    ("rev", "message"),
    [
        ("nope", "unknown revision 'nope'"),
        ("HEAD~9", "unknown revision 'HEAD~9'"),
        ("HEAD:fleet", "does not name a commit"),
        ("--output=x", "'--output=x' is not a revision"),
    ],
)
def test_bad_revisions_raise_one_readable_error(tiny: GitFleet, rev: str, message: str) -> None:
    with FleetHistory(tiny.top / "fleet") as history, pytest.raises(GitRevError) as raised:
        history.resolve(rev)
    assert message in str(raised.value)


def test_a_fleet_at_the_repository_top_has_no_prefix(tiny: GitFleet, tmp_path: Path) -> None:
    """With the fleet repo at the top, every file is the fleet's and paths are unprefixed."""
    with FleetHistory(tiny.top) as history:
        assert (history.subdir, history.prefix) == ("", "")
        first, second = history.resolve("HEAD~1"), history.resolve("HEAD")
        assert history.changed_files(first, second) == ("elsewhere.txt", "fleet/intent/mtu.yaml")
        assert history.export(second, tmp_path / "top")
    assert (tmp_path / "top" / "elsewhere.txt").read_text() == "changed too\n"
    assert second.summary == "second"

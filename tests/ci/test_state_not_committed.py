"""plumb's state directory stays out of git: it carries its own .gitignore from the
first command that creates it, and a review never lists state files as changed."""

from __future__ import annotations

from pathlib import Path

from tests.ci.gitfleet import FLEET_DIR, make_git_fleet, plumb


def test_lab_init_and_state_commands_leave_nothing_to_commit(tmp_path: Path) -> None:
    """After `lab init`, an apply-free `freeze`/`unfreeze` and `lease show`, git sees no
    new file: `git add -A` would commit no state."""
    repo = make_git_fleet(tmp_path)
    fleet = repo.top / FLEET_DIR
    for args in (("lab", "init"), ("freeze", "--reason", "x"), ("unfreeze",), ("lease", "show")):
        done = plumb(fleet, *args)
        assert done.exit_code == 0, (args, done.stderr)
    assert (fleet / ".plumb" / "plumb.db").exists()
    assert (fleet / ".plumb" / "lab.db").exists()
    assert repo.git("status", "--porcelain", "--untracked-files=all") == ""


def test_an_existing_gitignore_in_the_state_directory_is_kept(tmp_path: Path) -> None:
    """A .gitignore the operator wrote in the state directory is not replaced."""
    repo = make_git_fleet(tmp_path)
    state = repo.top / FLEET_DIR / ".plumb"
    state.mkdir()
    (state / ".gitignore").write_text("*.db\n")
    assert plumb(repo.top / FLEET_DIR, "lease", "show").exit_code == 0
    assert (state / ".gitignore").read_text() == "*.db\n"


def test_review_does_not_list_state_files(tmp_path: Path) -> None:
    """State files committed by force next to an intent change are not "files changed"."""
    repo = make_git_fleet(tmp_path)
    fleet = repo.top / FLEET_DIR
    assert plumb(fleet, "lease", "show").exit_code == 0
    repo.git("checkout", "-q", "-b", "with-state")
    repo.fleet.replace("intent/mtu.yaml", "host: 9000 ", "host: 8900 ")
    repo.git("add", "-A")
    repo.git("add", "-f", f"{FLEET_DIR}/.plumb/plumb.db")
    repo.git("commit", "-q", "-m", "mtu, and state by mistake")
    repo.git("checkout", "-q", "main")
    done = repo.review("--base", "main", "--head", "with-state", "--format", "json")
    files = done.json()["files_changed"]
    assert files == [f"{FLEET_DIR}/intent/mtu.yaml"], files

"""The PLUMB_* environment: one typed settings object read when used, and one table in
docs/environment.md, kept in step with every name the code reads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

from inventory.envsettings import Settings, env_names, named_secret, read_settings
from reconciler import failpoint

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "environment.md"
NAME = re.compile(r"(?<![A-Za-z0-9_])PLUMB_[A-Z0-9_]*[A-Z0-9]")
TOOLING = ("benchmarks", "deploy", "ci/templates")
SOURCES = ("*.py", "*.sh", "*.yml", "*.yaml", "*.service", "Containerfile")


def _product_packages() -> list[Path]:
    """Every top-level package plumb installs (the stages, and any added later)."""
    skip = {"tests", "benchmarks", "examples"}
    return sorted(p for p in ROOT.iterdir() if (p / "__init__.py").is_file() and p.name not in skip)


def _names_in(paths: list[Path]) -> dict[str, str]:
    """PLUMB_* name -> the first file that holds it."""
    found: dict[str, str] = {}
    for path in paths:
        for name in NAME.findall(path.read_text(errors="replace")):
            found.setdefault(name, path.relative_to(ROOT).as_posix())
    return found


def _files(folder: Path) -> list[Path]:
    return sorted(p for pattern in SOURCES for p in folder.rglob(pattern) if p.is_file())


def _documented() -> set[str]:
    rows = [line for line in DOC.read_text().splitlines() if line.startswith("| `")]
    return {line.split("`")[1] for line in rows}


def test_every_name_plumb_reads_is_a_setting_and_documented() -> None:
    """A PLUMB_* name in plumb's own code is a field of Settings and a row of the table."""
    found = _names_in([p for package in _product_packages() for p in package.rglob("*.py")])
    assert {"PLUMB_ACTOR", "PLUMB_STATE_URL", "PLUMB_FAILPOINT"} <= set(found)  # the scan works
    modelled = set(env_names())
    assert {n: f for n, f in found.items() if n not in modelled} == {}
    assert {n: f for n, f in found.items() if n not in _documented()} == {}


def test_every_name_the_tooling_reads_is_documented() -> None:
    """Names read by the CI templates, the image build, the benchmarks and the test
    suite's servers are in the same table (test files' own made-up names are not)."""
    helpers = [p for p in _files(ROOT / "tests") if not p.name.startswith("test_")]
    found = _names_in([p for folder in TOOLING for p in _files(ROOT / folder)] + helpers)
    assert {"PLUMB_PACKAGE", "PLUMB_ROOTFS", "PLUMB_PGBIN"} <= set(found)
    assert {n: f for n, f in found.items() if n not in _documented()} == {}


def test_the_table_lists_every_setting_and_nothing_stale() -> None:
    """Each field of Settings has its row; each row names a variable something reads."""
    documented = _documented()
    assert set(env_names()) <= documented
    everywhere = [p for package in _product_packages() for p in _files(package)]
    everywhere += [
        p for folder in ("benchmarks", "deploy", "ci", "tests") for p in _files(ROOT / folder)
    ]
    read = set(_names_in(everywhere)) | {"NETBOX_TOKEN"}
    assert documented - read == set()


def test_settings_are_read_when_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """A variable set, changed or removed after import counts at the next read."""
    monkeypatch.setenv("PLUMB_ACTOR", "alice@test")
    assert read_settings().actor == "alice@test"
    monkeypatch.setenv("PLUMB_ACTOR", "bob@test")
    assert read_settings().actor == "bob@test"
    monkeypatch.setenv("PLUMB_ACTOR", "")
    assert read_settings().actor is None
    monkeypatch.delenv("PLUMB_ACTOR")
    assert read_settings().actor is None


def test_the_fail_point_is_armed_when_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """PLUMB_FAILPOINT set after start-up arms the site it names; unset disarms it."""
    monkeypatch.setenv("PLUMB_FAILPOINT", "journal:3")
    assert failpoint._armed() == ("journal", 3)
    monkeypatch.delenv("PLUMB_FAILPOINT")
    assert failpoint._armed() is None


@pytest.mark.parametrize(
    ("value", "on"),
    [("1", True), ("yes", True), ("traceback", True), ("0", False), ("off", False), ("No", False)],
)
def test_debug_is_on_unless_a_word_for_off(
    value: str, on: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PLUMB_DEBUG=1 shows tracebacks; PLUMB_DEBUG=0 (or false, no, off) does not."""
    monkeypatch.setenv("PLUMB_DEBUG", value)
    assert read_settings().debug is on


def test_credentials_are_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Printed, the settings and a named secret hide their values."""
    monkeypatch.setenv("PLUMB_SWITCH_PASSWORD", "hunter2")
    monkeypatch.setenv("PLUMB_STATE_URL", "postgresql://plumb:pw@db/plumb")
    shown = repr(read_settings())
    assert "hunter2" not in shown and "pw@db" not in shown
    secret = named_secret("PLUMB_SWITCH_PASSWORD")
    assert isinstance(secret, SecretStr) and "hunter2" not in repr(secret)
    assert secret.get_secret_value() == "hunter2"


def test_a_name_the_fleet_chose_is_read_like_plumbs_own() -> None:
    """Blank is unset; surrounding blanks are dropped unless the value is taken as is."""
    environ = {"MY_URL": "  postgresql://db/x \n", "BLANK": "  ", "PASSWORD": " pw "}
    assert named_secret("MY_URL", environ) == SecretStr("postgresql://db/x")
    assert named_secret("BLANK", environ) is None
    assert named_secret("UNSET", environ) is None
    assert named_secret("PASSWORD", environ, strip=False) == SecretStr(" pw ")


_values = st.one_of(
    st.just(""),
    st.just("  "),
    st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=12),
)


@settings(max_examples=60, deadline=None)
@given(values=st.fixed_dictionaries({}, optional=dict.fromkeys(env_names(), _values)))
def test_a_handed_environment_reads_like_the_process_one(values: dict[str, str]) -> None:
    """read_settings(environ) and read_settings() under the same variables agree, and
    so does named_secret for every one of plumb's names."""
    with pytest.MonkeyPatch.context() as patch:
        for name in env_names():
            patch.delenv(name, raising=False)
        for name, value in values.items():
            patch.setenv(name, value)
        assert read_settings(values).model_dump() == read_settings().model_dump()
        for name in env_names():
            assert named_secret(name, values) == named_secret(name)
            assert named_secret(name, values, strip=False) == named_secret(name, strip=False)


def test_the_model_is_frozen() -> None:
    """Settings are read, never written: a field cannot be set."""
    with pytest.raises(ValueError, match="frozen"):
        Settings().actor = "x"  # type: ignore[misc]

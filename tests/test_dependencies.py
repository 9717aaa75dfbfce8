"""What plumb imports is what it declares: every third-party module the product code
imports comes from a distribution pyproject.toml lists (in the base or an extra), every
listed distribution is imported, and an extra's modules are imported only through
``optional_imports()`` so that a missing one names its extra."""

from __future__ import annotations

from pathlib import Path

import pytest

from inventory.extras import EXTRAS, extra_providing
from tests.projectdeps import (
    canonical,
    declared,
    distributions_of,
    imports_in,
    modules_of,
    product_packages,
    pyproject,
    third_party_imports,
)
from tests.test_layering import STAGES

# Declared, yet no product module imports them: why each is needed all the same.
NOT_IMPORTED = {
    "ruamel-yaml-clib": "the C parser ruamel.yaml loads for inventory/source.py (pure=False)",
    "ansible-core": "the ansible-playbook that ansible-runner runs (reconciler/drivers/ansible_*)",
}


def _imports(distribution: str) -> list[str]:
    """The import sites that use ``distribution``. A top-level module several declared
    distributions share (the ``ruamel`` namespace) counts for the one whose name the
    module's dotted name starts with."""
    own = modules_of(distribution)
    sites = []
    for site in third_party_imports():
        if site.top not in own:
            continue
        sharing = distributions_of(site.top) & set(declared())
        dotted = canonical(site.module)
        if len(sharing) <= 1 or dotted == distribution or dotted.startswith(distribution + "-"):
            sites.append(str(site))
    return sites


def test_the_scan_sees_the_product_code() -> None:
    """The scan reads every stage and finds the imports it must (guards against a scan
    that finds nothing)."""
    assert set(STAGES) <= set(product_packages())
    tops = {site.top for site in third_party_imports()}
    assert {"pydantic", "ruamel", "typer", "numpy", "netmiko"} <= tops


def test_every_stage_ships() -> None:
    """pyproject.toml's package list includes every stage of the flow."""
    include = pyproject()["tool"]["setuptools"]["packages"]["find"]["include"]
    missing = [stage for stage in STAGES if f"{stage}*" not in include]
    assert not missing, f"pyproject.toml [tool.setuptools.packages.find] lacks {missing}"


def test_every_third_party_import_is_declared() -> None:
    """Each third-party module the product imports comes from a declared distribution."""
    listed = declared()
    undeclared = []
    for site in third_party_imports():
        providers = distributions_of(site.top)
        if not providers:
            undeclared.append(f"{site} (no installed distribution provides {site.top})")
        elif not providers & set(listed):
            undeclared.append(f"{site} (from {', '.join(sorted(providers))})")
    assert not undeclared, "imported but not in pyproject.toml:\n" + "\n".join(undeclared)


@pytest.mark.parametrize("distribution", sorted(declared()))
def test_every_declared_distribution_is_imported(distribution: str) -> None:
    """A declared runtime distribution is imported by the product (or says why not)."""
    assert modules_of(distribution), f"{distribution} is declared but not installed here"
    sites = _imports(distribution)
    if distribution in NOT_IMPORTED:
        assert not sites, f"{distribution} is imported after all: drop it from NOT_IMPORTED"
    else:
        assert sites, f"{distribution} is declared but no product module imports it"


def test_not_imported_names_declared_distributions() -> None:
    """Every exception above is a distribution pyproject.toml still declares."""
    assert set(NOT_IMPORTED) <= set(declared())


def test_an_extra_s_modules_are_imported_through_optional_imports() -> None:
    """Each import of a module only an extra provides sits inside ``with
    optional_imports():`` (or under TYPE_CHECKING), and the table names the extra that
    declares it."""
    listed = declared()
    wrong = []
    for site in third_party_imports():
        where = {listed[d] for d in distributions_of(site.top) if d in listed}
        if not where or "base" in where:
            continue
        extra = extra_providing(site.top)
        if extra is None or extra.name not in where:
            wrong.append(f"{site}: declared in {sorted(where)}, the table says {extra}")
        elif not (site.guarded or site.type_checking):
            wrong.append(f"{site}: not inside `with optional_imports():`")
    assert not wrong, "\n".join(wrong)


def test_base_modules_are_in_no_extra() -> None:
    """A module the base provides is not in the table (it is never missing)."""
    listed = declared()
    for site in third_party_imports():
        if any(listed.get(d) == "base" for d in distributions_of(site.top)):
            assert extra_providing(site.top) is None, site


def test_every_module_of_the_table_is_imported() -> None:
    """The table names no module the product does not import."""
    tops = {site.top for site in third_party_imports()}
    stale = [(e.name, m) for e in EXTRAS for m in e.modules if m not in tops]
    assert not stale, stale


def test_the_scan_tells_guarded_from_bare_imports(tmp_path: Path) -> None:
    """The scanner sees an import inside ``with optional_imports():``, a bare one, one
    under TYPE_CHECKING, and skips the standard library and local packages."""
    source = (
        "import json\n"
        "from typing import TYPE_CHECKING\n"
        "from inventory.extras import optional_imports\n"
        "import requests\n"
        "with optional_imports():\n"
        "    import numpy as np\n"
        "    from scipy import stats\n"
        "if TYPE_CHECKING:\n"
        "    import netmiko\n"
        "def f():\n"
        "    import paramiko\n"
    )
    sites = imports_in(source, "x.py", {"inventory"})
    assert [(s.module, s.guarded, s.type_checking) for s in sites] == [
        ("requests", False, False),
        ("numpy", True, False),
        ("scipy", True, False),
        ("netmiko", False, True),
        ("paramiko", False, False),
    ]

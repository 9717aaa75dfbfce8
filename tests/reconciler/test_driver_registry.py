"""Drivers are plugins: plumb's own register as ``plumb.drivers`` entry points like a
site's would, and a fleet names the driver of every device it reaches (the lab too)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from intent.fleet import load_fleet
from reconciler.drivers import plugin
from reconciler.targets import NO_RULES, TargetError, Targets
from rollouts import support
from tests.fleetcopy import FleetCopy
from tests.reconciler.labfleet import LabFleet, run_plumb

VENDOR = '''
from reconciler.drivers.base import Driver


class AcmeDriver:
    """A driver only a site's own package knows about."""

    def __init__(self, rule_options):
        self.rule_options = rule_options

    def close(self):
        pass


def acme(context, rule):
    return AcmeDriver(dict(rule.options))
'''


@pytest.fixture
def site_package(tmp_path: Path) -> Iterator[Path]:
    """An installed distribution (dist-info on sys.path) that registers driver ``acme``."""
    site = tmp_path / "site"
    (site / "acme_plumb").mkdir(parents=True)
    (site / "acme_plumb" / "__init__.py").write_text(VENDOR)
    info = site / "acme_plumb-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-plumb\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[plumb.drivers]\nacme = acme_plumb:acme\n")
    sys.path.insert(0, str(site))
    plugin._entry_points.cache_clear()
    yield site
    sys.path.remove(str(site))
    sys.modules.pop("acme_plumb", None)
    plugin._entry_points.cache_clear()


def test_plumbs_own_drivers_are_registered_entry_points() -> None:
    """eos, sonic, ansible and lab come from the plumb.drivers group, not a table."""
    names = {ep.name for ep in entry_points(group=plugin.DRIVER_GROUP)}
    assert {"eos", "sonic", "ansible", "lab"} <= names
    assert set(plugin.installed_drivers()) >= {"eos", "sonic", "ansible", "lab"}


def test_the_lab_supplies_rollout_support_through_its_entry_point() -> None:
    """The lab's clock, maintenance and metrics are reached by the driver name."""
    assert support.support_factory("lab") is not None
    assert support.support_factory("eos") is None


def test_a_site_package_adds_a_vendor_without_editing_plumb(
    orion: FleetCopy, site_package: Path
) -> None:
    """A rule naming a driver another package registers reaches that package's factory."""
    orion.set_drivers("drivers:\n  - driver: acme\n    roles: [spine]\n    options: {site: dc1}\n")
    LabFleet.create(orion).close()
    targets = Targets.for_fleet(load_fleet(orion.path))
    made = targets.driver("spine-1")
    assert type(made).__name__ == "AcmeDriver"
    assert made.rule_options == {"site": "dc1"}  # type: ignore[attr-defined]
    assert type(targets.driver("gpu-n01")).__name__ == "LabDriver"  # the rest: the lab


def test_an_unknown_driver_name_lists_the_installed_ones(orion: FleetCopy) -> None:
    """A rule naming a driver nobody registered is refused, naming what is installed."""
    orion.set_drivers("drivers:\n  - driver: nosuch\n", lab_for_the_rest=False)
    targets = Targets.for_fleet(load_fleet(orion.path))
    with pytest.raises(TargetError, match=r"no driver named 'nosuch' \(known: .*eos.*lab"):
        targets.driver("gpu-n01")


def test_a_fleet_without_driver_rules_is_refused_naming_drivers(orion: FleetCopy) -> None:
    """No `drivers:` rule no longer silently means the lab: one line says what to add."""
    orion.set_drivers("", lab_for_the_rest=False)
    done = run_plumb(orion.path, "plan")
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines == [f"error: {NO_RULES}"]
    assert "lab fleet does not exist" not in done.stderr
    assert not (orion.path / ".plumb" / "lab.db").exists()


def test_a_device_no_rule_matches_is_refused_by_name(orion: FleetCopy) -> None:
    """Rules that cover only the switches leave the GPU nodes without a driver: said so."""
    orion.set_drivers(
        "drivers:\n  - driver: lab\n    roles: [leaf, spine, frontend]\n",
        lab_for_the_rest=False,
    )
    LabFleet.create(orion).close()
    done = run_plumb(orion.path, "plan")
    assert done.returncode == 2
    assert "no `drivers:` rule in plumb.yaml matches gpu-n" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_plan_without_a_lab_leaves_no_lab_behind(orion: FleetCopy) -> None:
    """Refused for want of `plumb lab init`, plan creates no empty lab.db, and the
    message names the fleet path in the command to run."""
    done = run_plumb(orion.path, "plan")
    assert done.returncode == 2
    assert f"run `plumb lab init {orion.path}` first" in done.stderr
    assert not (orion.path / ".plumb" / "lab.db").exists()

"""`plumb validate` checks the switch drivers' rules in plumb.yaml (options and the
``image`` template against the NOS versions the intent pins), so a bad one is found
before an apply, not on a device after others were written."""

from __future__ import annotations

import contextlib

from typer.testing import CliRunner, Result

from plumb.cli import app
from tests.fleetcopy import FleetCopy

RULES = """\
drivers:
  - driver: eos
    platforms: [eos]
    options:
      image: "{eos_image}"
  - driver: sonic
    platforms: [sonic]
    options:
      image: "{sonic_image}"
"""


def _validate(fleet: FleetCopy, eos_image: str, sonic_image: str) -> Result:
    fleet.set_drivers(RULES.format(eos_image=eos_image, sonic_image=sonic_image))
    with contextlib.chdir(fleet.path):
        return CliRunner().invoke(app, ["validate"])


def test_good_images_validate(orion: FleetCopy) -> None:
    """Image templates that name valid images for every pinned NOS version pass."""
    done = _validate(
        orion, "flash:EOS-{version}.swi", "https://images.example.net/sonic-{version}.bin"
    )
    assert done.exit_code == 0, done.stderr


def test_an_eos_image_the_driver_refuses_is_an_input_error(orion: FleetCopy) -> None:
    """An EOS image that is not flash:/usb1:/file: ...swi exits 2 at its line."""
    done = _validate(
        orion, "http://x/EOS-{version}.swi", "https://images.example.net/sonic-{version}.bin"
    )
    assert done.exit_code == 2
    line = next(
        n
        for n, t in enumerate((orion.path / "plumb.yaml").read_text().splitlines(), 1)
        if "http://x/EOS" in t
    )
    assert done.stderr.startswith(f"plumb.yaml:{line}:"), done.stderr
    assert "drivers[0].options.image: for NOS 4.32.2F it names 'http://x/EOS-4.32.2F.swi'" in (
        done.stderr
    )
    assert "the eos driver refuses" in done.stderr


def test_a_sonic_image_url_with_a_space_is_an_input_error(orion: FleetCopy) -> None:
    """A SONiC image URL the driver would refuse (a space) exits 2, naming the rule."""
    done = _validate(orion, "flash:EOS-{version}.swi", "https://images/sonic {version}.bin")
    assert done.exit_code == 2
    assert "drivers[1].options.image: for NOS 202411 it names" in done.stderr


def test_an_unknown_driver_option_is_an_input_error(orion: FleetCopy) -> None:
    """A misspelt option is found by validate, at the rule's options."""
    orion.set_drivers("drivers:\n  - driver: eos\n    options:\n      imgae: x\n")
    with contextlib.chdir(orion.path):
        done = CliRunner().invoke(app, ["validate"])
    assert done.exit_code == 2
    assert "drivers[0].options: unknown driver option(s) ['imgae']" in done.stderr

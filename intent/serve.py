"""``plumb.yaml``'s ``serve:`` section: how the continuous controller (``plumb serve``)
follows git, treats drift, when it may correct it, and whom it tells.

* ``drift``: rules matched in order against each drifted field (its setting path, its
  device, and the intent file that owns it); the first match gives the ``mode``,
  ``warn`` (report) or ``correct`` (apply intent again). A field no rule matches is
  only reported.
* ``windows``: sync windows as in Argo CD: each opens at its cron ``schedule`` in its
  ``timezone`` and stays open ``duration_minutes``. Correction runs only while no
  ``deny`` window is open and, if any ``allow`` window is declared, one of them is.
* caps: at most ``max_devices_per_pass`` devices and ``max_fields_per_pass`` fields are
  corrected per pass; the rest wait for the next pass.
* ``notify``: webhooks whose URL comes from an environment variable (a Slack URL is a
  credential), in the generic JSON shape or Slack's.
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, StrictInt, StringConstraints, field_validator

from intent.cron import CronError, parse_cron
from inventory.schemabase import Strict

ServeEvent = Literal[
    "drift",
    "approve",
    "promotion",
    "hold",
    "abort",
    "rollback",
    "old_lease",
    "state_unreachable",
    "no_leader",
]
SERVE_EVENTS: tuple[ServeEvent, ...] = get_args(ServeEvent)  # every event, in order
PathGlob = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9*?\[\]/._:-]{1,200}$")]
DeviceGlob = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9*?\[\]._-]{1,64}$")]
EnvVar = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")]


class DriftRule(Strict):
    """Drift on matching fields is reported (``warn``) or corrected (``correct``)."""

    mode: Literal["warn", "correct"]
    paths: tuple[PathGlob, ...] = ("*",)
    devices: tuple[DeviceGlob, ...] = ("*",)
    owners: tuple[PathGlob, ...] = Field(
        ("*",), description="intent files owning the field, e.g. intent/qos.yaml"
    )


class SyncWindow(Strict):
    """A recurring span of time in which correction is allowed, or denied."""

    kind: Literal["allow", "deny"]
    schedule: Annotated[str, StringConstraints(min_length=1, max_length=200)] = Field(
        description="five-field cron expression or a nickname (@daily, @hourly, ...)"
    )
    duration_minutes: StrictInt = Field(ge=1, le=10080)
    timezone: Annotated[str, StringConstraints(min_length=1, max_length=64)] = "UTC"

    @field_validator("schedule")
    @classmethod
    def _cron(cls, value: str) -> str:
        try:
            parse_cron(value)
        except CronError as exc:
            raise ValueError(f"schedule: {exc}") from None
        return value

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {value!r} (an IANA name)") from None
        return value


class NotifyTarget(Strict):
    """A webhook told of the chosen events: ``json`` (generic) or ``slack`` payloads."""

    url_env: EnvVar
    format: Literal["json", "slack"] = "json"
    events: tuple[ServeEvent, ...] = SERVE_EVENTS


class ServeConfig(Strict):
    """How ``plumb serve`` runs this fleet."""

    remote: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._-]{1,64}$")] = "origin"
    branch: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._/-]{1,200}$")] = "main"
    interval_seconds: StrictInt = Field(300, ge=1, le=86400, description="reconcile every")
    poll_seconds: StrictInt = Field(60, ge=1, le=86400, description="fetch the branch every")
    old_lease_minutes: StrictInt = Field(60, ge=1, le=100_000)
    webhook_secret_env: EnvVar = "PLUMB_WEBHOOK_SECRET"
    webhook_secret_file: str | None = Field(None, min_length=1, max_length=4096)
    status_token_file: str | None = Field(
        None,
        min_length=1,
        max_length=4096,
        description="a 0600 file holding the bearer token that / and /status.json demand",
    )
    drift: tuple[DriftRule, ...] = ()
    windows: tuple[SyncWindow, ...] = ()
    max_devices_per_pass: StrictInt = Field(16, ge=1, le=100_000)
    max_fields_per_pass: StrictInt = Field(500, ge=1, le=10_000_000)
    notify: tuple[NotifyTarget, ...] = ()

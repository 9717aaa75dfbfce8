"""The ``PLUMB_*`` environment as one typed object, read when a value is used.

Every stage may import this module (it is the lowest); nothing reads a ``PLUMB_*``
variable elsewhere. :func:`read_settings` reads the environment as it is at the call,
so a variable set or changed after start-up (a test's monkeypatch, a drill's
``PLUMB_FAILPOINT``) counts; it builds :class:`Settings` again only when one of its
variables changed, which keeps the hot callers (the fail point on every journal
commit) at a few dictionary lookups.

Some variables are named in ``plumb.yaml`` and only default to a ``PLUMB_*`` name:
``state.url_env`` (``PLUMB_STATE_URL``), ``serve.webhook_secret_env``
(``PLUMB_WEBHOOK_SECRET``), a platform's ``username_env`` / ``password_env`` /
``secret_env`` (``PLUMB_SWITCH_USERNAME``, ``PLUMB_SWITCH_PASSWORD``,
``PLUMB_SWITCH_ENABLE_SECRET``), and also ``serve.notify[].url_env`` and
``sources.netbox.token_env`` (``NETBOX_TOKEN``). :func:`named_secret` reads any of
them: plumb's own names through :class:`Settings`, a name a fleet chose as it is.
Credentials are ``SecretStr``: printed, they show as ``**********``.

docs/environment.md lists every variable; a test keeps the code, this model and that
table in step.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

_OFF = ("", "0", "false", "no", "off")


class Settings(BaseSettings):
    """Each field reads the variable named by its alias; an empty value is unset."""

    model_config = SettingsConfigDict(
        case_sensitive=True, extra="ignore", frozen=True, env_ignore_empty=True
    )

    actor: str | None = Field(
        None,
        validation_alias="PLUMB_ACTOR",
        description="who acts, as audited and shown on the lease; default user@host",
    )
    cache_dir: str | None = Field(
        None,
        validation_alias="PLUMB_CACHE_DIR",
        description="parse cache folder, or off; default $XDG_CACHE_HOME/plumb/parsed",
    )
    debug: bool = Field(
        False,
        validation_alias="PLUMB_DEBUG",
        description="an internal error shows its traceback (any value but 0, false, no, off)",
    )
    failpoint: str | None = Field(
        None,
        validation_alias="PLUMB_FAILPOINT",
        description="SITE:N: SIGKILL this process the N-th time it passes SITE (drills)",
    )
    repo: Path | None = Field(
        None,
        validation_alias="PLUMB_REPO",
        description="the fleet repo, as -C/--repo (read by the command line's option)",
    )
    state_url: SecretStr | None = Field(
        None,
        validation_alias="PLUMB_STATE_URL",
        description="PostgreSQL URL of the state (the default of state.url_env)",
    )
    state_nondurable: str | None = Field(
        None,
        validation_alias="PLUMB_STATE_NONDURABLE",
        description="accept: record to a PostgreSQL state whose server does not make "
        "commits durable (fsync or full_page_writes off; a throwaway database)",
    )
    switch_username: str | None = Field(
        None,
        validation_alias="PLUMB_SWITCH_USERNAME",
        description="switch login (the default of a platform's username_env)",
    )
    switch_password: SecretStr | None = Field(
        None,
        validation_alias="PLUMB_SWITCH_PASSWORD",
        description="switch password (the default of a platform's password_env)",
    )
    switch_enable_secret: SecretStr | None = Field(
        None,
        validation_alias="PLUMB_SWITCH_ENABLE_SECRET",
        description="EOS enable secret (the default of a platform's secret_env)",
    )
    webhook_secret: SecretStr | None = Field(
        None,
        validation_alias="PLUMB_WEBHOOK_SECRET",
        description="push webhook secret of plumb serve (the default of webhook_secret_env)",
    )

    @field_validator("debug", mode="before")
    @classmethod
    def _switch(cls, value: Any) -> Any:
        """Set to anything but a word for off, as ``PLUMB_DEBUG=1`` or ``=yes``."""
        if isinstance(value, str):
            return value.strip().lower() not in _OFF
        return value


class _Given(Settings):
    """Settings from a mapping handed in, not from ``os.environ``."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)


def env_names() -> dict[str, str]:
    """Variable name -> field name, for every variable :class:`Settings` reads."""
    return {str(info.validation_alias): name for name, info in Settings.model_fields.items()}


_FIELDS = env_names()


@lru_cache(maxsize=16)
def _settings_for(present: tuple[tuple[str, str], ...]) -> Settings:
    # pydantic-settings reads os.environ itself; ``present`` is what it will find there
    del present
    return Settings()


def read_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """The settings as the environment holds them now (``environ`` instead of
    ``os.environ``: the same validation, for callers handed an environment)."""
    source = os.environ if environ is None else environ
    present = tuple((name, source[name]) for name in _FIELDS if source.get(name))
    if environ is None:
        return _settings_for(present)
    return _Given.model_validate(dict(present))


def named_secret(
    name: str, environ: Mapping[str, str] | None = None, *, strip: bool = True
) -> SecretStr | None:
    """The value of the variable ``name`` that ``plumb.yaml`` chose for a credential or
    URL, or None when it is unset or empty (blank too, when ``strip``)."""
    field = _FIELDS.get(name)
    if field is not None:
        typed = getattr(read_settings(environ), field)
        raw = typed.get_secret_value() if isinstance(typed, SecretStr) else typed
        raw = None if raw is None else str(raw)
    else:
        raw = (os.environ if environ is None else environ).get(name)
    if raw and strip:
        raw = raw.strip()
    return SecretStr(raw) if raw else None

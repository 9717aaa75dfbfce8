"""``plumb.yaml``'s ``sources:`` section: external systems the inventory is imported from.

``sources.netbox`` tells ``plumb inventory import netbox`` which environment variable
holds the API token, which NetBox site to read, and how NetBox's device role and
platform slugs map to plumb's (docs/netbox.md). plumb's own role and platform names map
to themselves without being listed; a role mapped to ``null`` is not imported.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from inventory.models import Platform, Role
from inventory.schemabase import Strict

Slug = Annotated[str, StringConstraints(pattern=r"^[-a-zA-Z0-9_]{1,100}$")]
EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")]


class NetboxSource(Strict):
    """How to read NetBox and map its slugs to plumb's names."""

    token_env: EnvName = Field(
        "NETBOX_TOKEN", description="environment variable holding the API token"
    )
    site: Slug | None = Field(None, description="import only this site (its slug)")
    roles: dict[Slug, Role | None] = Field(
        default_factory=dict, description="NetBox device role slug -> plumb role (null: skip)"
    )
    platforms: dict[Slug, Platform | None] = Field(
        default_factory=dict, description="NetBox platform slug -> plumb platform"
    )


class SourcesConfig(Strict):
    netbox: NetboxSource = Field(default_factory=NetboxSource)

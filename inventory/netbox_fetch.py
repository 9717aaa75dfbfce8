"""Read the records an import needs from NetBox's REST API (the I/O edge of the import).

The only module that talks to NetBox: it reads devices, interfaces, cables and racks
with pynetbox (one paged GET per kind, 1,000 records a page) and hands them, as the
JSON NetBox returned, to :mod:`inventory.netbox_map`. Third-party errors are mapped
once, here, and raised ``from`` the original::

    NetboxError                 the import cannot read NetBox
    ├── NetboxUnreachable       connection refused, DNS, TLS, timeout
    ├── NetboxAuthError         the token was refused (401/403)
    ├── NetboxTokenError        no token, or a token file others can read
    └── NetboxApiError          any other failed request, or an answer that is not the API

Messages never contain the token.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from inventory.extras import optional_imports

with optional_imports():
    import pynetbox
    import requests
    from pynetbox.core.query import ContentError, Request, RequestError
    from requests import PreparedRequest, Response

from inventory.netbox_map import NetboxData
from inventory.redact import display_url, scrub, secrets_of
from inventory.secretfile import SecretFileError, first_line

PAGE = 1000
# Only what the mapping reads (NetBox >= 4.0's ``fields`` parameter): an interface's
# full form also traces its cable path and link peers, which dominates the read time.
FIELDS = {
    "racks": "id,name,role,location,custom_fields",
    "devices": "id,name,role,platform,device_type,rack,primary_ip4,custom_fields",
    "interfaces": "id,name,device,type,speed,mgmt_only,custom_fields",
    "cables": "id,a_terminations,b_terminations,status,length,length_unit",
}
TIMEOUT_S = 30.0


class NetboxError(Exception):
    """The import could not read NetBox."""


class NetboxUnreachable(NetboxError):
    """No answer from the URL (refused, unresolvable, timed out)."""


class NetboxAuthError(NetboxError):
    """NetBox refused the token."""


class NetboxApiError(NetboxError):
    """A request failed otherwise, or the URL does not serve the NetBox API."""


class _TimeoutAdapter(requests.adapters.HTTPAdapter):
    """Every request gets a timeout: a silent server must not hang an import or CI."""

    def send(
        self,
        request: PreparedRequest,
        stream: bool = False,
        timeout: float | tuple[float | None, float | None] | None = None,
        verify: bool | str = True,
        cert: str | tuple[str, str] | None = None,
        proxies: dict[str, str] | None = None,
    ) -> Response:
        return super().send(
            request,
            stream=stream,
            timeout=TIMEOUT_S if timeout is None else timeout,
            verify=verify,
            cert=cert,
            proxies=proxies,
        )


def _session() -> requests.Session:
    session = requests.Session()
    adapter = _TimeoutAdapter()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def fetch_netbox(url: str, token: str, site: str | None = None) -> NetboxData:
    """Every device, interface and cable (of ``site`` if given) and every rack."""
    api = pynetbox.api(url.rstrip("/"), token=token)
    api.http_session = _session()
    filters = {"site": site} if site else {}

    def records(endpoint: Any, fields: str) -> tuple[dict[str, Any], ...]:
        request = Request(
            base=f"{endpoint.url}/",
            http_session=api.http_session,
            token=api.token,
            filters={**filters, "fields": fields},
            limit=PAGE,
        )
        return tuple(request.get())

    shown = display_url(url)
    hidden = [token, *secrets_of(url)]
    try:
        return NetboxData(
            racks=records(api.dcim.racks, FIELDS["racks"]),
            devices=records(api.dcim.devices, FIELDS["devices"]),
            interfaces=records(api.dcim.interfaces, FIELDS["interfaces"]),
            cables=records(api.dcim.cables, FIELDS["cables"]),
        )
    except RequestError as exc:
        status = exc.req.status_code
        if status in (401, 403):
            raise NetboxAuthError(
                f"NetBox at {shown} refused the token (HTTP {status}): check that it is a"
                " valid API token with read permission"
            ) from exc
        if status == 400:  # a filter NetBox refused, e.g. a site slug it does not have
            raise NetboxApiError(
                f"NetBox at {shown} refused the query (HTTP 400): {_detail(exc.req, hidden)}"
            ) from exc
        raise NetboxApiError(
            f"NetBox at {shown}: HTTP {status} for {scrub(display_url(exc.req.url), hidden)}"
        ) from exc
    except ContentError as exc:
        raise NetboxApiError(f"{shown} does not answer as the NetBox API (no JSON)") from exc
    except requests.exceptions.RequestException as exc:
        reason = type(exc).__name__
        raise NetboxUnreachable(f"cannot reach NetBox at {shown} ({reason})") from exc


def _detail(response: Response, hidden: list[str]) -> str:
    """NetBox's own words for a refused query: ``{"site": ["Select a valid choice..."]}``,
    scrubbed of the token and bounded (a proxy may echo the request's headers)."""
    try:
        body = response.json()
    except ValueError:
        return scrub(response.text, hidden)
    if isinstance(body, dict):
        return scrub(
            "; ".join(
                f"{key}: {' '.join(map(str, value)) if isinstance(value, list) else value}"
                for key, value in sorted(body.items())
            ),
            hidden,
        )
    return scrub(str(body), hidden)


class NetboxTokenError(NetboxError):
    """No token, or a token file that others could read."""


def read_token(token_file: Path | None, env_name: str, environ: Mapping[str, str]) -> str:
    """The API token: the first line of ``token_file`` (a regular file no one but its
    owner can read or write), else ``$env_name``."""
    if token_file is None:
        from inventory.envsettings import named_secret

        from_env = named_secret(env_name, environ)
        if from_env is None:
            raise NetboxTokenError(
                f"no NetBox API token: set ${env_name} or pass --token-file FILE"
            )
        return from_env.get_secret_value()
    try:
        token = first_line(token_file, "token file", "an API token")
    except SecretFileError as exc:
        raise NetboxTokenError(str(exc)) from exc
    if not token:
        raise NetboxTokenError(f"token file {token_file} is empty")
    return token

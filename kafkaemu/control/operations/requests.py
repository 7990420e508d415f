"""What the interceptor does besides faults: caps on the versions ApiVersions advertises, and the
request log."""
from __future__ import annotations

from ...protocol.catalog import catalog
from ..params import ControlError, api_key, boolean, integer, text
from ..table import Cli, P, Py, op
from .base import ControlBase


def _requests(*, after=None, api=None, client_id=None, node=None, errors=False, limit=None, last=None,
              connection=None):
    return {"after": after, "api": api, "client_id": client_id, "node": node, "errors": errors or None,
            "limit": limit, "last": last, "connection": connection}


class RequestOps(ControlBase):
    # -- API version caps -----------------------------------------------------------------
    @op("GET", "/api/api-versions", cli=[Cli("api-versions"), Cli("api-versions list")])
    def api_version_caps(self) -> dict:
        """The caps set on what ApiVersions advertises, and every API's implemented range."""
        from ...handlers import REGISTRY
        caps = self.broker.interceptor.version_caps
        return {"caps": [{"api": catalog().api_name(k), "api_key": k, "max_version": v}
                         for k, v in sorted(caps.items())],
                "apis": [{"api": catalog().api_name(k), "api_key": k, "min_version": lo, "max_version": hi,
                          "advertised_max": min(hi, caps.get(k, hi))} for k, lo, hi in REGISTRY.versions()]}

    @op("PUT", "/api/api-versions/{api}", api=P(api_key, required=True, help="API name (Fetch) or key"),
        max_version=P(integer(min=-1, max=32767), required=True,
                      help="highest version advertised; below the lowest implemented, the API is not advertised"),
        py=Py("cap_api_version", lambda api, max_version: {"api": api, "max_version": max_version}),
        cli=Cli("api-versions cap", "api", "max_version"))
    def api_version_cap(self, api: int, max_version: int) -> dict:
        """Advertise at most ``max_version`` of an API in ApiVersions (client fallback tests)."""
        self.broker.interceptor.version_caps[api] = max_version
        return {"api": catalog().api_name(api), "api_key": api, "max_version": max_version}

    @op("DELETE", "/api/api-versions/{api}", api=P(api_key, required=True, help="API name (Fetch) or key"),
        py=Py("uncap_api_version", lambda api: {"api": api}), cli=Cli("api-versions uncap", "api"))
    def api_version_uncap(self, api: int) -> dict:
        """Advertise an API's whole range again."""
        if self.broker.interceptor.version_caps.pop(api, None) is None:
            raise ControlError(404, f"{catalog().api_name(api)} has no version cap")
        return {"api": catalog().api_name(api), "api_key": api}

    @op("DELETE", "/api/api-versions", py=Py("clear_api_version_caps", lambda: {}, result=lambda r: None),
        cli=Cli("api-versions clear"))
    def api_version_caps_clear(self) -> dict:
        """Remove every cap."""
        removed = self.api_version_caps()["caps"]
        self.broker.interceptor.version_caps.clear()
        return {"removed": removed}

    # -- request log ----------------------------------------------------------------------
    @op("PUT", "/api/requests/config", enabled=P(boolean, help="log requests or not"),
        bodies=P(boolean, help="keep decoded request and response"),
        capacity=P(integer(min=1, max=1_000_000), help="entries kept (oldest dropped first)"),
        py=[Py("enable_request_log", lambda bodies=False, capacity=None:
               {"enabled": True, "bodies": bodies, "capacity": capacity}),
            Py("disable_request_log", lambda: {"enabled": False})],
        cli=[Cli("requests on", fixed={"enabled": True}, help="start logging requests"),
             Cli("requests off", fixed={"enabled": False}, help="stop logging requests")])
    def request_log_config(self, enabled: bool | None, bodies: bool | None, capacity: int | None) -> dict:
        """Switch the request log on or off, with or without the decoded bodies."""
        self.broker.interceptor.log.configure(enabled, bodies, capacity)
        return self.broker.interceptor.log.status()

    @op("GET", "/api/requests", after=P(integer(min=0), default=0, help="entries with seq above this"),
        limit=P(integer(min=1, max=100_000), default=1000, help="at most this many entries"),
        last=P(integer(min=1, max=100_000), help="only the newest N matching entries"),
        api=P(api_key, help="only this API"), client_id=P(text, help="only this client id"),
        node=P(integer(min=0), help="only requests to this node"),
        connection=P(integer(min=0), help="only this connection"),
        errors=P(boolean, default=False, help="only entries whose reply holds an error"),
        py=Py("requests", _requests, result="entries", doc="Logged requests, oldest first (see enable_request_log)."),
        cli=[Cli("requests", follow=True), Cli("requests list", follow=True)])
    def requests(self, after: int, limit: int, last: int | None, api: int | None, client_id: str | None,
                 node: int | None, connection: int | None, errors: bool) -> dict:
        """Log entries (oldest first) after a sequence number, optionally filtered; ``next_seq`` is
        what to pass as ``after`` next time."""
        rlog = self.broker.interceptor.log
        found = [e for e in rlog.entries
                 if e["seq"] > after and (api is None or e["api_key"] == api)
                 and (client_id is None or e["client_id"] == client_id) and (node is None or e["node"] == node)
                 and (connection is None or e["connection"] == connection) and (not errors or e["error_codes"])]
        found = found[-last:] if last is not None else found[:limit]
        return {**rlog.status(), "entries": found}

    @op("DELETE", "/api/requests", py=Py("clear_request_log", lambda: {}, result=lambda r: None),
        cli=Cli("requests clear"))
    def requests_clear(self) -> dict:
        """Forget the logged entries (the log stays on or off)."""
        self.broker.interceptor.log.clear()
        return self.broker.interceptor.log.status()

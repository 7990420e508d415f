"""Dispatch: one decoded request from a connection to its handler, and the handler's answer to
``respond``. Request interception (faults, the request log, version caps: ``intercept.py``) comes
first, at the cost of one attribute check while none of it is in use; client quotas
(``quotas.py``) likewise cost one check while no quota is set.

``handle_request`` is mounted on ``Broker`` as its method (no object in between: it runs for every
request)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .context import DEFERRED, NO_RESPONSE

if TYPE_CHECKING:
    from .broker import Broker


def handle_request(broker: "Broker", conn, api, header, body, respond, now_ms: int):
    """Handle one decoded request from ``conn``: fault rules, the request log and version caps
    first (the interceptor, which may wrap ``respond``), then the API's handler with a
    ``RequestContext`` (made by the broker's subclass of it, ``broker.services``). The answer goes
    to ``respond`` (now or later); returns NO_RESPONSE when there is none to send (acks=0), else
    DEFERRED. A black-holed request is never answered."""
    if now_ms > broker.now_ms:
        broker.now_ms = now_ms
    interceptor = broker.interceptor
    if not interceptor.idle:
        respond = interceptor.intercept(conn, api.api_key, header.request_api_version, header.correlation_id,
                                        header.client_id, body, respond, now_ms)
        if respond is None:
            return DEFERRED
    ctx = broker.services(api.api_key, header.request_api_version, header.correlation_id, header.client_id,
                          conn.client_host, conn.connection_id, conn.node_id, now_ms, respond, conn.principal)
    if broker.quota_entries:
        return broker.quota_enforcer.call(conn, api, header, body, ctx, getattr(conn, "request_bytes", 0))
    result = api.func(ctx, body)
    if result is NO_RESPONSE or result is DEFERRED:
        return result
    respond(result)
    return DEFERRED

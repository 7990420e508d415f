"""Quota enforcement on the request path, as KafkaApis with ClientQuotaManager: a Produce records
its request's bytes against ``producer_byte_rate``, a Fetch its reply's record bytes against
``consumer_byte_rate`` (its ``max_bytes`` capped at what the quota's window allows; a throttled
Fetch answers empty and takes its bytes back), every request
its handler time against ``request_percentage``. The largest throttle goes into the reply's
``throttle_time_ms`` and mutes the connection for that long on the broker's clock (KIP-219);
versions from before KIP-219 (Produce < 6, Fetch < 8) get their reply only when the throttle
ends. While no quota is set, a request costs one check (``dispatch.py``)."""
from __future__ import annotations

import itertools
import time

from ..logging import get_logger
from ..core.quotas.manager import NANOS_TO_PERCENTAGE, ClientQuotaManagers
from ..protocol.api_keys import ApiKey
from .context import DEFERRED, NO_RESPONSE

CLIENT_THROTTLE_SINCE = {ApiKey.PRODUCE: 6, ApiKey.FETCH: 8}   # shouldClientThrottle versions
EXEMPT = frozenset({ApiKey.WRITE_TXN_MARKERS})                 # cluster actions: never throttled
_serial = itertools.count(1)
log = get_logger("kafkaemu.quotas")


def _user(principal: str) -> str:
    return principal.partition(":")[2] if ":" in principal else principal


def _record_bytes(response: dict) -> int:
    total = 0
    for topic in response.get("responses") or ():
        for partition in topic.get("partitions") or ():
            records = partition.get("records")
            if records:
                total += sum(map(len, records)) if isinstance(records, list) else len(records)
    return total


class QuotaEnforcer:
    def __init__(self, managers: ClientQuotaManagers, timers, clock) -> None:
        self.managers = managers
        self.timers = timers
        self.clock = clock
        self.thread_time_ns = time.perf_counter_ns   # a test may give each request a fixed cost

    def call(self, conn, api, header, body, ctx, request_bytes: int):
        """Run the handler with the client's quotas applied; returns what dispatch returns."""
        managers = self.managers
        api_key, version = api.api_key, header.request_api_version
        user, client_id, node = _user(ctx.principal), header.client_id or "", ctx.node_id
        respond = ctx.respond
        start = self.thread_time_ns()
        elapsed: list[int] = []

        def throttle_for(response: dict | None) -> int:
            now_ms = self.clock()
            spent = elapsed[0] if elapsed else self.thread_time_ns() - start
            throttle = 0 if api_key in EXEMPT else \
                managers.request.record(user, client_id, spent * NANOS_TO_PERCENTAGE, now_ms, node)
            if api_key == ApiKey.PRODUCE:
                throttle = max(throttle, managers.produce.record(user, client_id, request_bytes, now_ms, node))
            elif api_key == ApiKey.FETCH and response is not None and getattr(body, "replica_id", -1) < 0:
                size = _record_bytes(response)
                fetch_throttle = managers.fetch.record(user, client_id, size, now_ms, node)
                if max(fetch_throttle, throttle) > 0:
                    managers.fetch.unrecord(user, client_id, size, now_ms, node)
                throttle = max(throttle, fetch_throttle)
            return throttle

        def throttled_respond(response: dict) -> None:
            throttle = throttle_for(response)
            if throttle <= 0:
                respond(response)
                return
            if api_key == ApiKey.FETCH:   # FetchContext.getThrottledResponse: no partitions
                response = dict(response, responses=[])
            response = dict(response, throttle_time_ms=max(throttle, response.get("throttle_time_ms") or 0))
            log.debug("client_throttled", user=user, client_id=client_id, api=api.name, throttle_time_ms=throttle)
            until = self.clock() + throttle
            mute = getattr(conn, "throttle", None)
            if mute is not None:
                mute(until)
            if version < CLIENT_THROTTLE_SINCE.get(api_key, 0):
                self.timers.schedule(("quota-delayed-reply", next(_serial)), until, lambda: respond(response))
            else:
                respond(response)

        if api_key == ApiKey.FETCH and getattr(body, "replica_id", -1) < 0:
            window = managers.fetch.max_value_in_window(user, client_id)   # getMaxValueInQuotaWindow
            if window is not None and window < body.max_bytes:
                body.max_bytes = int(window)
        ctx.respond = throttled_respond
        result = api.func(ctx, body)
        elapsed.append(self.thread_time_ns() - start)
        if result is NO_RESPONSE:   # acks=0: nothing to answer, but the channel is still muted
            throttle = throttle_for(None)
            mute = getattr(conn, "throttle", None)
            if throttle > 0 and mute is not None:
                mute(self.clock() + throttle)
            return NO_RESPONSE
        if result is DEFERRED:
            return DEFERRED
        throttled_respond(result)
        return DEFERRED

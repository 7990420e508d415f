"""The one hook a request passes between decoding and its handler: fault rules (the live ones:
``Faults``; a rule, ``kafkaemu.faults.FaultRule``, comes with the first one added), the request log
and API version caps. Sans-IO, on the broker's loop; costs one attribute check per request while
none of them is in use.

``intercept`` returns the ``respond`` the handler should call (wrapped as needed), or None when a
fault black-holes the request (it is never handled nor answered).
"""
from __future__ import annotations

import base64
import itertools
import time
from collections import deque
from typing import TYPE_CHECKING, Callable

from ..protocol.api_keys import ApiKey
from ..protocol.catalog import catalog
from ..protocol.errors import ErrorCode

if TYPE_CHECKING:
    from ..faults import FaultRule
    from .broker import Broker

_TOPIC_NAME_KEYS = ("name", "topic", "topic_name")
_PARTITION_KEYS = ("partition_index", "partition", "index")
_PARTITION_LIST_KEYS = ("partition_indexes", "partitions")
MAX_INLINE_BYTES = 512  # longer byte fields appear in the request log as {"size": n}


class Faults:
    """The live rules (``rules``, in the order added) and those that fired their count (``spent``),
    kept so that ``all()`` reports how often every rule fired."""

    def __init__(self) -> None:
        self.rules: list[FaultRule] = []
        self.spent: list[FaultRule] = []
        self._rule_ids = itertools.count(1)
        self._ids = itertools.count()

    def add(self, rule: FaultRule) -> FaultRule:
        rule.id = next(self._rule_ids)
        self.rules.append(rule)
        return rule

    def all(self) -> list[FaultRule]:
        return sorted(self.rules + self.spent, key=lambda r: r.id)

    def remove(self, rule_id: int) -> FaultRule | None:
        for rules in (self.rules, self.spent):
            for rule in rules:
                if rule.id == rule_id:
                    rules.remove(rule)
                    return rule
        return None

    def clear(self) -> None:
        self.rules.clear()
        self.spent.clear()

    def take(self, api_key: int, client_id: str | None, api_version: int = 0, node_id: int = 0,
             names_topic=None) -> FaultRule | None:
        """The first live rule matching this request, counting it as fired. ``names_topic(topic,
        partition)`` says whether the request names a topic (partition) that a scoped rule wants."""
        for rule in self.rules:
            if not rule.matches(api_key, api_version, client_id, node_id):
                continue
            if rule.topic is not None and (names_topic is None or not names_topic(rule.topic, rule.partition)):
                continue
            rule.fired += 1
            if not rule.active:
                self.rules.remove(rule)
                self.spent.append(rule)
            return rule
        return None

    def next_timer_key(self) -> str:
        return f"fault-delay-{next(self._ids)}"


class RequestLog:
    """Entries of answered requests, oldest first, numbered from 1 (``seq``) so a reader can ask for
    those after the last it saw. An entry is written when its reply is sent (or dropped)."""

    def __init__(self, capacity: int = 10000) -> None:
        self.enabled = False
        self.bodies = False
        self.entries: deque[dict] = deque(maxlen=capacity)
        self.next_seq = 1
        self.evicted = 0

    def configure(self, enabled: bool | None = None, bodies: bool | None = None, capacity: int | None = None) -> None:
        if enabled is not None:
            self.enabled = enabled
        if bodies is not None:
            self.bodies = bodies
        if capacity is not None and capacity != self.entries.maxlen:
            kept = list(self.entries)[-capacity:]
            self.evicted += len(self.entries) - len(kept)
            self.entries = deque(kept, maxlen=capacity)

    def add(self, entry: dict) -> None:
        if len(self.entries) == self.entries.maxlen:
            self.evicted += 1
        entry["seq"] = self.next_seq
        self.next_seq += 1
        self.entries.append(entry)

    def clear(self) -> None:
        self.entries.clear()

    def status(self) -> dict:
        return {"enabled": self.enabled, "bodies": self.bodies, "capacity": self.entries.maxlen,
                "size": len(self.entries), "next_seq": self.next_seq, "evicted": self.evicted}


class RequestInterceptor:
    def __init__(self, broker: "Broker") -> None:
        self.broker = broker
        self.log = RequestLog()
        self.version_caps: dict[int, int] = {}   # api key -> highest version ApiVersions advertises
        self.on_reply: Callable[[], None] | None = None   # set while awaits are pending

    @property
    def idle(self) -> bool:
        return not (self.broker.faults.rules or self.log.enabled or self.version_caps or self.on_reply)

    def intercept(self, conn, api_key: int, api_version: int, correlation_id: int, client_id: str | None, body,
                  respond: Callable[[dict], None], now_ms: int) -> Callable[[dict], None] | None:
        if self.idle:
            return respond
        broker = self.broker
        node_id = conn.node_id
        fault = None
        withheld: list = []
        if broker.faults.rules:
            fault = broker.faults.take(api_key, client_id, api_version, node_id,
                                       lambda topic, partition: self._names(body, topic, partition))
        started = time.perf_counter()
        entry = None
        if self.log.enabled:
            entry = {"time_ms": now_ms, "node": node_id, "connection": conn.connection_id,
                     "client_host": conn.client_host, "principal": getattr(conn, "principal", None),
                     "client_id": client_id, "api": catalog().api_name(api_key),
                     "api_key": int(api_key), "version": api_version, "correlation_id": correlation_id,
                     "fault": fault.id if fault else None}
            if self.log.bodies:
                entry["request"] = to_json(body)
        if fault is not None:
            conn.log.info("fault_injected", api=catalog().api_name(api_key), rule=fault.id,
                          error_code=fault.error_code, delay_ms=fault.delay_ms,
                          drop_connection=fault.drop_connection, black_hole=fault.black_hole)
            if fault.black_hole:
                self._finish(entry, started, None, "black_holed")
                return None
            withheld = _withhold_produce(body, fault) if api_key == ApiKey.PRODUCE else []
        if entry is not None and api_key == ApiKey.PRODUCE and getattr(body, "acks", None) == 0:
            self._finish(entry, started, None, "no_response")  # acks=0: the handler never replies
            entry = None

        def logged(response: dict) -> None:
            respond(response)
            self._finish(entry, started, response, "answered")
            if self.on_reply is not None:
                self.on_reply()

        out = logged if (entry is not None or self.on_reply is not None) else respond
        if fault is not None:
            out = self._faulty(conn, fault, out, entry, started, withheld)
        if api_key == ApiKey.API_VERSIONS and self.version_caps:
            out = self._capped(out)
        return out

    # -- faults ----------------------------------------------------------------------------
    def _faulty(self, conn, fault: FaultRule, respond, entry, started, withheld: list):
        broker = self.broker

        def faulty_respond(response: dict) -> None:
            if fault.drop_connection:
                self._finish(entry, started, None, "dropped")
                conn.abort()
                return
            if fault.error_code is not None:
                if fault.topic is None:
                    from ..faults import replace_error_codes
                    response = replace_error_codes(response, fault.error_code)
                elif withheld:
                    response = _answer_withheld(response, withheld, fault.error_code)
                else:
                    response = self._replace_partition_errors(response, fault)
            if fault.delay_ms:
                broker.timers.schedule(broker.faults.next_timer_key(), broker.now_ms + fault.delay_ms,
                                       lambda: respond(response))
            else:
                respond(response)
        return faulty_respond

    def _topic_ids(self, topic: str) -> set:
        t = self.broker.store.get(topic)
        return {t.topic_id} if t is not None else set()

    def _names(self, body, topic: str, partition: int | None) -> bool:
        """Whether a request names ``topic`` (and ``partition``); a topic entry listing no
        partitions (Metadata) names all of them."""
        for entry in _topic_entries(body, topic, self._topic_ids(topic)):
            found = _partitions_of(entry)
            if partition is None or found is None or partition in found:
                return True
        return False

    def _replace_partition_errors(self, response: dict, fault: FaultRule) -> dict:
        """A copy of ``response`` with the error of the rule's topic (partition) entries replaced,
        their data emptied as Kafka answers a failed partition."""
        response = _copy(response)
        for entry in _topic_entries(response, fault.topic, self._topic_ids(fault.topic)):
            touched = False
            for value in list(entry.values()):
                if not isinstance(value, list):
                    continue
                for item in value:
                    if not isinstance(item, dict):
                        continue
                    index = next((item[k] for k in _PARTITION_KEYS if isinstance(item.get(k), int)), None)
                    if index is None or (fault.partition is not None and index != fault.partition):
                        continue
                    _fail_partition(item, fault.error_code)
                    touched = True
            if not touched and fault.partition is None and "error_code" in entry:
                entry["error_code"] = fault.error_code
        return response

    # -- version caps ----------------------------------------------------------------------
    def _capped(self, respond):
        caps = self.version_caps

        def capped_respond(response: dict) -> None:
            keys = []
            for api in response.get("api_keys") or []:
                cap = caps.get(api["api_key"])
                if cap is None:
                    keys.append(api)
                elif cap >= api["min_version"]:
                    keys.append(dict(api, max_version=min(api["max_version"], cap)))
            respond(dict(response, api_keys=keys))
        return capped_respond

    # -- the log ---------------------------------------------------------------------------
    def _finish(self, entry: dict | None, started: float, response: dict | None, outcome: str) -> None:
        if entry is None:
            return
        entry["latency_ms"] = round((time.perf_counter() - started) * 1000, 3)
        entry["outcome"] = outcome
        entry["error_codes"] = error_names(response) if response is not None else []
        if self.log.bodies:
            entry["response"] = to_json(response) if response is not None else None
        self.log.add(entry)


# -- walking decoded messages -------------------------------------------------------------------
def _topic_entries(obj, topic: str, topic_ids: set):
    """The dicts of a decoded request or a response that stand for ``topic`` (by name or id)."""
    if isinstance(obj, dict):
        if any(obj.get(k) == topic for k in _TOPIC_NAME_KEYS if isinstance(obj.get(k), str)) \
                or (topic_ids and obj.get("topic_id") in topic_ids):
            yield obj
            return
        for value in obj.values():
            if isinstance(value, (dict, list)):
                yield from _topic_entries(value, topic, topic_ids)
    elif isinstance(obj, list):
        for value in obj:
            if isinstance(value, (dict, list)):
                yield from _topic_entries(value, topic, topic_ids)


def _partitions_of(entry: dict) -> set[int] | None:
    """The partitions a topic entry lists, or None when it lists none."""
    found: set[int] = set()
    listed = False
    for key, value in entry.items():
        if not isinstance(value, list):
            continue
        for item in value:
            if isinstance(item, dict):
                index = next((item[k] for k in _PARTITION_KEYS if isinstance(item.get(k), int)), None)
                if index is not None:
                    found.add(index)
                    listed = True
            elif isinstance(item, int) and key in _PARTITION_LIST_KEYS:
                found.add(item)
                listed = True
    return found if listed else None


def _withhold_produce(body, fault: FaultRule) -> list[tuple[str, int]]:
    """Take the partitions an error rule scoped to a topic fails out of a Produce request, so that
    their records are not appended (a broker answering NOT_LEADER_OR_FOLLOWER has not written
    them, and the producer's retry must not duplicate them). Returns (topic, partition) taken."""
    if fault.error_code is None or fault.topic is None or fault.drop_connection:
        return []
    taken = []
    for td in body.topic_data:
        if td.name != fault.topic:
            continue
        failed = [pd for pd in td.partition_data if fault.partition is None or pd.index == fault.partition]
        taken += [(td.name, pd.index) for pd in failed]
        td.partition_data[:] = [pd for pd in td.partition_data if all(pd is not f for f in failed)]
    return taken


def _answer_withheld(response: dict, withheld: list[tuple[str, int]], code: int) -> dict:
    response = _copy(response)
    topics = {t["name"]: t for t in response.get("responses", [])}
    for name, index in withheld:
        topic = topics.get(name)
        if topic is None:
            topic = topics[name] = {"name": name, "partition_responses": []}
            response.setdefault("responses", []).append(topic)
        topic["partition_responses"].append({"index": index, "error_code": code, "base_offset": -1,
                                             "log_append_time_ms": -1, "log_start_offset": -1, "record_errors": [],
                                             "error_message": None})
    return response


def _fail_partition(item: dict, code: int) -> None:
    item["error_code"] = code
    if "records" in item:
        item["records"] = b""
    for key in ("high_watermark", "last_stable_offset", "log_start_offset", "base_offset"):
        if key in item:
            item[key] = -1


def _copy(obj):
    if isinstance(obj, dict):
        return {k: _copy(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_copy(v) for v in obj]
    return obj


def error_names(response) -> list[str]:
    """The distinct non-zero error codes of a response, by name, in the order met."""
    found: list[int] = []

    def walk(obj) -> None:
        if isinstance(obj, dict):
            for key, value in obj.items():
                if key == "error_code" and isinstance(value, int):
                    if value and value not in found:
                        found.append(value)
                elif isinstance(value, (dict, list)):
                    walk(value)
        elif isinstance(obj, list):
            for value in obj:
                if isinstance(value, (dict, list)):
                    walk(value)
    walk(response)
    return [error_name(code) for code in found]


def error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return str(code)


def to_json(obj):
    """A decoded message as JSON values: bytes as base64 (longer ones as their size), enums as numbers."""
    if isinstance(obj, dict):
        return {k: to_json(v) for k, v in obj.items() if not (isinstance(k, str) and k.startswith("_"))}
    if isinstance(obj, (list, tuple)):
        return [to_json(v) for v in obj]
    if isinstance(obj, (bytes, bytearray, memoryview)):
        if len(obj) > MAX_INLINE_BYTES:
            return {"size": len(obj)}
        return base64.b64encode(bytes(obj)).decode()
    if isinstance(obj, bool) or obj is None or isinstance(obj, (str, float)):
        return obj
    if isinstance(obj, int):
        return int(obj)
    return str(obj)

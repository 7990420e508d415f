"""Fault rules: requests that fail with an error, answer late, drop their connection or vanish."""
from __future__ import annotations

from ...faults import FaultRule
from ...protocol.catalog import catalog
from ...broker.intercept import error_name
from ..params import ControlError, api_key, bad, boolean, duration_ms, error_code, integer, text
from ..table import Cli, P, Py, op
from .base import ControlBase, log


def _inject_fault(api, *, error=None, delay_ms=0, drop_connection=False, black_hole=False, times=1, client_id=None,
                  min_version=None, max_version=None, node=None, topic=None, partition=None, error_code=None):
    if error is not None and error_code is not None:
        raise TypeError("give error or error_code, not both")
    return {"api": api, "error": error if error is not None else error_code, "delay_ms": delay_ms or None,
            "drop_connection": drop_connection or None, "black_hole": black_hole or None, "count": times,
            "until_removed": True if times is None else None, "client_id": client_id, "min_version": min_version,
            "max_version": max_version, "node": node, "topic": topic, "partition": partition}


INJECT_FAULT_DOC = """Make the next ``times`` matching requests fail, lag, drop or vanish (``times=None``:
until removed): ``inject_fault("Heartbeat", error="NOT_COORDINATOR")``. ``topic`` and
``partition`` scope a rule to requests naming them and replace only their entries' error.
Numbers work too (``error_code`` is ``error``'s older name). Returns the rule, with its id."""


class FaultOps(ControlBase):
    @staticmethod
    def _fault_view(rule: FaultRule) -> dict:
        return {"id": rule.id, "api": catalog().api_name(rule.api_key), "api_key": rule.api_key,
                "error": error_name(rule.error_code) if rule.error_code is not None else None,
                "error_code": rule.error_code, "delay_ms": rule.delay_ms, "drop_connection": rule.drop_connection,
                "black_hole": rule.black_hole, "client_id": rule.client_id, "min_version": rule.min_version,
                "max_version": rule.max_version, "node": rule.node_id, "topic": rule.topic,
                "partition": rule.partition, "count": rule.times, "fired": rule.fired, "active": rule.active}

    @op("GET", "/api/faults", py=Py("faults", lambda: {}, result="faults"), cli=[Cli("faults"), Cli("fault list")])
    def faults(self) -> dict:
        """Every rule (spent ones too) with how often it fired."""
        return {"faults": [self._fault_view(r) for r in self.broker.faults.all()]}

    @op("POST", "/api/faults",
        api=P(api_key, required=True, help="API name (Heartbeat) or key (12)"),
        error=P(error_code, help="error name (NOT_COORDINATOR) or code"),
        delay_ms=P(duration_ms, default=0, help="answer this much later (broker clock)"),
        drop_connection=P(boolean, default=False, help="handle, then close the connection without answering"),
        black_hole=P(boolean, default=False, help="never handle nor answer the request"),
        count=P(integer(min=1), default=1, help="how many requests it fails (default 1)"),
        until_removed=P(boolean, default=False, help="fire until removed instead of count times"),
        client_id=P(text, help="only requests of this client id"),
        min_version=P(integer(min=0, max=32767), help="only requests of this API version or later"),
        max_version=P(integer(min=0, max=32767), help="only requests of this API version or earlier"),
        node=P(integer(min=0), help="only requests to this node"),
        topic=P(text, help="only requests naming this topic"),
        partition=P(integer(min=0), help="only requests naming this partition (needs topic)"),
        py=Py("inject_fault", _inject_fault, doc=INJECT_FAULT_DOC), cli=Cli("fault add", flags={"delay_ms": "--delay"}))
    def fault_add(self, api: int, error: int | None, delay_ms: int, drop_connection: bool, black_hole: bool,
                  count: int, until_removed: bool, client_id: str | None, min_version: int | None,
                  max_version: int | None, node: int | None, topic: str | None, partition: int | None) -> dict:
        """Add a fault rule; the answer is the rule with its id."""
        if error is None and not delay_ms and not drop_connection and not black_hole:
            raise bad("fault_add: give an error, a delay_ms, drop_connection or black_hole")
        if black_hole and (error is not None or delay_ms or drop_connection):
            raise bad("fault_add: black_hole never answers, so it takes no error, delay_ms or drop_connection")
        if partition is not None and topic is None:
            raise bad("fault_add: partition needs topic")
        if min_version is not None and max_version is not None and min_version > max_version:
            raise bad(f"fault_add: min_version {min_version} is above max_version {max_version}")
        if node is not None and node not in self.broker.placement.listeners:
            raise bad(f"fault_add: no node {node} (nodes: {sorted(self.broker.placement.listeners)})")
        rule = self.broker.faults.add(FaultRule(
            api, error_code=error, delay_ms=delay_ms, drop_connection=drop_connection, black_hole=black_hole,
            client_id=client_id, times=None if until_removed else count, min_version=min_version,
            max_version=max_version, node_id=node, topic=topic, partition=partition))
        log.info("fault_added", rule=rule.id, api=catalog().api_name(api))
        return self._fault_view(rule)

    @op("DELETE", "/api/faults/{id}", id=P(integer(min=1), required=True, help="the rule's id"),
        py=Py("remove_fault", lambda rule_id: {"id": rule_id}), cli=Cli("fault remove", "id"))
    def fault_remove(self, id: int) -> dict:  # noqa: A002 (the route's name)
        """Remove one rule; the answer is the rule as it was (with how often it fired)."""
        rule = self.broker.faults.remove(id)
        if rule is None:
            raise ControlError(404, f"no fault rule {id}")
        return self._fault_view(rule)

    @op("DELETE", "/api/faults", py=Py("clear_faults", lambda: {}, result=lambda r: None), cli=Cli("fault clear"))
    def faults_clear(self) -> dict:
        """Remove every rule."""
        removed = [self._fault_view(r) for r in self.broker.faults.all()]
        self.broker.faults.clear()
        return {"removed": removed}

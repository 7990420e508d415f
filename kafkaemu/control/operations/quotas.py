"""Client quotas without a client: list them with what each throttled client measures, set and
remove a value (as AlterClientQuotas, with its checks). ``<default>`` names a default entity."""
from __future__ import annotations

import math

from ...core.quotas.entities import CLIENT_ID, USER, Entity
from ..params import bad, text
from ..table import Cli, P, Py, op
from .base import ControlBase

DEFAULT = "<default>"


def _number(name: str, value) -> float:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise bad(f"{name} must be a number, got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise bad(f"{name} must be a number, got {value!r}")
    return float(value)


def _entity(user: str | None, client_id: str | None) -> Entity:
    if user is None and client_id is None:
        raise bad("name a user, a client_id or both (<default> for a default entity)")
    parts = []
    if user is not None:
        parts.append((USER, None if user == DEFAULT else user))
    if client_id is not None:
        parts.append((CLIENT_ID, None if client_id == DEFAULT else client_id))
    return Entity(parts)


def _entity_view(entity: Entity) -> dict:
    return {t: DEFAULT if n is None else n for t, n in sorted(entity, key=lambda p: p[0])}


_ENTITY = dict(user=P(text, help="the user (principal name, ANONYMOUS without SASL) or <default>"),
               client_id=P(text, help="the client id or <default>"))


class QuotaOps(ControlBase):
    @op("GET", "/api/client-quotas", py=Py("client_quotas"), cli=Cli("client-quotas"))
    def client_quotas(self) -> dict:
        """Every quota entity with its values, and each measured client (user, client id) with
        its rate, its bound and how many replies it was throttled in (produce, fetch, request)."""
        managers = self.broker.quota_enforcer.managers
        now = self._now()
        entries = self.broker.quotas.entries.items()
        return {"quotas": [{"entity": _entity_view(e), "values": dict(v)} for e, v in entries],
                "clients": {"produce": managers.produce.rates(now), "fetch": managers.fetch.rates(now),
                            "request": managers.request.rates(now)}}

    def _alter(self, entity: Entity, key: str, value: float | None) -> dict:
        [(_, code, message)] = self.broker.quotas.alter([(entity, [(key, value or 0.0, value is None)])])
        if code != "NONE":
            raise bad(message)
        return {"entity": _entity_view(entity), "values": dict(self.broker.quotas.entries.get(entity, {}))}

    @op("POST", "/api/client-quotas", **_ENTITY,
        key=P(text, required=True, help="producer_byte_rate, consumer_byte_rate, request_percentage or "
                                        "controller_mutation_rate"),
        value=P(_number, required=True, help="the quota (bytes/s, or percent of one thread)"),
        py=Py("set_client_quota", lambda key, value, *, user=None, client_id=None:
              {"key": key, "value": value, "user": user, "client_id": client_id}),
        cli=Cli("client-quota set", "key", "value"))
    def client_quota_set(self, user, client_id, key, value) -> dict:
        """Set a quota of a user, a client id or both (as AlterClientQuotas); enforced from the next request."""
        return self._alter(_entity(user, client_id), key, value)

    @op("DELETE", "/api/client-quotas", **_ENTITY, key=P(text, required=True, help="the quota to remove"),
        py=Py("remove_client_quota", lambda key, *, user=None, client_id=None:
              {"key": key, "user": user, "client_id": client_id}),
        cli=Cli("client-quota remove", "key"))
    def client_quota_remove(self, user, client_id, key) -> dict:
        """Remove a quota of a user, a client id or both: the client runs at full speed again."""
        return self._alter(_entity(user, client_id), key, None)

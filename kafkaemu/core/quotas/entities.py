"""Quota entities and their values, as a KRaft cluster keeps them: alteration with the
controller's validation (``ClientQuotaControlManager``), description with the broker's filters
(``ClientQuotaCache``) and the quota that applies to a (user, client id) with
``DefaultQuotaCallback``'s precedence.

An entity is a frozenset of (type, name) pairs; a name of None is the type's default entity."""
from __future__ import annotations

import math
from typing import Callable, Iterable

USER, CLIENT_ID, IP = "user", "client-id", "ip"
PRODUCER_BYTE_RATE, CONSUMER_BYTE_RATE = "producer_byte_rate", "consumer_byte_rate"
REQUEST_PERCENTAGE, CONTROLLER_MUTATION_RATE = "request_percentage", "controller_mutation_rate"
CONNECTION_CREATION_RATE = "connection_creation_rate"

# QuotaConfig's keys and their ConfigDef types
CLIENT_KEYS = {PRODUCER_BYTE_RATE: "LONG", CONSUMER_BYTE_RATE: "LONG", REQUEST_PERCENTAGE: "DOUBLE",
               CONTROLLER_MUTATION_RATE: "DOUBLE"}
IP_KEYS = {CONNECTION_CREATION_RATE: "INT"}
_LIMITS = {"SHORT": (2 ** 15 - 1, "a SHORT"), "INT": (2 ** 31 - 1, "an INT"), "LONG": (2 ** 63 - 1, "a LONG")}

MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2

Entity = frozenset


class QuotaError(Exception):
    """A request Kafka refuses: ``code`` is the error's name in ``ErrorCode``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def entity_text(entity: Entity) -> str:
    """Kafka's ClientQuotaEntity.toString, for error messages."""
    parts = ", ".join(f"{t}={'<default>' if n is None else n}" for t, n in sorted(entity, key=lambda p: p[0]))
    return "ClientQuotaEntity(entries={" + parts + "})"


def _valid_ip(name: str | None) -> bool:
    if name is None:
        return True
    import ipaddress   # with the first ip quota (a start does without it)
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


def validate_entity(entity: Entity) -> dict:
    """The entity's types and the keys they allow, or QuotaError (INVALID_REQUEST) as the controller."""
    if not entity:
        raise QuotaError("INVALID_REQUEST", "Invalid empty client quota entity")
    types = {}
    for entity_type, name in entity:
        if entity_type not in (USER, CLIENT_ID, IP):
            raise QuotaError("INVALID_REQUEST", f"Unhandled client quota entity type: {entity_type}")
        if name is not None and name == "":
            raise QuotaError("INVALID_REQUEST", f"Empty {entity_type} not supported")
        types[entity_type] = name
    if IP in types:
        if len(types) > 1:
            raise QuotaError("INVALID_REQUEST", "Invalid quota entity combination, IP entity should"
                                                "not be combined with User or ClientId")
        if not _valid_ip(types[IP]):
            raise QuotaError("INVALID_REQUEST", f"{types[IP]} is not a valid IP or resolvable host.")
        return IP_KEYS
    return CLIENT_KEYS


def validate_value(keys: dict, key: str, value: float) -> None:
    kind = keys.get(key)
    if kind is None:
        raise QuotaError("INVALID_REQUEST", f"Invalid configuration key {key}")
    if not value > 0.0:
        raise QuotaError("INVALID_REQUEST", f"Quota {key} must be greater than 0")
    if kind == "DOUBLE":
        return
    limit, name = _LIMITS[kind]
    if value > limit:
        raise QuotaError("INVALID_REQUEST", f"Proposed value for {key} is too large for {name}.")
    if abs(math.fmod(value, 1.0)) > 1e-6:
        raise QuotaError("INVALID_REQUEST", f"{key} cannot be a fractional value.")


class ClientQuotas:
    """Every quota entity's values. ``on_change(entries)`` is called after each applied alteration
    (the data directory's file); ``version`` grows with every change, so sensors know to look again."""

    def __init__(self, entries: dict[Entity, dict[str, float]] | None = None,
                 on_change: Callable[[dict], None] | None = None) -> None:
        self.entries: dict[Entity, dict[str, float]] = dict(entries or {})
        self.on_change = on_change
        self.version = 0

    # -- AlterClientQuotas ------------------------------------------------------------------
    def alter(self, alterations: Iterable[tuple[Entity, list[tuple[str, float, bool]]]],
              validate_only: bool = False) -> list[tuple[Entity, str, str | None]]:
        """Apply (entity, [(key, value, remove)]) as the controller: each entity independently,
        duplicates refused. Returns (entity, error name, message) per distinct entity, in order."""
        results: dict[Entity, tuple[str, str | None]] = {}
        changes: list[tuple[Entity, dict[str, float | None]]] = []
        for entity, ops in alterations:
            error = None
            values: dict[str, float | None] = {}
            for key, value, remove in ops:
                if key in values:
                    error = ("INVALID_REQUEST", f"Duplicate quota key {key} not updating quota for this entity "
                                                f"{entity_text(entity)}")
                else:
                    values[key] = None if remove else value
            if entity in results:
                results[entity] = ("INVALID_REQUEST", f"Ignoring duplicate entity {entity_text(entity)}")
                changes = [c for c in changes if c[0] != entity]
                continue
            if error is None:
                try:
                    keys = validate_entity(entity)
                    for key, value in values.items():
                        if value is not None:
                            validate_value(keys, key, value)
                except QuotaError as exc:
                    error = (exc.code, exc.message)
            results[entity] = error or ("NONE", None)
            if error is None:
                changes.append((entity, values))
        if not validate_only and changes:
            for entity, values in changes:
                current = self.entries.setdefault(entity, {})
                for key, value in values.items():
                    if value is None:
                        current.pop(key, None)
                    else:
                        current[key] = float(value)
                if not current:
                    del self.entries[entity]
            self.version += 1
            if self.on_change is not None:
                self.on_change(self.entries)
        return [(entity, code, message) for entity, (code, message) in results.items()]

    def replace(self, entries: dict[Entity, dict[str, float]]) -> None:
        self.entries = {e: dict(v) for e, v in entries.items() if v}
        self.version += 1
        if self.on_change is not None:
            self.on_change(self.entries)

    # -- DescribeClientQuotas ---------------------------------------------------------------
    def describe(self, components: Iterable[tuple[str, int, str | None]], strict: bool) -> dict[Entity, dict]:
        """The entities a filter matches, as the broker's ClientQuotaCache: components are
        (entity type, match type, match). Raises QuotaError as Kafka (INVALID_REQUEST for a
        duplicate or empty type or IP combined with others, UNSUPPORTED_VERSION for an unknown
        type, UNKNOWN_SERVER_ERROR for a match type or match the request cannot carry)."""
        filters: dict[str, tuple[int, str | None]] = {}
        components = list(components)
        for entity_type, match_type, match in components:
            if match_type == MATCH_EXACT and match is None:
                raise QuotaError("UNKNOWN_SERVER_ERROR", "Unexpected null match for exact match type")
            if match_type not in (MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED):
                raise QuotaError("UNKNOWN_SERVER_ERROR", f"Unexpected match type: {match_type}")
        for entity_type, match_type, match in components:
            if entity_type in filters:
                raise QuotaError("INVALID_REQUEST", f"Duplicate {entity_type} filter component entity type")
            if entity_type == "":
                raise QuotaError("INVALID_REQUEST", "Unexpected empty filter component entity type")
            if entity_type not in (USER, CLIENT_ID, IP):
                raise QuotaError("UNSUPPORTED_VERSION", f"Custom entity type {entity_type} not supported")
            filters[entity_type] = (match_type, match)
        if not components and not strict:
            return {e: dict(v) for e, v in self.entries.items()}
        if not filters:
            return {}
        if IP in filters and len(filters) > 1:
            raise QuotaError("INVALID_REQUEST", "Invalid entity filter component combination, IP filter component "
                                                "should not be used with User or ClientId filter component.")
        found = {}
        for entity, values in self.entries.items():
            names = dict(entity)
            if IP in filters and IP not in names:
                continue
            if IP not in filters and IP in names:
                continue
            if not any(t in names and _matches(names[t], *filters[t]) for t in filters):
                continue
            if any(t in names and not _matches(names[t], *filters[t]) for t in filters):
                continue
            if len(filters) > 1 and not all(t in names for t in filters):
                continue  # both user and client id asked for: the entity must carry both
            if strict and len(names) > 1 and len(filters) < 2:
                continue
            found[entity] = dict(values)
        return found

    # -- enforcement --------------------------------------------------------------------------
    def quota_for(self, key: str, user: str, client_id: str) -> tuple[float | None, tuple[str, str]]:
        """The ``key`` quota of a (user, client id) and the tags of the sensor it is measured on,
        with DefaultQuotaCallback's precedence: user+client, user+default client, user, default
        user+client, default user+default client, default user, client, default client."""
        get = self.entries.get
        for entity, tags in (
                (Entity({(USER, user), (CLIENT_ID, client_id)}), (user, client_id)),
                (Entity({(USER, user), (CLIENT_ID, None)}), (user, client_id)),
                (Entity({(USER, user)}), (user, "")),
                (Entity({(USER, None), (CLIENT_ID, client_id)}), (user, client_id)),
                (Entity({(USER, None), (CLIENT_ID, None)}), (user, client_id)),
                (Entity({(USER, None)}), (user, "")),
                (Entity({(CLIENT_ID, client_id)}), ("", client_id)),
                (Entity({(CLIENT_ID, None)}), ("", client_id))):
            values = get(entity)
            if values is not None and key in values:
                return values[key], tags
        return None, ("", "")


def _matches(name: str | None, match_type: int, match: str | None) -> bool:
    if match_type == MATCH_EXACT:
        return name == match
    if match_type == MATCH_DEFAULT:
        return name is None
    return True


def to_json(entries: dict[Entity, dict[str, float]]) -> list:
    return [{"entity": [{"type": t, "name": n} for t, n in sorted(e, key=lambda p: p[0])], "values": v}
            for e, v in entries.items()]


def from_json(items: list) -> dict[Entity, dict[str, float]]:
    return {Entity((part["type"], part["name"]) for part in item["entity"]):
            {str(k): float(v) for k, v in item["values"].items()} for item in items}

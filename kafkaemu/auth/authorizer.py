"""An authorizer with Apache Kafka's ``StandardAuthorizer`` semantics, pure and in memory.

A request is allowed when a super user makes it; otherwise the ACLs that apply to the resource
(LITERAL with its name, LITERAL ``*``, PREFIXED with any prefix of its name) and to the principal
(itself or ``User:*``) and host (the client's address or ``*``) decide: any DENY for the
operation (or ALL) wins; else any ALLOW for it, where an ALLOW of READ, WRITE, DELETE or ALTER
also allows DESCRIBE and one of ALTER_CONFIGS allows DESCRIBE_CONFIGS (a DENY implies nothing);
else, when the resource has ACLs at all (anyone's), it is denied; when it has none, the answer is
``allow.everyone.if.no.acl.found`` (``StandardAuthorizerData.findAclRule``).

ACLs are indexed by (resource type, pattern type, name), so a check costs a lookup per character
of the resource name whatever the number of ACLs. ``on_change`` is called with every ACL after a
change (the data directory keeps them)."""
from __future__ import annotations

from typing import Callable, Iterable

from ..logging import get_logger
from .acl import (WILDCARD, WILDCARD_PRINCIPAL, Acl, AclFilter, AclOperation, AclPermissionType, PatternType,
                  ResourceType, new_acl_error, parse_principal)

log = get_logger("kafkaemu.authorizer")

KAFKA_AUTHORIZER_CLASS = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
MAX_ACLS_PER_REQUEST = 10000  # Kafka's MAX_RECORDS_PER_USER_OP
_MAX_DECISIONS = 100_000

_ALLOW, _DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
_LITERAL, _PREFIXED = PatternType.LITERAL, PatternType.PREFIXED
_IMPLIES_DESCRIBE = frozenset({AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE,
                               AclOperation.ALTER})
_IMPLIES_DESCRIBE_CONFIGS = frozenset({AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS})

# AclEntry.supportedOperations: what an authorized-operations bit set is computed over.
SUPPORTED_OPERATIONS = {
    ResourceType.TOPIC: (AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DESCRIBE,
                         AclOperation.DELETE, AclOperation.ALTER, AclOperation.DESCRIBE_CONFIGS,
                         AclOperation.ALTER_CONFIGS),
    ResourceType.GROUP: (AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE,
                         AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS),
    ResourceType.CLUSTER: (AclOperation.CREATE, AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS,
                           AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE, AclOperation.ALTER,
                           AclOperation.DESCRIBE),
    ResourceType.TRANSACTIONAL_ID: (AclOperation.DESCRIBE, AclOperation.WRITE),
    ResourceType.DELEGATION_TOKEN: (AclOperation.DESCRIBE,),
    ResourceType.USER: (AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS),
}


class TooManyAcls(Exception):
    """A request would add more ACLs than Kafka's controller takes in one batch (POLICY_VIOLATION)."""


def operation_bits(operations: Iterable[AclOperation]) -> int:
    """Kafka's 32-bit field of operation codes (``Utils.to32BitField``)."""
    return sum(1 << op for op in set(operations))


def parse_super_users(text: str | Iterable[str]) -> frozenset[str]:
    """``super.users``: principals separated by ``;``. ValueError for one that does not parse."""
    items = text.split(";") if isinstance(text, str) else text
    users = frozenset(item.strip() for item in items if item.strip())
    for user in users:
        parse_principal(user)
    return users


class Authorizer:
    def __init__(self, super_users: Iterable[str] = (), allow_everyone_if_no_acl_found: bool = False,
                 acls: Iterable[Acl] = (), on_change: Callable[[list[Acl]], None] | None = None) -> None:
        self.super_users = frozenset(super_users)
        self.allow_if_no_acl = allow_everyone_if_no_acl_found
        self._acls: dict[Acl, None] = {}  # insertion ordered: describe answers in creation order
        self._index: dict[tuple[ResourceType, PatternType, str], list[Acl]] = {}
        for acl in acls:
            self._add(acl)
        self.on_change = on_change
        self.denials: list[dict] = []  # recent denials, newest last (the control API shows them)
        # decisions by (principal, host, operation, resource type, name), dropped at every change:
        # the data path asks the same question on every request
        self._decisions: dict[tuple, bool] = {}

    # -- the ACLs ------------------------------------------------------------------------------
    @property
    def acls(self) -> list[Acl]:
        return list(self._acls)

    def __len__(self) -> int:
        return len(self._acls)

    def _add(self, acl: Acl) -> bool:
        if acl in self._acls:
            return False
        self._acls[acl] = None
        self._index.setdefault((acl.resource_type, acl.pattern_type, acl.resource_name), []).append(acl)
        return True

    def _remove(self, acl: Acl) -> None:
        del self._acls[acl]
        key = (acl.resource_type, acl.pattern_type, acl.resource_name)
        bucket = self._index[key]
        bucket.remove(acl)
        if not bucket:
            del self._index[key]

    def create(self, acls: list[Acl]) -> list[str | None]:
        """Add ACLs; for each, None or why it is invalid (INVALID_REQUEST). Adding one that exists
        succeeds without a change, as in Kafka. More than MAX_ACLS_PER_REQUEST new ACLs at once
        raise TooManyAcls and add nothing (Kafka's controller refuses such a batch)."""
        results = [new_acl_error(acl) for acl in acls]
        new = {acl: None for acl, error in zip(acls, results) if error is None and acl not in self._acls}
        if len(new) > MAX_ACLS_PER_REQUEST:
            raise TooManyAcls("Unable to perform excessively large batch operation.")
        for acl in new:
            self._add(acl)
            log.info("acl_created", acl=str(acl))
        if new:
            self._changed()
        return results

    def delete(self, filters: list[AclFilter]) -> list[list[Acl] | str]:
        """Remove every ACL each filter matches; per filter, the ACLs removed or why the filter is
        invalid. An ACL matched by several filters is reported under each, as Kafka does."""
        results, removed = [], set()
        for f in filters:
            if f.is_unknown:
                results.append("Unknown patternFilter." if _pattern_unknown(f) else "Unknown entryFilter.")
                continue
            matched = [acl for acl in self._acls if f.matches(acl)]
            removed.update(matched)
            results.append(matched)
        for acl in removed:
            self._remove(acl)
            log.info("acl_deleted", acl=str(acl))
        if removed:
            self._changed()
        return results

    def describe(self, f: AclFilter) -> list[Acl]:
        return [acl for acl in self._acls if f.matches(acl)]

    def replace(self, acls: Iterable[Acl]) -> None:
        """Every ACL swapped for ``acls`` (a snapshot restored, a reset)."""
        self._acls.clear()
        self._index.clear()
        for acl in acls:
            self._add(acl)
        self._changed()

    def _changed(self) -> None:
        self._decisions.clear()
        if self.on_change is not None:
            self.on_change(list(self._acls))

    # -- decisions -----------------------------------------------------------------------------
    def authorize(self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType,
                  name: str) -> bool:
        """Whether ``principal`` connected from ``host`` may do ``operation`` on the literal resource."""
        key = (principal, host, operation, resource_type, name)
        decision = self._decisions.get(key)
        if decision is None:
            if len(self._decisions) >= _MAX_DECISIONS:
                self._decisions.clear()
            decision = self._decisions[key] = self._decide(principal, host, operation, resource_type, name)
        return decision

    def _decide(self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType,
                name: str) -> bool:
        if principal in self.super_users:
            return True
        found_acl = allowed = False
        for bucket in self._buckets(resource_type, name):
            for acl in bucket:
                found_acl = True
                result = _result(acl, principal, host, operation)
                if result is _DENY:
                    return False
                if result is _ALLOW:
                    allowed = True
        if allowed:
            return True
        return self.allow_if_no_acl and not found_acl

    def _buckets(self, resource_type: ResourceType, name: str):
        index = self._index
        bucket = index.get((resource_type, _LITERAL, name))
        if bucket:
            yield bucket
        if name != WILDCARD:
            bucket = index.get((resource_type, _LITERAL, WILDCARD))
            if bucket:
                yield bucket
        for end in range(len(name), 0, -1):
            bucket = index.get((resource_type, _PREFIXED, name[:end]))
            if bucket:
                yield bucket

    def authorized_operations(self, principal: str, host: str, resource_type: ResourceType, name: str) -> int:
        """The bit set of the resource type's operations the principal may do on the resource."""
        return operation_bits(op for op in SUPPORTED_OPERATIONS[resource_type]
                              if self.authorize(principal, host, op, resource_type, name))

    def authorize_by_resource_type(self, principal: str, host: str, operation: AclOperation,
                                   resource_type: ResourceType) -> bool:
        """Whether the principal may do ``operation`` on some resource of the type: Kafka's
        ``Authorizer.authorizeByResourceType`` (an ALLOW not dominated by a DENY)."""
        if self.authorize(principal, host, operation, resource_type, "hardcode"):
            return True
        deny = {_LITERAL: set(), _PREFIXED: set()}
        allow = {_LITERAL: set(), _PREFIXED: set()}
        wildcard_allow = False
        for acl in self._acls:
            if acl.resource_type != resource_type:
                continue
            if acl.host != host and acl.host != WILDCARD:
                continue
            if acl.principal != principal and acl.principal != WILDCARD_PRINCIPAL:
                continue
            if acl.operation != operation and acl.operation != AclOperation.ALL:
                continue
            if acl.permission_type == _DENY:
                if acl.pattern_type == _LITERAL and acl.resource_name == WILDCARD:
                    return False
                deny[acl.pattern_type].add(acl.resource_name)
            elif acl.pattern_type == _LITERAL and acl.resource_name == WILDCARD:
                wildcard_allow = True
            else:
                allow[acl.pattern_type].add(acl.resource_name)
        if wildcard_allow:
            return True
        for pattern, names in allow.items():
            for name in names:
                if pattern == _LITERAL and name in deny[_LITERAL]:
                    continue
                if not any(name[:end] in deny[_PREFIXED] for end in range(1, len(name) + 1)):
                    return True
        return False

    def record_denial(self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType,
                      name: str, api: str) -> None:
        """Log a denied request (Kafka's authorizer log at INFO) and keep it for the control API."""
        log.info("authorization_denied", principal=principal, host=host, operation=operation.name,
                 resource=f"{resource_type.name}:{name}", api=api)
        self.denials.append({"principal": principal, "host": host, "operation": operation.name,
                             "resource_type": resource_type.name, "resource_name": name, "api": api})
        if len(self.denials) > 1000:
            del self.denials[:500]


def _pattern_unknown(f: AclFilter) -> bool:
    return f.resource_type == ResourceType.UNKNOWN or f.pattern_type == PatternType.UNKNOWN


def _result(acl: Acl, principal: str, host: str, operation: AclOperation):
    """ALLOW, DENY, or None when the ACL does not apply (``StandardAuthorizerData.findResult``)."""
    if acl.principal != principal and acl.principal != WILDCARD_PRINCIPAL:
        return None
    if acl.host != WILDCARD and acl.host != host:
        return None
    acl_op = acl.operation
    if acl_op != AclOperation.ALL:
        if acl.permission_type == _ALLOW:
            if operation == AclOperation.DESCRIBE:
                if acl_op not in _IMPLIES_DESCRIBE:
                    return None
            elif operation == AclOperation.DESCRIBE_CONFIGS:
                if acl_op not in _IMPLIES_DESCRIBE_CONFIGS:
                    return None
            elif operation != acl_op:
                return None
        elif operation != acl_op:
            return None
    return acl.permission_type

"""ACLs as Kafka models them: resource patterns, entries, bindings, and the filters that match them.

The enums carry Kafka's wire codes (``org.apache.kafka.common.acl`` / ``resource``); a code Kafka
does not know reads as UNKNOWN, as its ``fromCode`` does. Filter matching follows
``ResourcePatternFilter.matches`` and ``AccessControlEntryFilter.matches``; a new ACL is checked
as KRaft's ``AclControlManager.validateNewAcl`` and ``AclApis.handleCreateAcls`` check it."""
from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

CLUSTER_NAME = "kafka-cluster"
WILDCARD = "*"
WILDCARD_PRINCIPAL = "User:*"


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class AclPermissionType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


def from_code(enum: type[IntEnum], code: int) -> IntEnum:
    """The member with this wire code, or UNKNOWN (Kafka's ``fromCode``)."""
    try:
        return enum(code)
    except ValueError:
        return enum.UNKNOWN


def parse_principal(text: str | None) -> tuple[str, str]:
    """``Type:name`` split as Kafka's ``SecurityUtils.parseKafkaPrincipal``; ValueError otherwise."""
    if not text:
        raise ValueError(f"expected a string in format principalType:principalName but got {text}")
    kind, sep, name = text.partition(":")
    if not sep:
        raise ValueError(f"expected a string in format principalType:principalName but got {text}")
    return kind, name


@dataclass(frozen=True, slots=True)
class Acl:
    """An ACL binding: a resource pattern and an access control entry."""
    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType

    def to_json(self) -> dict:
        return {"resource_type": self.resource_type.name, "resource_name": self.resource_name,
                "pattern_type": self.pattern_type.name, "principal": self.principal, "host": self.host,
                "operation": self.operation.name, "permission_type": self.permission_type.name}

    @classmethod
    def from_json(cls, data: dict) -> "Acl":
        return cls(ResourceType[data["resource_type"]], data["resource_name"], PatternType[data["pattern_type"]],
                   data["principal"], data["host"], AclOperation[data["operation"]],
                   AclPermissionType[data["permission_type"]])

    def __str__(self) -> str:
        return (f"{self.permission_type.name} {self.principal} {self.operation.name} from {self.host} on "
                f"{self.resource_type.name}:{self.pattern_type.name}:{self.resource_name}")


@dataclass(frozen=True, slots=True)
class AclFilter:
    """An AclBindingFilter: None fields and ANY enums match everything; pattern type MATCH matches
    the ACLs that would apply to the named resource (literal, the wildcard, prefixes of it)."""
    resource_type: ResourceType = ResourceType.ANY
    resource_name: str | None = None
    pattern_type: PatternType = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: AclOperation = AclOperation.ANY
    permission_type: AclPermissionType = AclPermissionType.ANY

    @property
    def is_unknown(self) -> bool:
        return UNKNOWN in (self.resource_type, self.pattern_type, self.operation, self.permission_type)

    def matches(self, acl: Acl) -> bool:
        if self.resource_type != ResourceType.ANY and self.resource_type != acl.resource_type:
            return False
        pattern = self.pattern_type
        if pattern not in (PatternType.ANY, PatternType.MATCH) and pattern != acl.pattern_type:
            return False
        if self.resource_name is not None:
            if pattern == PatternType.ANY or pattern == acl.pattern_type:
                if self.resource_name != acl.resource_name:
                    return False
            elif acl.pattern_type == PatternType.LITERAL:
                if self.resource_name != acl.resource_name and acl.resource_name != WILDCARD:
                    return False
            elif not self.resource_name.startswith(acl.resource_name):  # PREFIXED
                return False
        if self.principal is not None and self.principal != acl.principal:
            return False
        if self.host is not None and self.host != acl.host:
            return False
        if self.operation != AclOperation.ANY and self.operation != acl.operation:
            return False
        return self.permission_type == AclPermissionType.ANY or self.permission_type == acl.permission_type


UNKNOWN = 0  # every enum's UNKNOWN code


def new_acl_error(acl: Acl) -> str | None:
    """Why an ACL cannot be created (INVALID_REQUEST's message), or None."""
    if acl.resource_type == ResourceType.CLUSTER and acl.resource_name != CLUSTER_NAME:
        return f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
    if not acl.resource_name:
        return "Invalid empty resource name"
    if acl.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        return f"Invalid resourceType {acl.resource_type.name}"
    if acl.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        return f"Invalid patternType {acl.pattern_type.name}"
    if acl.operation in (AclOperation.UNKNOWN, AclOperation.ANY):
        return f"Invalid operation {acl.operation.name}"
    if acl.permission_type not in (AclPermissionType.ALLOW, AclPermissionType.DENY):
        return f"Invalid permissionType {acl.permission_type.name}"
    try:
        parse_principal(acl.principal)
    except ValueError as exc:
        return f"Could not parse principal: {exc}"
    return None

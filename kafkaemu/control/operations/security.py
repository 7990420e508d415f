"""Security: ACLs (list, add, remove), the requests the authorizer denied, SCRAM users (list, add,
remove) and delegation tokens (list), without a client. ACL calls are refused (409) while
authorization is off."""
from __future__ import annotations

import hashlib
import secrets

from ...auth import scram_admin
from ...auth.acl import Acl, AclFilter, AclOperation, AclPermissionType, PatternType, ResourceType, new_acl_error
from ...auth.credentials import SCRAM_CODES
from ...auth.scram import HASHES
from ..params import ControlError, bad, choice, integer, text
from ..table import Cli, P, Py, op
from .base import ControlBase


def _enum(enum, filters: bool = False):
    names = [m.name.lower() for m in enum if m.name != "UNKNOWN" and (filters or m.name not in ("ANY", "MATCH"))]
    parse = choice(*names)

    def read(name: str, value):
        return enum[parse(name, value).upper()]
    return read


def _filter_params() -> dict:
    return dict(
        resource_type=P(_enum(ResourceType, True), help="topic, group, cluster, transactional_id, delegation_token, "
                                                       "user or any"),
        resource_name=P(text, help="the resource's name"),
        pattern_type=P(_enum(PatternType, True), help="literal, prefixed, any (default) or match"),
        principal=P(text, help="e.g. User:alice"),
        host=P(text, help="the client address the ACL names"),
        operation=P(_enum(AclOperation, True), help="read, write, describe, all, ..."),
        permission=P(_enum(AclPermissionType, True), help="allow or deny"))


def _filter(resource_type, resource_name, pattern_type, principal, host, operation, permission) -> AclFilter:
    return AclFilter(resource_type or ResourceType.ANY, resource_name, pattern_type or PatternType.ANY, principal,
                     host, operation or AclOperation.ANY, permission or AclPermissionType.ANY)


def acl_view(acl: Acl) -> dict:
    return {"resource_type": acl.resource_type.name, "resource_name": acl.resource_name,
            "pattern_type": acl.pattern_type.name, "principal": acl.principal, "host": acl.host,
            "operation": acl.operation.name, "permission": acl.permission_type.name}


_MECHANISM = choice("scram-sha-256", "scram-sha-512")
_NAMES = {code: name for name, code in SCRAM_CODES.items()}


class SecurityOps(ControlBase):
    def _authorizer(self):
        authorizer = getattr(self.broker, "authorizer", None)
        if authorizer is None:
            raise ControlError(409, "authorization is off (start with --authorizer, or authorizer.class.name)")
        return authorizer

    @op("GET", "/api/acls", **_filter_params(), py=Py("acls", result="acls"), cli=Cli("acls"))
    def acls(self, resource_type, resource_name, pattern_type, principal, host, operation, permission) -> dict:
        """The ACLs, all or those a filter matches (as DescribeAcls)."""
        f = _filter(resource_type, resource_name, pattern_type, principal, host, operation, permission)
        return {"acls": [acl_view(a) for a in self._authorizer().describe(f)]}

    @op("POST", "/api/acls", resource_type=P(_enum(ResourceType), required=True, help="topic, group, cluster, ..."),
        resource_name=P(text, required=True, help="the resource's name (the cluster's: kafka-cluster)"),
        principal=P(text, required=True, help="e.g. User:alice"),
        operation=P(_enum(AclOperation), required=True, help="read, write, describe, all, ..."),
        pattern_type=P(_enum(PatternType), default=PatternType.LITERAL, help="literal (default) or prefixed"),
        host=P(text, default="*", help="the client address (default *)"),
        permission=P(_enum(AclPermissionType), default=AclPermissionType.ALLOW, help="allow (default) or deny"),
        py=Py("add_acl", lambda resource_type, resource_name, principal, operation, *, pattern_type="literal",
              host="*", permission="allow": {"resource_type": resource_type, "resource_name": resource_name,
                                             "principal": principal, "operation": operation,
                                             "pattern_type": pattern_type, "host": host, "permission": permission}),
        cli=Cli("acl add", "resource_type", "resource_name", "principal", "operation"))
    def acl_add(self, resource_type, resource_name, principal, operation, pattern_type, host, permission) -> dict:
        """Add an ACL (as CreateAcls, with its checks)."""
        acl = Acl(resource_type, resource_name, pattern_type, principal, host, operation, permission)
        error = new_acl_error(acl)
        if error:
            raise bad(error)
        self._authorizer().create([acl])
        return acl_view(acl)

    @op("DELETE", "/api/acls", **_filter_params(), py=Py("remove_acls", result="removed"), cli=Cli("acl remove"))
    def acls_remove(self, resource_type, resource_name, pattern_type, principal, host, operation, permission) -> dict:
        """Remove the ACLs a filter matches (every ACL without one, as DeleteAcls with ANY)."""
        f = _filter(resource_type, resource_name, pattern_type, principal, host, operation, permission)
        return {"removed": [acl_view(a) for a in self._authorizer().delete([f])[0]]}

    @op("GET", "/api/denials", py=Py("denials", result="denials"), cli=Cli("denials"))
    def denials(self) -> dict:
        """The latest requests the authorizer denied: principal, host, operation, resource, API."""
        return {"denials": list(self._authorizer().denials)}

    @op("GET", "/api/scram-users", py=Py("scram_users", result="users"), cli=Cli("scram-users"))
    def scram_users(self) -> dict:
        """The users with SCRAM credentials, their mechanisms and iterations."""
        store = self.broker.credentials
        return {"users": [{"user": u, "credentials": [{"mechanism": _NAMES[m], "iterations": i}
                                                      for m, i in store.scram_info(u)]} for u in store.scram_users()]}

    @op("POST", "/api/scram-users", user=P(text, required=True, help="the user name"),
        password=P(text, required=True, help="the password"),
        mechanism=P(_MECHANISM, default="scram-sha-256", help="scram-sha-256 (default) or scram-sha-512"),
        iterations=P(integer(min=4096, max=16384), default=4096, help="PBKDF2 iterations, 4096-16384"),
        py=Py("add_scram_user", lambda user, password, *, mechanism="scram-sha-256", iterations=4096:
              {"user": user, "password": password, "mechanism": mechanism, "iterations": iterations}),
        cli=Cli("scram-user add", "user", "password"))
    def scram_user_add(self, user, password, mechanism, iterations) -> dict:
        """Add or replace a user's SCRAM credential (the next connection uses it)."""
        name = mechanism.upper()
        salt = secrets.token_bytes(32)
        salted = hashlib.pbkdf2_hmac(HASHES[name], password.encode(), salt, iterations)
        upsertion = (user, SCRAM_CODES[name], iterations, salt, salted)
        (result,) = scram_admin.alter(self.broker.credentials, [], [upsertion])
        if result["error_code"]:
            raise bad(result["error_message"])
        return {"user": user, "mechanism": name, "iterations": iterations}

    @op("DELETE", "/api/scram-users/{user}", user=P(text, required=True, help="the user name"),
        mechanism=P(_MECHANISM, help="only this mechanism's credential (default: every one)"),
        py=Py("remove_scram_user"), cli=Cli("scram-user remove", "user"))
    def scram_user_remove(self, user, mechanism) -> dict:
        """Remove a user's SCRAM credentials (connections already authenticated stay)."""
        store = self.broker.credentials
        wanted = [mechanism.upper()] if mechanism else list(SCRAM_CODES)
        removed = [m for m in wanted if store.has_scram(user, m)]
        if not removed:
            raise ControlError(404, f"no SCRAM credential for {user!r}")
        for m in removed:
            store.delete_scram(user, m)
        store.changed()
        return {"user": user, "removed": removed}

    @op("GET", "/api/delegation-tokens", py=Py("delegation_tokens", result="tokens"), cli=Cli("delegation-tokens"))
    def delegation_tokens(self) -> dict:
        """The delegation tokens: id, owner, renewers and times (not their HMACs)."""
        return {"tokens": [{"token_id": t.token_id, "owner": t.owner, "requester": t.requester,
                            "renewers": t.renewers, "issued_ms": t.issued, "expiry_ms": t.expiry, "max_ms": t.max}
                           for t in self.broker.tokens.tokens.values()]}

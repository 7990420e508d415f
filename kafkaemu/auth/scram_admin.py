"""DescribeUserScramCredentials and AlterUserScramCredentials over a CredentialStore, with Kafka's
answers (ScramImage.describe, ScramControlManager.alterCredentials)."""
from __future__ import annotations

from ..protocol.errors import ErrorCode
from .credentials import MAX_ITERATIONS, MIN_ITERATIONS, SCRAM_TYPES, CredentialStore

DUPLICATE = "A user credential cannot be altered twice in the same request"


def describe(store: CredentialStore, users: list[str] | None) -> list[dict]:
    if not users:
        wanted = {user: False for user in store.scram_users()}
    else:
        wanted: dict[str, bool] = {}
        for user in users:
            wanted[user] = user in wanted   # True: asked twice
    results = []
    for user, twice in wanted.items():
        if twice:
            results.append({"user": user, "error_code": ErrorCode.DUPLICATE_RESOURCE, "credential_infos": [],
                            "error_message": f"Cannot describe SCRAM credentials for the same user twice in a single "
                                             f"request: {user}"})
            continue
        infos = store.scram_info(user)
        if infos:
            results.append({"user": user, "error_code": ErrorCode.NONE, "error_message": None,
                            "credential_infos": [{"mechanism": m, "iterations": i} for m, i in infos]})
        else:
            results.append({"user": user, "error_code": ErrorCode.RESOURCE_NOT_FOUND, "credential_infos": [],
                            "error_message": f"Attempt to describe a user credential that does not exist: {user}"})
    return results


def _name_error(name: str, mechanism: int):
    if not name:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    if mechanism not in SCRAM_TYPES:
        return ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"
    return None


def alter(store: CredentialStore, deletions, upsertions) -> list[dict]:
    """``deletions``: (name, mechanism code); ``upsertions``: (name, mechanism code, iterations,
    salt, salted password). All valid changes apply together; per user a result."""
    to_delete: dict[str, tuple] = {}
    to_upsert: dict[str, tuple] = {}
    errors: dict[str, tuple] = {}
    for name, mechanism in deletions:
        if name in errors:
            continue
        if to_delete.pop(name, None) is not None:
            errors[name] = ErrorCode.DUPLICATE_RESOURCE, DUPLICATE
            continue
        error = _name_error(name, mechanism)
        if error is None and not store.has_scram(name, SCRAM_TYPES[mechanism]):
            error = ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"
        if error is None:
            to_delete[name] = (name, mechanism)
        else:
            errors[name] = error
    for upsertion in upsertions:
        name, mechanism, iterations = upsertion[0], upsertion[1], upsertion[2]
        if name in errors:
            continue
        if to_delete.pop(name, None) is not None or to_upsert.pop(name, None) is not None:
            errors[name] = ErrorCode.DUPLICATE_RESOURCE, DUPLICATE
            continue
        error = _name_error(name, mechanism)
        if error is None and iterations < MIN_ITERATIONS:
            error = ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"
        elif error is None and iterations > MAX_ITERATIONS:
            error = ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"
        if error is None:
            to_upsert[name] = upsertion
        else:
            errors[name] = error
    results = []
    for name, mechanism in to_delete.values():
        store.delete_scram(name, SCRAM_TYPES[mechanism])
        results.append({"user": name, "error_code": ErrorCode.NONE, "error_message": None})
    for name, mechanism, iterations, salt, salted_password in to_upsert.values():
        store.set_scram(name, SCRAM_TYPES[mechanism], salt, salted_password, iterations)
        results.append({"user": name, "error_code": ErrorCode.NONE, "error_message": None})
    results += [{"user": name, "error_code": code, "error_message": message}
                for name, (code, message) in errors.items()]
    if to_delete or to_upsert:
        store.changed()
    return results

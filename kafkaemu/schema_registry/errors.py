"""Confluent Schema Registry's errors: an HTTP status, an ``error_code`` and a message, worded as
Confluent's ``Errors`` (rest/exceptions) words them, so clients that match on either see the same."""
from __future__ import annotations

INCOMPATIBLE_LEVEL_MESSAGE = ("Invalid compatibility level. Valid values are none, backward, forward, full, "
                              "backward_transitive, forward_transitive, and full_transitive")


class InvalidSchema(Exception):
    """A schema text is not a schema of its type (the parsers raise it; the registry answers 42201)."""


class RegistryError(Exception):
    def __init__(self, status: int, error_code: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error_code = error_code
        self.message = message

    def __reduce__(self):   # raised in the worker process, answered by the server
        return RegistryError, (self.status, self.error_code, self.message)

    def body(self) -> dict:
        return {"error_code": self.error_code, "message": self.message}


def subject_not_found(subject: str) -> RegistryError:
    return RegistryError(404, 40401, f"Subject '{subject}' not found.")


def version_not_found(version) -> RegistryError:
    return RegistryError(404, 40402, f"Version {version} not found.")


def schema_not_found(schema_id=None) -> RegistryError:
    return RegistryError(404, 40403, "Schema not found" if schema_id is None else f"Schema {schema_id} not found")


def subject_soft_deleted(subject: str) -> RegistryError:
    return RegistryError(404, 40404, f"Subject '{subject}' was soft deleted.Set permanent=true to delete permanently")


def subject_not_soft_deleted(subject: str) -> RegistryError:
    return RegistryError(404, 40405, f"Subject '{subject}' was not deleted first before being permanently deleted")


def version_soft_deleted(subject: str, version) -> RegistryError:
    return RegistryError(404, 40406, f"Subject '{subject}' Version {version} was soft deleted."
                                     f"Set permanent=true to delete permanently")


def version_not_soft_deleted(subject: str, version) -> RegistryError:
    return RegistryError(404, 40407, f"Subject '{subject}' Version {version} was not deleted first before "
                                     f"being permanently deleted")


def subject_compatibility_not_configured(subject: str) -> RegistryError:
    return RegistryError(404, 40408, f"Subject '{subject}' does not have subject-level compatibility configured")


def subject_mode_not_configured(subject: str) -> RegistryError:
    return RegistryError(404, 40409, f"Subject '{subject}' does not have subject-level mode configured")


def incompatible(subject: str, messages: list[str]) -> RegistryError:
    # Confluent 7.x answers error_code 409 (8.x: 40901); the 7.x clients expect 409.
    return RegistryError(409, 409, f'Schema being registered is incompatible with an earlier schema for subject '
                                   f'"{subject}", details: [' + ", ".join(messages) + "]")


def invalid_schema(message: str) -> RegistryError:
    return RegistryError(422, 42201, message)


def invalid_version(version) -> RegistryError:
    return RegistryError(422, 42202, f"The specified version '{version}' is not a valid version id. "
                                     f"Allowed values are between [1, 2^31-1] and the string \"latest\"")


def invalid_compatibility_level() -> RegistryError:
    return RegistryError(422, 42203, INCOMPATIBLE_LEVEL_MESSAGE)


def invalid_mode(mode=None) -> RegistryError:
    return RegistryError(422, 42204, "Invalid mode. Valid values are READWRITE, READONLY, IMPORT and FORWARD.")


def not_permitted(message: str) -> RegistryError:
    return RegistryError(422, 42205, message)


def reference_exists(subject: str, version: int) -> RegistryError:
    return RegistryError(422, 42206, f"One or more references exist to the schema "
                                     f"{{subject={subject},version={version}}}.")


def id_does_not_match(message: str) -> RegistryError:
    return RegistryError(422, 42207, message)


def invalid_subject(subject: str) -> RegistryError:
    return RegistryError(422, 42208, f"The specified subject '{subject}' is not a valid.")


def schema_too_large(message: str) -> RegistryError:
    return RegistryError(422, 42209, message)


def bad_request(message: str) -> RegistryError:
    """A body that is not JSON (rest-utils' JsonParseExceptionMapper)."""
    return RegistryError(400, 400, message)


def unprocessable(message: str) -> RegistryError:
    """A JSON body of the wrong shape (rest-utils' JsonMappingExceptionMapper)."""
    return RegistryError(422, 422, message)


def request_timed_out(reason: str) -> RegistryError:
    """Work past its budget: answered as rest-utils' request timeout answers one that runs too long
    (Confluent's RequestTimeoutHandler: HTTP 504 "Request timed out")."""
    return RegistryError(504, 504, f"Request timed out: {reason}")


def worker_stopped(reason: str) -> RegistryError:
    """The worker process stopped under a job (killed, out of memory): a store error, Confluent's 50001."""
    return RegistryError(500, 50001, f"Error in the backend data store: the schema worker stopped ({reason})")


def busy(waiting: int) -> RegistryError:
    """More operations waiting for the schema worker than it queues: Confluent's answer when an
    operation cannot take the registry's lock in time (50002)."""
    return RegistryError(500, 50002, f"Register operation timed out: {waiting} operations are waiting for the "
                                     f"registry")


def not_found_route() -> RegistryError:
    return RegistryError(404, 404, "HTTP 404 Not Found")


def method_not_allowed() -> RegistryError:
    return RegistryError(405, 405, "HTTP 405 Method Not Allowed")

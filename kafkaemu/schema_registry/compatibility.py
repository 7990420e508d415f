"""Confluent's seven compatibility levels over a schema type's reader/writer check.

BACKWARD: the new schema reads data written with the previous one (reader = new). FORWARD: the
previous schema reads data written with the new one. FULL: both. The plain levels check the latest
live version only, the ``_TRANSITIVE`` ones every live version (Confluent's
AbstractCompatibilityChecker over ``previousSchemas``, newest first)."""
from __future__ import annotations

LEVELS = ("NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE")
DEFAULT_LEVEL = "BACKWARD"


def checked_versions(level: str, previous: list) -> list:
    """Of the live versions (oldest first), those a new schema is checked against at ``level``."""
    if level == "NONE":
        return []
    return previous if level.endswith("_TRANSITIVE") else previous[-1:]


def errors(level: str, new, previous: list) -> list[str]:
    """Why ``new`` may not follow ``previous`` (parsed schemas with their versions, oldest first:
    a list of (version, parsed)) at ``level``; empty when it may."""
    if level == "NONE" or not previous:
        return []
    checked = previous if level.endswith("_TRANSITIVE") else previous[-1:]
    backward = level.startswith(("BACKWARD", "FULL"))
    forward = level.startswith(("FORWARD", "FULL"))
    found: list[str] = []
    for version, old in reversed(checked):
        problems = []
        if type(old) is not type(new):
            problems.append(f"{{errorType:'TYPE_MISMATCH', description:'the new schema is {new.schema_type}, "
                            f"the old one {old.schema_type}'}}")
        else:
            if backward:
                problems += new.read_errors(old)
            if forward:
                problems += old.read_errors(new)
        if problems:
            found += problems
            found += [f"{{oldSchemaVersion: {version}}}", f"{{oldSchema: '{old.canonical()}'}}",
                      f"{{compatibility: '{level}'}}"]
    return found

"""How the core declares its settings.

Each owner declares its broker settings once, as Kafka 4.4's GroupCoordinatorConfig,
ShareGroupConfig and TransactionStateManagerConfig declare theirs: a dataclass in its own
``settings.py`` (``classic/``, ``consumer/``, ``share/``, ``streams/``, ``offsets/``,
``transactions/``) whose fields carry Kafka's name, default and bounds (``setting``), and whose
``CHECKS`` are the relations Kafka's config classes ``require()`` between them (``problems``).
``BrokerConfig`` (``kafkaemu/config.py``) composes these classes as fields: the command line,
``--override``, ``--config``, DescribeConfigs and the coordinators all read the one declaration.
The core imports nothing from ``kafkaemu.config``; these modules import nothing but the standard
library, so reading a configuration at start costs a few small modules. They are read, never
changed, but not ``frozen``: a start makes every one of them, and a frozen dataclass costs about
twice as much to make (its generated methods are compiled at class creation)."""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Callable

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


def setting(default: Any, kafka: str | None, help: str, *, min: int | None = None, max: int = INT32_MAX,
            metavar: str | None = None, flag: str | bool | None = None, choices: tuple[str, ...] | None = None):
    """A field of a settings class. ``kafka``: the Kafka broker setting it is (its ``--override``
    name); ``min``/``max``: bounds of an integer (Kafka's INT settings stop at 2**31-1, its LONG ones
    take ``max=INT64_MAX``); ``choices``: the values a string takes (compared without case, as
    Kafka's CaseInsensitiveValidString); ``flag``: the command-line flag when it is not ``--`` + the
    setting's name, or False for none (a Kafka setting kafkaemu accepts and reports but whose
    behaviour it does not implement: given by its Kafka name only)."""
    meta = {"help": help, "kafka": kafka, "flag": flag, "metavar": metavar, "min": min, "max": max,
            "choices": choices}
    if isinstance(default, dict):
        return field(default_factory=dict, metadata=meta)
    return field(default=default, metadata=meta)


_WORDS = {">=": "greater than or equal to", "<=": "less than or equal to", "<": "less than"}


def problems(settings, name: Callable[[str], str] = lambda kafka_name: kafka_name) -> list[str]:
    """What the settings class's ``CHECKS`` (``(field, relation, other field)``, in the order of
    Kafka's ``require()``s) refuse, in Kafka's words; ``name(kafka name)`` labels a setting."""
    out = []
    kafka = {f.name: f.metadata["kafka"] for f in fields(settings)}
    for a, relation, b in type(settings).CHECKS:
        x, y = getattr(settings, a), getattr(settings, b)
        if not (x >= y if relation == ">=" else x <= y if relation == "<=" else x < y):
            out.append(f"{name(kafka[a])} {x} must be {_WORDS[relation]} {name(kafka[b])} {y}")
    return out


def bounded(prefix: str) -> tuple[tuple[str, str, str], ...]:
    """Kafka's checks of a setting with its own min/max settings (``x``, ``min_x``, ``max_x``)."""
    return ((f"max_{prefix}", ">=", f"min_{prefix}"), (prefix, ">=", f"min_{prefix}"), (prefix, "<=", f"max_{prefix}"))

"""Checking the parameters of control operations. The same parsers read JSON values (HTTP
bodies), query strings and Python arguments, so every caller gets the same 400 for the same
mistake."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable


class ControlError(Exception):
    """A refused control call: ``status`` is the HTTP status, ``details`` goes into the answer."""

    def __init__(self, status: int, message: str, **details: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.details = details

    def body(self) -> dict:
        return {"error": self.message, "status": self.status, **self.details}


class BadRequest(ControlError, ValueError):
    """A parameter the operation cannot take (HTTP 400)."""

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(400, message, **details)


class AwaitTimeout(ControlError, TimeoutError):
    """An await whose condition did not hold within its timeout (HTTP 408); ``details["current"]``
    is what was seen last."""

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(408, message, **details)


def error_for(status: int, message: str, **details: Any) -> ControlError:
    if status == 400:
        return BadRequest(message, **details)
    return AwaitTimeout(message, **details) if status == 408 else ControlError(status, message, **details)


def bad(message: str) -> ControlError:
    return BadRequest(message)


@dataclass(frozen=True)
class Param:
    parse: Callable[[str, Any], Any]   # (name, value) -> parsed value; raises ControlError
    required: bool = False
    default: Any = None
    help: str = ""

    @property
    def kind(self) -> str:
        """How a command line gives it: "flag" (a switch), "mapping" (NAME=VALUE, repeated), "integer"
        or "value" (a string the parser reads)."""
        return getattr(self.parse, "kind", "value")


INT64_MIN, INT64_MAX = -2**63, 2**63 - 1
MAX_DURATION_MS = 3_155_760_000_000          # 100 years: any longer is a mistake, not a test
MAX_TIMESTAMP_MS = 253_402_300_799_999       # 9999-12-31T23:59:59.999Z, the last time ISO 8601 writes
_MAX_DIGITS = 20                             # longer digit strings are refused before int() reads them


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:40] + f"... ({len(text)} characters)"


def integer(min: int | None = None, max: int | None = None):
    def parse(name: str, value):
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise bad(f"{name} must be an integer, got {_shown(value)}")
        if isinstance(value, str) and len(value.strip()) > _MAX_DIGITS:
            raise bad(f"{name} must be a 64-bit integer, got {_shown(value)}")
        try:
            number = int(value)
        except ValueError:
            raise bad(f"{name} must be an integer, got {_shown(value)}") from None
        if not INT64_MIN <= number <= INT64_MAX:
            raise bad(f"{name} must be a 64-bit integer, got {_shown(value)}")
        if min is not None and number < min:
            raise bad(f"{name} must be at least {min}, got {number}")
        if max is not None and number > max:
            raise bad(f"{name} must be at most {max}, got {number}")
        return number
    parse.kind = "integer"
    return parse


_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|min|s|m|h|d)")


def duration_ms(name: str, value) -> int:
    """Milliseconds from a number (ms) or a text such as ``250ms``, ``30s``, ``1m30s``, ``2h``; at
    most MAX_DURATION_MS."""
    if isinstance(value, bool):
        raise bad(f"{name} must be a duration such as 30s or a number of milliseconds, got {value!r}")
    if isinstance(value, (int, float)):
        if value < 0:
            raise bad(f"{name} must not be negative, got {_shown(value)}")
        return _bounded_duration(name, value)
    if not isinstance(value, str):
        raise bad(f"{name} must be a duration such as 30s or a number of milliseconds, got {_shown(value)}")
    text = value.strip().lower().replace(" ", "")
    if text.startswith("-"):
        raise bad(f"{name} must not be negative, got {_shown(value)}")
    if len(text) > 64:
        raise bad(f"{name} must be a duration such as 250ms, 30s, 1m30s or 2h, got {_shown(value)}")
    if re.fullmatch(r"\d+", text):
        return _bounded_duration(name, int(text))
    pos, total = 0, 0.0
    for m in _PART.finditer(text):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if pos != len(text) or not text:
        raise bad(f"{name} must be a duration such as 250ms, 30s, 1m30s or 2h, got {_shown(value)}")
    return _bounded_duration(name, total)


def _bounded_duration(name: str, ms: int | float) -> int:
    if not math.isfinite(ms) or ms > MAX_DURATION_MS:
        raise bad(f"{name} must be at most {MAX_DURATION_MS} ms (100 years), got {_shown(ms)}")
    return int(ms)


def timestamp_ms(name: str, value) -> int:
    """Milliseconds since the epoch from a number or an ISO 8601 time (UTC unless it says)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _bounded_timestamp(name, value)
    if isinstance(value, str) and len(value) <= 64:
        text = value.strip()
        if re.fullmatch(r"-?\d+", text):
            return _bounded_timestamp(name, int(text))
        try:
            when = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            pass
        else:
            if when.tzinfo is None:
                when = when.replace(tzinfo=timezone.utc)
            return _bounded_timestamp(name, int(when.timestamp() * 1000))
    raise bad(f"{name} must be milliseconds since the epoch or an ISO 8601 time, got {_shown(value)}")


def _bounded_timestamp(name: str, ms: int | float) -> int:
    if not math.isfinite(ms) or not 0 <= ms <= MAX_TIMESTAMP_MS:
        raise bad(f"{name} must be a time between 1970 and the end of 9999 ({MAX_TIMESTAMP_MS} ms), got {_shown(ms)}")
    return int(ms)


def boolean(name: str, value) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "1", "yes", "on", "false", "0", "no", "off"):
        return value.strip().lower() in ("true", "1", "yes", "on")
    raise bad(f"{name} must be true or false, got {_shown(value)}")


boolean.kind = "flag"


def text(name: str, value) -> str:
    if not isinstance(value, str) or not value:
        raise bad(f"{name} must be a non-empty string, got {_shown(value)}")
    return value


def choice(*options: str):
    def parse(name: str, value) -> str:
        if not isinstance(value, str) or value.lower() not in options:
            raise bad(f"{name} must be one of {', '.join(options)}, got {value!r}")
        return value.lower()
    return parse


def api_key(name: str, value) -> int:
    from ..faults import api_key_of
    from ..handlers import REGISTRY
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise bad(f"{name} must be an API name or key, got {value!r}")
    try:
        key = api_key_of(int(value) if isinstance(value, str) and value.strip().isdigit() else value)
    except ValueError as exc:
        raise bad(str(exc)) from None
    if REGISTRY.get(key) is None:
        raise bad(f"{name}: kafkaemu does not implement API key {key} (kafkaemu apis lists them)")
    return key


def error_code(name: str, value) -> int:
    from ..faults import error_code_of
    from ..protocol.errors import ErrorCode
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise bad(f"{name} must be an error name or code, got {value!r}")
    try:
        code = error_code_of(int(value) if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip())
                             else value)
    except ValueError as exc:
        raise bad(str(exc)) from None
    try:
        ErrorCode(code)
    except ValueError:
        raise bad(f"{name}: {code} is not a Kafka error code (kafkaemu errors lists them)") from None
    return code


def parse_params(op_name: str, specs: dict[str, Param], given: dict) -> dict:
    """The checked parameters of one call: unknown names, missing required ones and bad values are
    400s naming the parameter."""
    unknown = sorted(set(given) - set(specs))
    if unknown:
        expected = ", ".join(specs) or "none"
        raise bad(f"{op_name}: unknown parameter(s) {', '.join(unknown)} (expected: {expected})")
    out = {}
    for name, spec in specs.items():
        value = given.get(name)
        if value is None:
            if spec.required:
                raise bad(f"{op_name}: {name} is required")
            out[name] = spec.default
        else:
            out[name] = spec.parse(name, value)
    return out

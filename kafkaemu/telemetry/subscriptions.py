"""CLIENT_METRICS config resources (Kafka's ClientMetricsConfigs): a named subscription of
``metrics`` (name prefixes; ``*`` all), ``interval.ms`` (100 - 3600000, default 300000) and
``match`` (``selector=regex`` patterns on the client; none matches every client). Validation
raises TelemetryConfigError with Kafka's error: INVALID_REQUEST for an empty name, an unknown
config or an interval out of range, INVALID_CONFIG for a value that does not parse or a bad pattern."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

METRICS, INTERVAL_MS, MATCH = "metrics", "interval.ms", "match"
ALL_METRICS = "*"
DEFAULT_INTERVAL_MS = 5 * 60 * 1000
MIN_INTERVAL_MS, MAX_INTERVAL_MS = 100, 3_600_000
SELECTORS = ("client_instance_id", "client_id", "client_software_name", "client_software_version",
             "client_source_address", "client_source_port")
LIST_CONFIGS = (METRICS, MATCH)
CONFIG_NAMES = (METRICS, INTERVAL_MS, MATCH)
CLIENT_METRICS_CONFIG = 7   # DescribeConfigs' ConfigSource of these configs


class TelemetryConfigError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def parse_list(value: str) -> list[str]:
    """ConfigDef's LIST: comma separated, blanks around items dropped, "" the empty list."""
    value = value.strip()
    return [] if not value else [v.strip() for v in value.split(",")]


def _split_pattern(pattern: str) -> tuple[str, str]:
    param, eq, value = pattern.partition("=")
    if not eq or param.strip() not in SELECTORS:
        raise TelemetryConfigError("INVALID_CONFIG", f"Illegal client matching pattern: {pattern}")
    return param.strip(), value.strip()


def validate(name: str, configs: dict[str, str], old: dict[str, str]) -> None:
    if not name:
        raise TelemetryConfigError("INVALID_REQUEST", "Subscription name can't be empty")
    for key in configs:
        if key not in CONFIG_NAMES:
            raise TelemetryConfigError("INVALID_REQUEST", f"Unknown client metrics configuration: {key}")
    for key in LIST_CONFIGS:
        if key in configs:
            items = parse_list(configs[key])
            if len(set(items)) != len(items):
                raise TelemetryConfigError("INVALID_CONFIG", f"Configuration '{key}' values must not be duplicated.")
    if INTERVAL_MS in configs:
        raw = configs[INTERVAL_MS]
        try:
            interval = int(raw.strip())
        except ValueError:
            raise TelemetryConfigError("INVALID_CONFIG", f"Invalid value {raw} for configuration {INTERVAL_MS}: "
                                                         f"Not a number of type INT") from None
        if not MIN_INTERVAL_MS <= interval <= MAX_INTERVAL_MS:
            raise TelemetryConfigError("INVALID_REQUEST", f"Invalid value {interval} for {INTERVAL_MS}, interval "
                                                          f"must be between 100 and 3600000 (1 hour)")
    if MATCH in configs and configs[MATCH] != old.get(MATCH):
        for pattern in parse_list(configs[MATCH]):
            param, regex = _split_pattern(pattern)
            try:
                re.compile(regex)
            except re.error as exc:
                raise TelemetryConfigError("INVALID_CONFIG", f"Client match pattern `{param}={regex}` is not a "
                                                             f"valid regular expression: {exc}.") from None


@dataclass
class Subscription:
    name: str
    metrics: frozenset
    interval_ms: int
    match: dict = field(default_factory=dict)   # selector -> compiled regex

    @classmethod
    def of(cls, name: str, configs: dict[str, str]) -> "Subscription":
        match = {}
        for pattern in parse_list(configs.get(MATCH, "")):
            param, regex = _split_pattern(pattern)
            match[param] = re.compile(regex)
        return cls(name, frozenset(parse_list(configs.get(METRICS, ""))),
                   int(configs.get(INTERVAL_MS, DEFAULT_INTERVAL_MS)), match)

    def matches(self, client: dict[str, str]) -> bool:
        """Every pattern must match its selector's whole value (ClientMetricsInstanceMetadata.isMatch)."""
        return all(pattern.fullmatch(client.get(selector) or "") for selector, pattern in self.match.items())

"""Per-group config overrides for every group kind (config resources of type GROUP, 32), as Kafka
4.4's GroupConfig defines them and its GroupConfigManager keeps them: set with
IncrementalAlterConfigs / AlterConfigs and read with DescribeConfigs, before or after the group
exists, and looked up the same way by every kind (``value(group_id, name)``).

Each config is typed, defaults to its kind's broker setting (``CoordinatorSettings``: a consumer
group's consumer.session.timeout.ms is group.consumer.session.timeout.ms until set), is checked
as Kafka checks it (its type and own bounds, then the broker's group.<kind>.min.* / max.* settings,
then a heartbeat interval below its session timeout), and is answered in Kafka's words.
Overrides are kept as the text they were given; the broker persists them through ``persist``
(the data dir's file: Kafka keeps them as the controller's config records), and ``listeners``
hear which group's configs changed (the share partitions re-read their limits)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from .coordinator_settings import CoordinatorSettings

Overrides = dict[str, dict[str, str]]   # group id -> {config name: value text}
_DURATION = re.compile(r"by_duration:P(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?$")
INT32_MAX = 2**31 - 1


def config_text(value: Any) -> str | None:
    """A typed config value as DescribeConfigs gives it (group and broker configs alike)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(value)
    return str(value)


@dataclass(frozen=True)
class GroupConfigDef:
    """One group config: its Kafka type, its default (the broker setting it stands in for), the
    lower bound of its own definition, and the broker settings bounding it (either may be None)."""
    name: str
    type: str   # Kafka's ConfigDef type: INT, LONG, BOOLEAN, STRING, LIST
    default: Callable[[CoordinatorSettings], Any]
    low: int | None = None
    bounds: Callable[[CoordinatorSettings], tuple[int | None, int | None]] | None = None
    check: Callable[[CoordinatorSettings, str], str | None] | None = None   # a string's own check
    internal: bool = False   # ConfigDef.defineInternal: described only where set on the group

    def parse(self, text: str) -> Any:
        """The typed value of ``text``; ValueError with Kafka's message for one of the wrong type."""
        t = text.strip()
        if self.type in ("INT", "LONG"):
            try:
                n = int(t)
            except ValueError:
                raise ValueError(self._invalid(text, f"Not a number of type {self.type}")) from None
            if self.type == "INT" and not -2**31 <= n <= INT32_MAX:
                raise ValueError(self._invalid(text, "Not a number of type INT"))
            return n
        if self.type == "BOOLEAN":
            if t.lower() not in ("true", "false"):
                raise ValueError(self._invalid(text, "Expected value to be either true or false"))
            return t.lower() == "true"
        if self.type == "LIST":
            return tuple(item.strip() for item in t.split(",") if item.strip())
        return t

    def problem(self, settings: CoordinatorSettings, text: str) -> str | None:
        """What Kafka's GroupConfig.validate says of this value, or None."""
        try:
            value = self.parse(text)
        except ValueError as exc:
            return str(exc)
        if self.low is not None and value < self.low:
            return self._invalid(text, f"Value must be at least {self.low}")
        if self.check is not None:
            return self.check(settings, text)
        if self.bounds is not None:
            lo, hi = self.bounds(settings)
            if lo is not None and hi is not None and not lo <= value <= hi:
                return f"{self.name} must be in the range {lo} to {hi} inclusive."
            if lo is None and hi is not None and value > hi:
                return f"{self.name} must be less than or equal to {hi}"
            if hi is None and lo is not None and value < lo:
                return f"{self.name} must be greater than or equal to {lo}"
        return None


    def _invalid(self, text: str, why: str) -> str:
        return f"Invalid value {text} for configuration {self.name}: {why}"


def _reset(settings: CoordinatorSettings, text: str) -> str | None:
    if text in ("latest", "earliest") or _DURATION.match(text):
        return None
    return (f"Invalid value {text} for configuration share.auto.offset.reset: Invalid value `{text}` for "
            f"configuration share.auto.offset.reset. The value must be either 'earliest', 'latest' or of the format "
            f"'by_duration:<PnDTnHnMn.nS>'.")


def _isolation(settings: CoordinatorSettings, text: str) -> str | None:
    if text in ("read_committed", "read_uncommitted"):
        return None
    return (f"Invalid value {text} for configuration share.isolation.level: String must be one of: "
            f"read_committed, read_uncommitted")


def _streams_assignor(settings: CoordinatorSettings, text: str) -> str | None:
    registered = settings.streams.assignors
    if text in registered:
        return None
    return (f"streams.assignor.name '{text}' is not a registered task assignor. Registered assignors are: "
            f"[{', '.join(registered)}].")


def _defs() -> dict[str, GroupConfigDef]:
    c, sh, st = (lambda s: s.consumer), (lambda s: s.share), (lambda s: s.streams)

    def ranged(kind, name):   # within the kind's broker min.<name> and max.<name>
        return lambda s: (getattr(kind(s), f"min_{name}"), getattr(kind(s), f"max_{name}"))

    def default(kind, name):
        return lambda s: getattr(kind(s), name)
    defs = [
        GroupConfigDef("consumer.session.timeout.ms", "INT", default(c, "session_timeout_ms"), 1,
                       ranged(c, "session_timeout_ms")),
        GroupConfigDef("consumer.heartbeat.interval.ms", "INT", default(c, "heartbeat_interval_ms"), 1,
                       ranged(c, "heartbeat_interval_ms")),
        GroupConfigDef("consumer.assignment.interval.ms", "INT", default(c, "assignment_interval_ms"), 0,
                       ranged(c, "assignment_interval_ms")),
        GroupConfigDef("consumer.assignor.offload.enable", "BOOLEAN", default(c, "assignor_offload_enable"),
                       internal=True),
        GroupConfigDef("errors.deadletterqueue.copy.record.enable", "BOOLEAN", lambda s: False),
        GroupConfigDef("errors.deadletterqueue.topic.name", "STRING", lambda s: ""),
        GroupConfigDef("share.assignment.interval.ms", "INT", default(sh, "assignment_interval_ms"), 0,
                       ranged(sh, "assignment_interval_ms")),
        GroupConfigDef("share.assignor.offload.enable", "BOOLEAN", default(sh, "assignor_offload_enable"),
                       internal=True),
        GroupConfigDef("share.auto.offset.reset", "STRING", lambda s: "latest", check=_reset),
        GroupConfigDef("share.delivery.count.limit", "INT", default(sh, "delivery_count_limit"), 2,
                       ranged(sh, "delivery_count_limit")),
        GroupConfigDef("share.heartbeat.interval.ms", "INT", default(sh, "heartbeat_interval_ms"), 1,
                       ranged(sh, "heartbeat_interval_ms")),
        GroupConfigDef("share.isolation.level", "STRING", lambda s: "read_uncommitted", check=_isolation),
        GroupConfigDef("share.partition.max.record.locks", "INT", default(sh, "partition_max_record_locks"), 100,
                       ranged(sh, "partition_max_record_locks")),
        GroupConfigDef("share.record.lock.duration.ms", "INT", default(sh, "record_lock_duration_ms"), 1000,
                       ranged(sh, "record_lock_duration_ms")),
        GroupConfigDef("share.renew.acknowledge.enable", "BOOLEAN", lambda s: True),
        GroupConfigDef("share.session.timeout.ms", "INT", default(sh, "session_timeout_ms"), 1,
                       ranged(sh, "session_timeout_ms")),
        GroupConfigDef("streams.acceptable.recovery.lag", "LONG", default(st, "acceptable_recovery_lag"), 0,
                       internal=True),
        GroupConfigDef("streams.assignment.interval.ms", "INT", default(st, "assignment_interval_ms"), 0,
                       ranged(st, "assignment_interval_ms")),
        # unset, the group uses the first of the broker's group.streams.assignors, which Kafka 4.4
        # describes as its value
        GroupConfigDef("streams.assignor.name", "STRING", lambda s: s.streams.assignors[0], check=_streams_assignor),
        GroupConfigDef("streams.assignor.offload.enable", "BOOLEAN", default(st, "assignor_offload_enable"),
                       internal=True),
        GroupConfigDef("streams.heartbeat.interval.ms", "INT", default(st, "heartbeat_interval_ms"), 1,
                       ranged(st, "heartbeat_interval_ms")),
        GroupConfigDef("streams.initial.rebalance.delay.ms", "INT", default(st, "initial_rebalance_delay_ms"), 0),
        GroupConfigDef("streams.num.standby.replicas", "INT", default(st, "num_standby_replicas"), 0,
                       lambda s: (None, s.streams.max_standby_replicas)),
        GroupConfigDef("streams.num.warmup.replicas", "INT", default(st, "num_warmup_replicas"), 0,
                       lambda s: (None, s.streams.max_warmup_replicas), internal=True),
        GroupConfigDef("streams.rack.aware.assignment.tags", "LIST", default(st, "rack_aware_assignment_tags")),
        GroupConfigDef("streams.session.timeout.ms", "INT", default(st, "session_timeout_ms"), 1,
                       ranged(st, "session_timeout_ms")),
        GroupConfigDef("streams.task.offset.interval.ms", "INT", default(st, "task_offset_interval_ms"), 1,
                       lambda s: (s.streams.min_task_offset_interval_ms, None), internal=True),
    ]
    return {d.name: d for d in defs}


GROUP_CONFIGS: dict[str, GroupConfigDef] = _defs()
# (heartbeat interval, session timeout) pairs GroupConfig checks, with the defaults standing in
_INTERVAL_BELOW_TIMEOUT = [(f"{kind}.heartbeat.interval.ms", f"{kind}.session.timeout.ms")
                           for kind in ("consumer", "share", "streams")]


class GroupConfigs:
    """Every group's config overrides, with the kinds' settings as their defaults."""

    def __init__(self, settings: CoordinatorSettings, saved: Overrides | None = None,
                 persist: Callable[[Overrides], None] | None = None) -> None:
        self.settings = settings
        self._overrides: Overrides = {group: dict(configs) for group, configs in (saved or {}).items() if configs}
        self._persist = persist
        self.listeners: list[Callable[[str], None]] = []   # told the group whose configs changed

    def value(self, group_id: str, name: str) -> Any:
        """The group's value of a config: its override, else the kind's broker setting."""
        definition = GROUP_CONFIGS[name]
        text = self._overrides.get(group_id, {}).get(name)
        return definition.default(self.settings) if text is None else definition.parse(text)

    def overrides(self, group_id: str) -> dict[str, str]:
        return dict(self._overrides.get(group_id, {}))

    def groups(self) -> list[str]:
        """The groups with a config set."""
        return list(self._overrides)

    def problem(self, wanted: dict[str, str]) -> str | None:
        """Why a group's configs cannot become ``wanted`` (Kafka's INVALID_CONFIG message), or None."""
        for name, text in wanted.items():
            definition = GROUP_CONFIGS.get(name)
            if definition is None:
                return f"Unknown group config name: {name}"
            if problem := definition.problem(self.settings, text):
                return problem
        for interval, timeout in _INTERVAL_BELOW_TIMEOUT:
            values = [GROUP_CONFIGS[n].parse(wanted[n]) if n in wanted else GROUP_CONFIGS[n].default(self.settings)
                      for n in (interval, timeout)]
            if values[0] >= values[1]:
                return f"{timeout} must be greater than {interval}"
        return None

    def replace(self, group_id: str, wanted: dict[str, str]) -> None:
        """The group's overrides become ``wanted`` (checked with ``problem`` first)."""
        if wanted == self._overrides.get(group_id, {}):
            return
        if wanted:
            self._overrides[group_id] = dict(wanted)
        else:
            self._overrides.pop(group_id, None)
        self._changed(group_id)

    def set(self, group_id: str, name: str, text: str | None) -> None:
        """Set one config of the group (None: remove it), unchecked."""
        wanted = self.overrides(group_id)
        if text is None:
            wanted.pop(name, None)
        else:
            wanted[name] = text
        self.replace(group_id, wanted)

    def delete_group(self, group_id: str) -> None:
        if self._overrides.pop(group_id, None):
            self._changed(group_id)

    def clear(self) -> None:
        """Forget every group's configs (a control reset)."""
        groups = list(self._overrides)
        self._overrides.clear()
        for group_id in groups:
            self._changed(group_id)

    def restore(self, other: "GroupConfigs") -> None:
        """Take another coordinator's overrides as they are (a restored snapshot keeps the current ones)."""
        self._overrides = {group: dict(configs) for group, configs in other._overrides.items()}

    def describe(self, group_id: str) -> list[tuple[str, str | None, bool, str]]:
        """(name, value text, set on the group, Kafka type) of every group config, by name; an
        internal one only where set on the group (ConfigHelperUtils.createResponseConfig: the
        originals and the non-internal values)."""
        set_here = self._overrides.get(group_id, {})
        return [(name, set_here[name] if name in set_here else config_text(d.default(self.settings)), name in set_here,
                 d.type) for name, d in sorted(GROUP_CONFIGS.items()) if not d.internal or name in set_here]

    def _changed(self, group_id: str) -> None:
        if self._persist is not None:
            self._persist(self._overrides)
        for listener in self.listeners:
            listener(group_id)

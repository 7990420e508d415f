"""The topics a KIP-848 regex subscription resolves to while authorization is on, as Kafka 4.3's
``TopicRegexResolver`` and ``GroupMetadataManager.maybeUpdateRegularExpressions``: a group's
regexes are resolved together, each match kept only if the principal of the member whose heartbeat
asked for the resolution may DESCRIBE it, and every member of the group subscribing to a regex gets
that resolution. An ACL change alone resolves nothing: the next resolution does, which comes when a
regex is new to the group, when the topics it matches change, or when the last resolution is older
than group.consumer.regex.refresh.interval.ms (10 minutes; at least Kafka's 10 s between two).

With authorization off the manager never calls this and regexes match the live topics."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from ...logging import get_logger

log = get_logger("kafkaemu.consumer_groups")

# (principal, client host, topic) -> whether the principal may DESCRIBE the topic
DescribeTopic = Callable[[str, str, str], bool]


@dataclass(frozen=True)
class ResolvedRegex:
    matched: frozenset[str]   # every topic the regex matched when resolved
    topics: frozenset[str]    # those the resolving principal may describe: what members are assigned from


@dataclass(frozen=True)
class RegexResolutions:
    """A group's resolved regexes (never changed in place: a group snapshot keeps the reference)."""
    by_regex: Mapping[str, ResolvedRegex]
    resolved_ms: int


NONE_RESOLVED: Mapping[str, ResolvedRegex] = {}


def resolved_topics(resolutions: RegexResolutions | None) -> Mapping[str, ResolvedRegex]:
    """What the group's regexes resolve to while authorization is on (nothing until resolved)."""
    return NONE_RESOLVED if resolutions is None else resolutions.by_regex


def maybe_resolve(group, regexes: set[str], matching: Callable[[str], frozenset[str]],
                  describe_topic: DescribeTopic, principal: str, host: str, now_ms: int,
                  refresh_interval_ms: int) -> bool:
    """Resolve ``group``'s ``regexes`` again with ``principal``'s permissions when one is new, the
    topics one matches changed or the last resolution is older than ``refresh_interval_ms``;
    returns whether the topics some regex resolves to changed (the group epoch is bumped)."""
    current = group.regexes
    old = resolved_topics(current)
    if not regexes:
        if old:
            group.regexes = None
        return False
    matches = {regex: matching(regex) for regex in regexes}
    due = current is None or now_ms > current.resolved_ms + refresh_interval_ms
    if not due and all(regex in old and old[regex].matched == matched for regex, matched in matches.items()):
        if len(old) != len(regexes):   # a regex nobody subscribes to any more is forgotten
            group.regexes = RegexResolutions({r: old[r] for r in regexes}, current.resolved_ms)
        return False
    candidates = frozenset().union(*matches.values())
    denied = frozenset(t for t in candidates if not describe_topic(principal, host, t))
    resolved = {regex: ResolvedRegex(matched, matched - denied) for regex, matched in matches.items()}
    group.regexes = RegexResolutions(resolved, now_ms)
    changed = any(regex not in old or old[regex].topics != entry.topics for regex, entry in resolved.items())
    log.info("consumer_regexes_resolved", group=group.group_id, principal=principal, regexes=len(resolved),
             topics=len(candidates), denied=len(denied), changed=changed)
    return changed

"""What a consumer group should look like: the topics its members subscribe to, the server assignor
it uses and the target assignment of every member (Kafka's TargetAssignmentBuilder and its choice of
assignor). Members then move towards their target through reconciliation.py."""
from __future__ import annotations

import re
from typing import Mapping

from ...logging import get_logger
from ..modern import TopicMeta
from .assignors import ASSIGNORS, DEFAULT_ASSIGNOR, MemberSpec
from .group import ConsumerGroup
from .member import ConsumerMember
from .regex_resolution import ResolvedRegex

log = get_logger("kafkaemu.consumer_groups")


def available_assignors(configured: tuple[str, ...]) -> list[str]:
    """The configured server assignors kafkaemu has, in the configured order."""
    return [a for a in configured if a in ASSIGNORS]


def assignor_name(group: ConsumerGroup, available: list[str]) -> str:
    preferred = group.preferred_assignor()
    if preferred in available:
        return preferred
    return available[0] if available else DEFAULT_ASSIGNOR


def topics_matching(pattern: str, topics: dict[str, TopicMeta]) -> list[str]:
    # Kafka uses RE2/J; Python's re covers the common syntax (whole-name match, as Java's matches()).
    compiled = re.compile(pattern)
    return [name for name in topics if compiled.fullmatch(name)]


def _member_topics(member: ConsumerMember, topics: dict[str, TopicMeta],
                   resolved: Mapping[str, ResolvedRegex] | None) -> set[str]:
    names = set(member.subscribed_topic_names)
    regex = member.subscribed_topic_regex
    if regex:
        if resolved is None:   # authorization off: the live matches
            names.update(topics_matching(regex, topics))
        elif regex in resolved:
            names.update(resolved[regex].topics)
    return names


def subscription_metadata(group: ConsumerGroup, topics: dict[str, TopicMeta],
                          resolved: Mapping[str, ResolvedRegex] | None = None) -> dict[str, TopicMeta]:
    """The existing topics some member subscribes to (by name or regex), by name; ``resolved``: what
    the group's regexes resolve to while authorization is on (regex_resolution.py), None while off."""
    names: set[str] = set()
    for member in group.members.values():
        names.update(_member_topics(member, topics, resolved))
    return {n: topics[n] for n in sorted(names) if n in topics}


def update_target_assignment(group: ConsumerGroup, topics: dict[str, TopicMeta], available: list[str],
                             resolved: Mapping[str, ResolvedRegex] | None = None) -> None:
    """Assign the group's subscribed partitions anew at its group epoch."""
    assignor = ASSIGNORS[assignor_name(group, available)]
    subscribed = group.subscription_metadata
    specs = {mid: MemberSpec(frozenset(subscribed[n].topic_id for n in _member_topics(m, topics, resolved)
                                       if n in subscribed),
                             group.target.get(mid, {}))
             for mid, m in group.members.items()}
    partitions = {meta.topic_id: meta.num_partitions for meta in subscribed.values()}
    group.target = assignor.assign(specs, partitions) if specs else {}
    group.assignment_epoch = group.group_epoch
    log.info("consumer_target_assignment", group=group.group_id, epoch=group.group_epoch,
             assignor=assignor.name, members=len(specs))

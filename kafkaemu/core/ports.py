"""What the group coordinator needs from outside the core, handed to its constructor (the core
imports nothing from storage, auth or the broker): the adapters live in broker/coordinators.py,
and a unit test passes its own or none.

- ``sink(partition, records, now_ms, **transactional)``: appends a write's batch to
  __consumer_offsets (context.Sink); without one, records go nowhere.
- ``partitions_of(topic)``: a topic's partition count, None when it does not exist (what streams
  topologies are configured against when a group is loaded).
- ``group_configs``: the groups' configs (group_configs.py: a config set on the group, such as
  ``consumer.session.timeout.ms``, else the kind's broker setting), the broker's, which the share
  data plane shares; None: the coordinator keeps its own.
- ``may_describe(principal, host, topic)``: while authorization is on, whether a principal may
  DESCRIBE a topic (what KIP-848 regex subscriptions may resolve to); None while it is off.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from .group_configs import GroupConfigs

PartitionsOf = Callable[[str], "int | None"]
MayDescribe = Callable[[str, str, str], bool]


def no_topics(topic: str) -> None:
    """No topic exists: the core stands alone (unit tests)."""
    return None


@dataclass(frozen=True)
class GroupPorts:
    partitions_of: PartitionsOf = no_topics
    group_configs: "GroupConfigs | None" = None
    may_describe: MayDescribe | None = None

"""The share data plane for tests: a SharePartitionManager with a log the test describes and a
manual clock, and a group coordinator that tells it of its share groups, as the broker wires them."""
from __future__ import annotations

from kafkaemu.core.coordinator import GroupCoordinator
from kafkaemu.core.coordinator_settings import CoordinatorSettings
from kafkaemu.core.group_configs import GroupConfigs
from kafkaemu.core.ports import GroupPorts
from kafkaemu.core.share.settings import ShareSettings
from kafkaemu.core.share.partitions import SharePartitionManager, SharePorts


class Woken(list):
    """The share partitions whose parked ShareFetches would have been woken, in order."""

    def __call__(self, key) -> None:
        self.append(key)


def share_plane(log_offsets=lambda tid, p, committed: None, *, offset_for_time=lambda tid, p, ts: None,
                sink=None, state_partitions: int = 50, settings: ShareSettings | None = None,
                now_ms: int = 0, group_configs: GroupConfigs | None = None) -> SharePartitionManager:
    """``log_offsets(topic id, partition, read_committed)``: (log start, readable end) or None;
    ``sink``: __share_group_state's (None: not durable). ``plane.ports.wake`` is a ``Woken``;
    ``plane.group_configs`` the groups' configs (``settings``: the share groups' broker settings)."""
    ports = SharePorts(log_offsets, offset_for_time, Woken(), sink, state_partitions)
    configs = group_configs or GroupConfigs(CoordinatorSettings(share=settings or ShareSettings()))
    return SharePartitionManager(configs, ports, now_ms)


def coordinator_with_plane(sink=None, now_ms: int = 0, settings: CoordinatorSettings | None = None,
                           **plane) -> tuple[GroupCoordinator, SharePartitionManager]:
    settings = settings or CoordinatorSettings()
    configs = GroupConfigs(settings)
    shares = share_plane(now_ms=now_ms, group_configs=configs, **plane)
    return GroupCoordinator(settings, sink, now_ms, share_events=shares, ports=GroupPorts(group_configs=configs)), shares


class ScriptedEvents:
    """A ShareGroupEvents receiver standing in for the data plane: each event calls the listeners a
    test put under its name (``events.listeners["assigned"]``), with its arguments but the time; a
    listener that raises is the data plane failing to write."""
    NAMES = ("assigned", "offsets_altered", "offsets_deleted", "member_left", "member_expired", "group_deleted")

    def __init__(self) -> None:
        self.listeners: dict[str, list] = {name: [] for name in self.NAMES}
        for name in self.NAMES:
            setattr(self, name, self._event(name))

    def _event(self, name: str):
        def event(now_ms: int, *args) -> None:
            for listener in list(self.listeners[name]):
                listener(*args)
        return event

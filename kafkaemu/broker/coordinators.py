"""Where the broker builds its coordinators: each writes its records to its internal topic and
is placed by that topic's partition count (``Placement`` learns the same count here).

The broker builds them on first use (``Broker.__init__``), so the group and transaction
coordinators' modules are imported here, when one is built, not when the broker starts."""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Callable

from ..storage import transaction_state_topic
from ..storage.log_store import OFFSETS_TOPIC, LogStore
from .placement import Placement

if TYPE_CHECKING:
    from ..config import BrokerConfig
    from ..core.coordinator import GroupCoordinator
    from ..core.group_configs import GroupConfigs
    from ..core.share.partitions import SharePartitionManager
    from ..core.transactions.context import WriteMarkers
    from ..core.transactions.coordinator import TransactionCoordinator


def holds_records(store: LogStore, *topics: str) -> bool:
    """Whether any partition of these topics holds a record (a data directory's coordinator state)."""
    return any(plog.log_end_offset > plog.log_start_offset
               for name in topics if (topic := store.get(name)) is not None for plog in topic.partitions)


def continue_producer_ids(store: LogStore) -> None:
    """New producer ids continue above every id the partitions' logs know (a data directory's)."""
    ids = store.producer_ids
    for topic in store.topics.values():
        for plog in topic.partitions:
            ids.ensure_above(max(plog.producers.producers, default=-1))


def coordinator_settings(config: BrokerConfig, offsets_partitions: int | None = None):
    """The group coordinator's settings: the kinds' and the offsets' of the configuration (with the
    partition count __consumer_offsets has, when given)."""
    from ..core.coordinator_settings import CoordinatorSettings
    offsets = config.offsets if offsets_partitions is None else \
        dataclasses.replace(config.offsets, topic_num_partitions=offsets_partitions)
    return CoordinatorSettings(offsets, config.classic, config.consumer, config.share, config.streams)


def build_group_configs(config: BrokerConfig) -> GroupConfigs:
    """The groups' configs, which the group coordinator and the share data plane share; with a data
    dir, kept in its file (Kafka keeps them as the controller's config records)."""
    from ..core.group_configs import GroupConfigs
    from ..storage import group_configs_file
    if not config.data_dir:
        return GroupConfigs(coordinator_settings(config))
    return GroupConfigs(coordinator_settings(config), group_configs_file.load(config.data_dir),
                        lambda configs: group_configs_file.save(config.data_dir, configs))


def build_share_partitions(config: BrokerConfig, store: LogStore, now_ms: int, load: bool,
                           group_configs: GroupConfigs) -> SharePartitionManager:
    """The share data plane (Kafka's SharePartitionManager) with its ports: the log's offsets,
    waking parked ShareFetches, __share_group_state, the groups' configs; ``load``: with the share
    partitions its records hold."""
    from ..core.share.partitions import SharePartitionManager, SharePorts
    from ..storage import share_state_topic
    from ..storage.share_log import log_offsets, offset_for_time, share_waker
    ports = SharePorts(log_offsets(store), offset_for_time(store), share_waker(store),
                       share_state_topic.log_sink(store), share_state_topic.partition_count(store))
    shares = SharePartitionManager(group_configs, ports, now_ms)
    if load:
        shares.load(share_state_topic.read_records(store))
    return shares


def build_group_coordinator(config: BrokerConfig, store: LogStore, placement: Placement, now_ms: int,
                            load: bool, shares: SharePartitionManager, group_configs: GroupConfigs,
                            authorizer=None) -> GroupCoordinator:
    """A group coordinator writing to __consumer_offsets, telling ``shares`` (the share data plane)
    of its share groups, looking the groups' configs up in ``group_configs``; ``load``: with the
    groups and offsets its records hold (a previous run's, or a restored snapshot's); ``authorizer``:
    the broker's, when authorization is on (what KIP-848 regex subscriptions may resolve to)."""
    from ..core.coordinator import GroupCoordinator
    from ..core.ports import GroupPorts
    from ..storage.offsets_topic import log_sink, read_entries
    offsets_partitions = len(store.get(OFFSETS_TOPIC).partitions)
    placement.offsets_partitions = offsets_partitions
    ports = GroupPorts(partitions_of=_partition_count(store), group_configs=group_configs,
                       may_describe=None if authorizer is None else _describe_topic(authorizer))
    coordinator = GroupCoordinator(coordinator_settings(config, offsets_partitions), log_sink(store, offsets_partitions),
                                   now_ms, share_events=shares, ports=ports)
    if load:
        coordinator.load(read_entries(store), now_ms)
    return coordinator


def _describe_topic(authorizer):
    """Whether a principal may DESCRIBE a topic; a denial is not logged (Kafka's regex resolution
    asks with logIfDenied false)."""
    from ..auth.acl import AclOperation, ResourceType
    describe, topic_type = AclOperation.DESCRIBE, ResourceType.TOPIC

    def may_describe(principal: str, host: str, topic: str) -> bool:
        return authorizer.authorize(principal, host, describe, topic_type, topic)
    return may_describe


def _partition_count(store: LogStore):
    """A topic's partition count, or None when it does not exist (what streams topologies are
    configured against)."""
    def partitions_of(name: str) -> int | None:
        topic = store.topics.get(name)
        return None if topic is None else len(topic.partitions)
    return partitions_of


def build_transaction_coordinator(config: BrokerConfig, store: LogStore, placement: Placement,
                                  write_markers: Callable[[WriteMarkers], None], now_ms: int,
                                  load: bool, transaction_version: Callable[[], int] | None = None
                                  ) -> TransactionCoordinator:
    """A transaction coordinator writing to __transaction_state; ``load``: with the transactions
    its records hold (a previous run's, or a restored snapshot's), producer ids continuing above
    every id the logs know."""
    from ..core.transactions.coordinator import TransactionCoordinator
    txn_partitions = len(store.get(transaction_state_topic.TRANSACTION_STATE_TOPIC).partitions)
    placement.txn_partitions = txn_partitions
    settings = dataclasses.replace(config.transactions, state_log_num_partitions=txn_partitions)
    if transaction_version is not None:   # the finalized feature level now (--feature, UpdateFeatures)
        settings = dataclasses.replace(settings, transaction_version=transaction_version())
    coordinator = TransactionCoordinator(settings, transaction_state_topic.log_sink(store), write_markers,
                                         store.producer_ids.new_id, now_ms, transaction_version=transaction_version)
    if load:
        continue_producer_ids(store)
        coordinator.load(transaction_state_topic.read_records(store), now_ms)
        store.producer_ids.ensure_above(coordinator.max_producer_id())
    return coordinator

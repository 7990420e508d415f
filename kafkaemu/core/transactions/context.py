"""What the transaction coordinator's parts share: the time, the timers, the record sink for
__transaction_state, the marker writer, the producer id source, the transition journal and the
settings (the twin of core/context.py for groups).

Nothing here reads a clock: the coordinator moves ``now_ms`` forward as requests and ticks arrive.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Callable, Hashable

from ..group_api import Record
from .settings import TransactionSettings
from ..timers import Timers
from .state import TransactionState

TopicPartition = tuple[str, int]
Sink = Callable[[int, list[Record], int], None]     # (partition of __transaction_state, records, now_ms)


@dataclass(frozen=True)
class WriteMarkers:
    """An effect: write a commit or abort marker to each partition of a completing transaction
    (Kafka's TransactionMarkerChannelManager sends WriteTxnMarkers to their leaders). The
    coordinator epoch of the markers is the leader epoch of ``txn_partition``."""
    transactional_id: str
    txn_partition: int
    producer_id: int
    producer_epoch: int
    commit: bool
    partitions: tuple[TopicPartition, ...]
    now_ms: int
    transaction_version: int = 0     # the transaction's (2: the epoch is bumped, markers carry it)


MarkerWriter = Callable[[WriteMarkers], None]


@dataclass(frozen=True)
class TxnTransition:
    """One state change of a transactional id."""
    at_ms: int
    transactional_id: str
    from_state: TransactionState
    to_state: TransactionState
    producer_id: int
    producer_epoch: int


def _no_sink(partition: int, records: list[Record], now_ms: int) -> None:
    pass


def _no_markers(request: WriteMarkers) -> None:
    pass


class TransactionContext:
    def __init__(self, settings: TransactionSettings, sink: Sink | None = None, markers: MarkerWriter | None = None,
                 next_producer_id: Callable[[], int] | None = None, now_ms: int = 0,
                 transition_log_size: int = 100000, transaction_version: Callable[[], int] | None = None) -> None:
        self.settings = settings
        # the finalized transaction.version now (Kafka's TransactionStateManager.transactionVersionLevel
        # reads the metadata cache's at each use): UpdateFeatures changes it while running
        self.transaction_version: Callable[[], int] = transaction_version or (lambda: settings.transaction_version)
        self.sink: Sink = sink or _no_sink
        self.markers: MarkerWriter = markers or _no_markers
        self.next_producer_id = next_producer_id or _counter(1000)
        self.now_ms = now_ms
        self.timers = Timers()
        self.transitions: deque[TxnTransition] = deque(maxlen=transition_log_size)
        self.transition_listeners: list[Callable[[TxnTransition], None]] = []

    def advance(self, now_ms: int) -> None:
        self.now_ms = max(self.now_ms, now_ms)

    def schedule(self, key: Hashable, delay_ms: int, callback: Callable[[], None]) -> None:
        self.timers.schedule(key, self.now_ms + delay_ms, callback)

    def record_transition(self, transactional_id: str, old: TransactionState, new: TransactionState,
                          producer_id: int, producer_epoch: int) -> None:
        t = TxnTransition(self.now_ms, transactional_id, old, new, producer_id, producer_epoch)
        self.transitions.append(t)
        for listener in list(self.transition_listeners):
            listener(t)


def _counter(first: int) -> Callable[[], int]:
    state = [first]

    def next_id() -> int:
        state[0] += 1
        return state[0] - 1
    return next_id

"""A manual-clock driver for the pure transaction coordinator: requests in, answers, records and
marker effects out."""
from __future__ import annotations

from kafkaemu.core.transactions.settings import TransactionSettings
from kafkaemu.core.transactions.context import WriteMarkers
from kafkaemu.core.transactions.coordinator import TransactionCoordinator
from kafkaemu.core.transactions.requests import AddPartitions, EndTxn, InitProducerId, ListTransactions
from kafkaemu.protocol.errors import ErrorCode as E

TIMEOUT = 60000


class TxnHarness:
    """Transactions V1 on a cluster whose transaction.version is 0 unless the settings say otherwise
    (``transaction_version=2``: the coordinator's own aborts use V2); ``tv=2`` on a request is a V2
    client's (EndTxn v5, a V2 producer's implicit add)."""

    def __init__(self, **settings) -> None:
        settings.setdefault("transaction_version", 0)
        self.now = 1_000_000
        self.records: list[tuple[int, list[tuple[bytes, bytes | None]], int]] = []
        self.markers: list[WriteMarkers] = []
        self.fail_markers = False
        self.c = TransactionCoordinator(TransactionSettings(**settings), sink=self._sink, markers=self._markers,
                                        now_ms=self.now)

    def _sink(self, partition, records, now_ms) -> None:
        self.records.append((partition, list(records), now_ms))

    def _markers(self, request: WriteMarkers) -> None:
        if self.fail_markers:
            raise OSError("partition unavailable")
        self.markers.append(request)

    def all_records(self) -> list[tuple[bytes, bytes | None]]:
        return [r for _, recs, _ in self.records for r in recs]

    def advance(self, ms: int) -> None:
        self.now += ms
        self.c.tick(self.now)

    def state(self, tid: str = "t") -> str:
        s = self.c.state(tid)
        return s["state"] if s else "none"

    def md(self, tid: str = "t"):
        return self.c.txns.get(tid)

    # -- requests --------------------------------------------------------------------------
    def init(self, tid: str | None = "t", timeout: int = TIMEOUT, producer_id: int = -1,
             producer_epoch: int = -1) -> dict:
        return self.c.init_producer_id(self.now, InitProducerId(tid, timeout, producer_id, producer_epoch))

    def init_ok(self, tid: str = "t", **kw) -> tuple[int, int]:
        r = self.init(tid, **kw)
        assert r["error_code"] == E.NONE, r
        return r["producer_id"], r["producer_epoch"]

    def add(self, pid: int, epoch: int, *partitions, tid: str = "t", tv: int = 0) -> E:
        return self.c.add_partitions(self.now, AddPartitions(tid, pid, epoch, list(partitions or [("a", 0)]), tv))

    def verify(self, pid: int, epoch: int, *partitions, tid: str = "t") -> dict:
        return self.c.verify_partitions(self.now, AddPartitions(tid, pid, epoch, list(partitions)))

    def end(self, pid: int, epoch: int, commit: bool = True, tid: str = "t", tv: int = 0) -> E:
        return E(self.end_result(pid, epoch, commit, tid, tv)["error_code"])

    def end_result(self, pid: int, epoch: int, commit: bool = True, tid: str = "t", tv: int = 0) -> dict:
        return self.c.end_transaction(self.now, EndTxn(tid, pid, epoch, commit, tv))

    def list(self, states=(), pids=(), duration: int = -1) -> dict:
        return self.c.list_transactions(self.now, ListTransactions(list(states), list(pids), duration))

    def ongoing(self, tid: str = "t", *partitions) -> tuple[int, int]:
        pid, epoch = self.init_ok(tid)
        assert self.add(pid, epoch, *(partitions or [("a", 0)]), tid=tid) == E.NONE
        return pid, epoch

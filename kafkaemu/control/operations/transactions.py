"""Transactions seen and steered from outside: a transactional id's state, its markers held and
released, aborts and time-outs now, fencing, its coordinator moved."""
from __future__ import annotations

from ...storage.transaction_state_topic import TRANSACTION_STATE_TOPIC
from ...broker.intercept import error_name
from ..params import ControlError, integer, text
from ..table import Cli, P, Py, op
from .base import ControlBase

TXN_ID = P(text, required=True, help="the producer's transactional.id")


def _none_when_unknown(exc: Exception):
    if isinstance(exc, ControlError) and exc.status == 404:
        return None
    raise exc


def _txn_error_name(exc: Exception) -> str:
    if isinstance(exc, ControlError) and exc.status == 409 and "txn_error" in exc.details:
        return exc.details["txn_error"]
    raise exc


def _fenced(answer: dict) -> dict:
    from ...protocol.errors import ErrorCode
    return {"error_code": int(ErrorCode[answer["error"]]), "producer_id": answer["producer_id"],
            "producer_epoch": answer["producer_epoch"]}


def _json_transaction(state: dict) -> dict:
    return {**state, "partitions": [{"topic": t, "partition": p} for t, p in state["partitions"]]}


def _by_id(transactional_id):
    return {"transactional_id": transactional_id}


class TransactionOps(ControlBase):
    def _transaction(self, transactional_id: str) -> dict:
        state = self.broker.txn_hooks.state(transactional_id)
        if state is None:
            raise ControlError(404, f"no transactional id {transactional_id!r}")
        return _json_transaction(state)

    @op("GET", "/api/transactions/{transactional_id}", transactional_id=TXN_ID,
        py=Py("transaction_state", _by_id, on_error=_none_when_unknown,
              doc="The transactional id's state (Kafka's name, e.g. \"Ongoing\"), pending state, producer id "
                  "and epoch, partitions, timeout, start time, whether held; None for an unknown id."),
        cli=Cli("transaction show", "transactional_id"))
    def transaction(self, transactional_id: str) -> dict:
        """A transactional id's state (Kafka's names), pending state, producer id and epoch,
        partitions, timeout, whether its markers are held."""
        return self._transaction(transactional_id)

    @op("POST", "/api/transactions/{transactional_id}/hold", transactional_id=TXN_ID,
        py=Py("hold_transaction", _by_id, result=lambda r: None),
        cli=Cli("transaction hold", "transactional_id"))
    def transaction_hold(self, transactional_id: str) -> dict:
        """Withhold the id's commit/abort markers until released: EndTxn is answered, the transaction
        stays in PrepareCommit/PrepareAbort and the last stable offset of its partitions stays pinned
        (read_committed consumers wait). A held transaction never times out."""
        self._transaction(transactional_id)
        self.broker.txn_hooks.hold(transactional_id)
        return self._transaction(transactional_id)

    @op("POST", "/api/transactions/{transactional_id}/release", transactional_id=TXN_ID,
        py=Py("release_transaction", _by_id, result="completed"),
        cli=Cli("transaction release", "transactional_id"))
    def transaction_release(self, transactional_id: str) -> dict:
        """Write the markers withheld by hold; ``completed`` says whether a transaction completed."""
        completed = self._hook(self.broker.txn_hooks.release, transactional_id)
        return {"completed": completed, **self._transaction(transactional_id)}

    @op("POST", "/api/transactions/{transactional_id}/abort", transactional_id=TXN_ID,
        py=Py("abort_transaction", _by_id, result="error", on_error=_txn_error_name,
              doc="Abort the id's open transaction as the coordinator does on its own, fencing the producer's "
                  "epoch; returns \"NONE\" or the error name (INVALID_TXN_STATE when none is open)."),
        cli=Cli("transaction abort", "transactional_id"))
    def transaction_abort(self, transactional_id: str) -> dict:
        """Abort the id's open transaction as the coordinator does on its own (fencing the epoch)."""
        error = self._hook(self.broker.txn_hooks.abort, transactional_id)
        return self._transaction_result(transactional_id, error)

    @op("POST", "/api/transactions/{transactional_id}/time-out", transactional_id=TXN_ID,
        py=Py("time_out_transaction", _by_id, result="error", on_error=_txn_error_name,
              doc="Make the id's open transaction time out now, whatever the clock; returns the error name."),
        cli=Cli("transaction time-out", "transactional_id"))
    def transaction_time_out(self, transactional_id: str) -> dict:
        """Make the id's open transaction time out now, whatever the clock."""
        error = self._hook(self.broker.txn_hooks.time_out, transactional_id)
        return self._transaction_result(transactional_id, error)

    @op("POST", "/api/transactions/{transactional_id}/fence", transactional_id=TXN_ID,
        py=Py("fence_producer", _by_id, result=_fenced,
              doc="Bump the id's epoch as a new producer instance's InitProducerId would: the running producer "
                  "gets PRODUCER_FENCED. Returns error_code, producer_id, producer_epoch."),
        cli=Cli("transaction fence", "transactional_id"))
    def transaction_fence(self, transactional_id: str) -> dict:
        """Bump the id's epoch as a new producer instance would: the running producer is fenced."""
        result = self._hook(self.broker.txn_hooks.fence, transactional_id)
        return {"error": error_name(result["error_code"]), **self._transaction(transactional_id)}

    def _hook(self, hook, transactional_id: str):
        """A known id's transaction hook run now, the broker ticked after it; the hook's result."""
        self._transaction(transactional_id)
        result = hook(transactional_id, self._now())
        self._tick()
        return result

    def _transaction_result(self, transactional_id: str, error: str) -> dict:
        if error != "NONE":
            raise ControlError(409, f"transactional id {transactional_id!r}: {error}", txn_error=error,
                               current=self._transaction(transactional_id))
        return {"error": error, **self._transaction(transactional_id)}

    @op("POST", "/api/transactions/{transactional_id}/coordinator", transactional_id=TXN_ID,
        node=P(integer(min=0), required=True, help="the new coordinator"),
        py=Py("move_transaction_coordinator", lambda transactional_id, node_id:
              {"transactional_id": transactional_id, "node": node_id}),
        cli=Cli("transaction move-coordinator", "transactional_id", "node"))
    def txn_coordinator_move(self, transactional_id: str, node: int) -> dict:
        """Move a transactional id's coordinator: its __transaction_state partition gets a new
        leader; producers get NOT_COORDINATOR from the old node and find the new one."""
        self._live_target(node)
        index = self.broker.placement.txn_partition(transactional_id)
        epoch = self.broker.placement.move_leader(TRANSACTION_STATE_TOPIC, index, node)
        return {"transactional_id": transactional_id, "coordinator": node, "state_partition": index,
                "leader_epoch": epoch}

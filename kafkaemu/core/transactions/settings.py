"""The transaction coordinator's broker settings (transaction.*, transactional.id.*), as Kafka
4.4's TransactionStateManagerConfig and TransactionLogConfig declare them."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..settings import setting


@dataclass
class TransactionSettings:
    """The transaction coordinator's settings, each with its Kafka name (``transaction.*``, ``transactional.id.*``)."""
    state_log_num_partitions: int = setting(50, "transaction.state.log.num.partitions",
                                            "partitions of __transaction_state", min=1)
    max_timeout_ms: int = setting(900000, "transaction.max.timeout.ms",
                                  "largest transaction timeout a producer may ask for", min=1)
    transactional_id_expiration_ms: int = setting(604800000, "transactional.id.expiration.ms",
                                                  "how long a transactional id without transactions is kept", min=1)
    abort_timed_out_transactions_interval_ms: int = setting(
        10000, "transaction.abort.timed.out.transaction.cleanup.interval.ms",
        "how often transactions open past their timeout are aborted", min=1)
    remove_expired_transactional_ids_interval_ms: int = setting(
        3600000, "transaction.remove.expired.transaction.cleanup.interval.ms",
        "how often expired transactional ids are removed", min=1)
    partition_verification_enable: bool = setting(
        True, "transaction.partition.verification.enable",
        "don't check that a transactional produce or offset commit goes to a partition of the transaction (KIP-890)")
    transaction_version: int = setting(
        2, None, "the finalized transaction.version feature: 2 (a new Kafka 4.x cluster) lets clients use "
                 "transactions V2 (KIP-890 part 2: an epoch bump per transaction, partitions added by the produce "
                 "itself); 0 or 1 keeps them on V1", min=0, max=2)
    CHECKS: ClassVar[tuple] = ()

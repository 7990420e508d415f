"""The feature ranges this broker supports, as ApiVersions advertises and UpdateFeatures checks them:
Kafka 4.4's (``core/features.py``), except that transaction.version 2 (Transactions V2, KIP-890
part 2) is supported only once EndTxn v5, which a V2 client needs, is handled. Until then the
broker supports and finalizes transaction.version up to 1, so no client turns V2 on against a
broker that cannot answer it."""
from ..core.features import KAFKA_4_4, TRANSACTION_VERSION
from ..protocol.api_keys import ApiKey
from .registry import registry

_V2_END_TXN = 5


def supported_ranges() -> dict[str, tuple[int, int]]:
    ranges = {name: (low, high) for name, (low, high, _) in KAFKA_4_4.items()}
    if not registry.supports(ApiKey.END_TXN, _V2_END_TXN):
        ranges[TRANSACTION_VERSION] = (0, 1)
    return ranges

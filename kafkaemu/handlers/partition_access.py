"""Finding a partition and checking a client's leader epoch: shared by the data-path handlers
(Produce, Fetch, ListOffsets, OffsetForLeaderEpoch, DeleteRecords)."""
from ..protocol.errors import ErrorCode


def find_partition(topic, index: int):
    if topic is None or index < 0 or index >= len(topic.partitions):
        return None
    return topic.partitions[index]


def leader_epoch_error(plog, current_leader_epoch: int):
    """Kafka's check of the client's current leader epoch: -1 skips it; older is fenced; newer is unknown."""
    if current_leader_epoch is None or current_leader_epoch < 0 or current_leader_epoch == plog.leader_epoch:
        return ErrorCode.NONE
    if current_leader_epoch < plog.leader_epoch:
        return ErrorCode.FENCED_LEADER_EPOCH
    return ErrorCode.UNKNOWN_LEADER_EPOCH

"""A coordinator write the log refuses for real (a full disk under __consumer_offsets answers
KAFKA_STORAGE_ERROR): OffsetCommit answers NOT_COORDINATOR (GroupCoordinatorService's mapping), the
committed offsets stay what they were, and the commit succeeds once space is back."""
import os

from kafkaemu.protocol.api_keys import ApiKey
from tests.conftest import call, new_broker
from tests.storage.test_storage_faults import fill, small_disk  # noqa: F401 (a fixture)

NOW = 1_700_000_000_000


PARTITIONS = 16


def commit(broker, offset: int) -> set[int]:
    """A commit of every partition, with metadata large enough that its batch needs new disk pages."""
    resp = call(broker, ApiKey.OFFSET_COMMIT, 8, {
        "group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
        "topics": [{"name": "t", "partitions": [{"partition_index": p, "committed_offset": offset,
                                                 "committed_leader_epoch": -1, "committed_metadata": "m" * 4000}
                                                for p in range(PARTITIONS)]}]},
        now_ms=NOW)
    return {p.error_code for p in resp.topics[0].partitions}


def committed(broker) -> int:
    resp = call(broker, ApiKey.OFFSET_FETCH, 7, {"group_id": "g", "require_stable": False,
                                                 "topics": [{"name": "t", "partition_indexes": [0]}]}, now_ms=NOW)
    return resp.topics[0].partitions[0].committed_offset


def test_a_commit_the_disk_refuses_answers_not_coordinator_and_changes_nothing(small_disk):  # noqa: F811
    broker = new_broker(NOW, topics={"t": PARTITIONS}, data_dir=str(small_disk / "data"))
    assert commit(broker, 5) == {0} and committed(broker) == 5
    fill(small_disk / "filler")
    assert commit(broker, 9) == {16}         # NOT_COORDINATOR: the client looks the coordinator up again
    assert committed(broker) == 5
    os.unlink(small_disk / "filler")
    assert commit(broker, 9) == {0} and committed(broker) == 9

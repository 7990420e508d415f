"""Abandoned groups give their __consumer_offsets memory back: once their offsets expire the
coordinator writes tombstones, and compaction removes the superseded records and, after
delete.retention.ms, the tombstones, however small the dirty part of the log is (KIP-534)."""
from tests.control.harness import Env, assignment


def test_expired_groups_are_compacted_away_after_delete_retention():
    env = Env(offsets_retention_minutes=10, offsets_retention_check_interval_ms=60_000,
              log_cleaner_backoff_ms=15_000)
    env.broker.topics.create("t", 4, {})
    for i in range(100):
        group = f"abandoned-{i}"
        client = env.client("c", env.broker.placement.group_coordinator(group))
        client.join(group)
        member = client.replies()[-1].member_id
        client.join(group, member)
        generation = client.replies()[-1].generation_id
        client.sync(group, generation, member, {member: assignment({"t": [0, 1, 2, 3]})})
        for k in range(5):
            assert client.commit(group, "t", {p: k for p in range(4)}, generation, member).topics[0] \
                .partitions[0].error_code == 0
    offsets = env.broker.store.get("__consumer_offsets")

    def stored() -> int:
        return sum(p.size_bytes for p in offsets.partitions)

    env.op("clock_advance", ms=20_000)            # sessions expire: the groups are empty
    for _ in range(20):                           # their offsets expire: tombstones
        env.op("clock_advance", ms=60_000)
    after_expiry = stored()
    for _ in range(26):                           # past delete.retention.ms (a day)
        env.op("clock_advance", ms=3_600_000)
    # what is left: at most each partition's newest batch, which the cleaner never touches
    assert stored() < after_expiry / 10
    assert sum(p.batch_count for p in offsets.partitions) <= len(offsets.partitions)

"""Transactions over several emulated nodes: the transaction coordinator is the leader of the
transactional id's __transaction_state partition; when it moves mid-stream (a leader election),
the producer finds the new one and carries on, and every committed record is there once."""
from __future__ import annotations

from confluent_kafka import Producer

from kafkaemu.core.placement import partition_for
from kafkaemu.testing import KafkaEmulator

from .txn_clients import read_to_sentinels, unique, write_sentinels


def test_the_transaction_coordinator_moves_mid_stream_and_the_producer_carries_on():
    topic, tid = unique("txn-move"), unique("move-tid")
    with KafkaEmulator(nodes=3) as cluster:
        cluster.call(lambda b: b.topics.create(topic, 3, {}))
        bootstrap = cluster.bootstrap_servers
        txn_partition = partition_for(tid, 50)
        first = txn_partition % 3
        assert cluster.call(lambda b: b.placement.txn_coordinator(tid)) == first
        p = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid, "linger.ms": 1})
        p.init_transactions(30)
        for n in range(10):
            if n == 4:   # the coordinator moves between transactions
                cluster.move_leader("__transaction_state", txn_partition, (first + 1) % 3)
            p.begin_transaction()
            for i in range(10):
                p.produce(topic, value=b"%d-%d" % (n, i), partition=i % 3)
                if n == 7 and i == 4:   # the coordinator and a data partition move mid-transaction
                    p.flush(30)
                    cluster.move_leader("__transaction_state", txn_partition, (first + 2) % 3)
                    cluster.move_leader(topic, 0, (cluster.call(lambda b: b.placement.partition_leader(
                        b.store.get(topic).partitions[0])) + 1) % 3)
            p.commit_transaction(30)
        assert cluster.call(lambda b: b.placement.txn_coordinator(tid)) == (first + 2) % 3
        write_sentinels(bootstrap, topic, 3)
        values = [v for _, _, _, v in read_to_sentinels(bootstrap, topic, 3, "read_committed")]
        assert sorted(values) == sorted(b"%d-%d" % (n, i) for n in range(10) for i in range(10))
        commits = [t for t in cluster.transaction_transitions(tid) if t.to_state.value == "CompleteCommit"]
        assert len(commits) == 10

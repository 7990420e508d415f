"""The transaction test hooks over the HTTP control API, against a subprocess emulator: a
confluent-kafka transaction held so the last stable offset stays pinned, then released; one
aborted by the control; a producer fenced; unknown ids and bad calls answered with 4xx."""
from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from confluent_kafka import KafkaException, Producer

from kafkaemu.testing import KafkaEmulator

from .txn_clients import unique


@pytest.fixture(scope="module")
def emulator():
    with KafkaEmulator(subprocess_mode=True, control_port=0) as kafka:
        yield kafka


def http(emulator, method: str, path: str, body: dict | None = None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(emulator.control_url + path, data=data, method=method,
                                 headers={} if data is None else {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def producer(emulator, tid):
    p = Producer({"bootstrap.servers": emulator.bootstrap_server, "transactional.id": tid, "linger.ms": 1})
    p.init_transactions(30)
    return p


def partition_view(emulator, topic):
    status, got = http(emulator, "GET", f"/api/topics/{topic}")
    assert status == 200, got
    (partition,) = got["partitions"]
    return partition["high_watermark"], partition["last_stable_offset"]


def test_a_held_commit_pins_the_last_stable_offset_until_released(emulator):
    topic, tid = unique("held"), unique("tid")
    emulator.create_topic(topic, partitions=1)
    p = producer(emulator, tid)
    assert http(emulator, "POST", f"/api/transactions/{tid}/hold")[0] == 200
    p.begin_transaction()
    for i in range(3):
        p.produce(topic, value=b"v%d" % i, partition=0)
    p.commit_transaction(30)            # answered: the markers are what is held back
    status, state = http(emulator, "GET", f"/api/transactions/{tid}")
    assert (status, state["state"], state["held"]) == (200, "PrepareCommit", True)
    assert partition_view(emulator, topic) == (3, 0)
    status, released = http(emulator, "POST", f"/api/transactions/{tid}/release")
    assert (status, released["completed"], released["state"]) == (200, True, "CompleteCommit")
    assert partition_view(emulator, topic) == (4, 4)   # the commit marker at offset 3


def test_the_control_aborts_an_open_transaction_and_fences_its_producer(emulator):
    topic, tid = unique("aborted"), unique("tid")
    emulator.create_topic(topic, partitions=1)
    p = producer(emulator, tid)
    p.begin_transaction()
    p.produce(topic, value=b"doomed", partition=0)
    p.flush(30)
    assert emulator.transaction_state(tid)["state"] == "Ongoing"
    assert emulator.abort_transaction(tid) == "NONE"        # the Python API, over HTTP in subprocess mode
    assert emulator.transaction_state(tid)["state"] == "CompleteAbort"
    with pytest.raises(KafkaException):
        p.commit_transaction(30)
    assert partition_view(emulator, topic) == (2, 2)         # the record and its abort marker
    assert emulator.abort_transaction(tid) == "INVALID_TXN_STATE"   # nothing open any more


def test_fencing_and_bad_calls(emulator):
    tid = unique("tid")
    p = producer(emulator, tid)
    epoch = emulator.transaction_state(tid)["producer_epoch"]
    fenced = emulator.fence_producer(tid)
    assert (fenced["error_code"], fenced["producer_epoch"]) == (0, epoch + 1)
    with pytest.raises(KafkaException):
        p.begin_transaction()
        p.produce(unique("t"), value=b"x")
        p.commit_transaction(10)
    assert emulator.transaction_state("no-such-id") is None
    status, got = http(emulator, "POST", "/api/transactions/no-such-id/abort")
    assert status == 404 and "no-such-id" in got["error"]
    status, got = http(emulator, "POST", f"/api/transactions/{tid}/coordinator", {"node": 7})
    assert status == 404, got

"""A deleted topic's batches are freed when it is deleted, not when a cyclic garbage collection
happens to find the topic (a partition log and its topic refer to each other): a server that
deletes 100 MB of topics gives that memory back to its allocator at once. tracemalloc counts what
Python holds; the cyclic collector is off while the test measures."""
import gc
import tracemalloc

import pytest

from kafkaemu.storage.record_batch import build_batch
from tests.conftest import T0, new_broker

MB = 1 << 20


@pytest.fixture
def no_cyclic_gc():
    gc.collect()
    gc.disable()
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()
        gc.enable()


def _fill(broker, name: str, mb: int) -> None:
    topic = broker.topics.create(name, 2, {})
    for i in range(mb):
        value = bytes([i % 256]) * (MB // 2)   # stored uncompressed: the bytes stay in the log
        assert topic.partitions[i % 2].append(build_batch([(None, value, [], T0)]), T0).error == "NONE"


@pytest.mark.parametrize("data_dir", [False, True], ids=["memory", "data-dir"])
def test_deleting_a_topic_frees_its_batches_at_once(no_cyclic_gc, tmp_path, data_dir):
    broker = new_broker(T0, **({"data_dir": str(tmp_path)} if data_dir else {}))
    before = tracemalloc.get_traced_memory()[0]
    _fill(broker, "big", 16)
    held = tracemalloc.get_traced_memory()[0] - before
    broker.topics.delete("big")
    after = tracemalloc.get_traced_memory()[0] - before
    if not data_dir:
        assert held > 7 * MB     # the batches themselves (16 of half a megabyte)
    # what is left of the topic is bookkeeping, not its records
    assert after < MB, f"{after / MB:.1f} MiB still held of {held / MB:.1f} MiB"

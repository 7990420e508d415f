"""Records in and out of a topic without a Kafka client: ``kafkaemu ctl produce`` / ``consume`` and
the control API's ``/api/topics/{topic}/records`` from curl, against a ``kafkaemu serve`` child
process; what they write is what a real client reads, and the other way round. Also the ctl's exit
statuses for Ctrl-C and for a reader that stops early."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from kafkaemu.control.operations.records import partition_for_key
from kafkaemu.testing import KafkaEmulator
from kafkaemu.testing.raw_client import api_versions_frame, connect, read_reply

COUNT = 1000


@pytest.fixture(scope="module")
def served():
    with KafkaEmulator(subprocess_mode=True) as e:
        yield e


def ctl(emulator, *args, stdin=None):
    return subprocess.run([sys.executable, "-m", "kafkaemu", "ctl", "--url", emulator.control_url, *args],
                          input=stdin, capture_output=True, text=True, timeout=120)


def fresh_topic(emulator, partitions=3) -> str:
    name = f"records-{uuid.uuid4().hex[:8]}"
    emulator.create_topic(name, partitions)
    return name


def expected_records():
    return [(f"key-{i}", f"value {i} ünïcode") for i in range(COUNT)]


def check_round_trip(read: list[dict], partitions: int = 3) -> None:
    """Every record once, each in its key's partition (Kafka's partitioner), in order there, with both headers."""
    assert len(read) == COUNT
    by_key = {r["key"]: r for r in read}
    for key, value in expected_records():
        record = by_key[key]
        assert record["value"] == value
        assert record["headers"] == [["trace", "t-1"], ["source", "ctl"]]
        assert record["partition"] == partition_for_key(key.encode(), partitions)
    for p in range(partitions):
        offsets = [r["offset"] for r in read if r["partition"] == p]
        assert offsets == list(range(len(offsets)))


def test_ctl_produce_then_consume_round_trips_1000_records_with_keys_and_headers(served):
    topic = fresh_topic(served)
    lines = "".join(f"{k}\t{v}\n" for k, v in expected_records())
    produced = ctl(served, "produce", topic, "--key-separator", "\t", "--header", "trace=t-1", "--header",
                   "source=ctl", stdin=lines)
    assert produced.returncode == 0, produced.stderr
    assert produced.stdout.splitlines()[0].split() == ["PARTITION", "RECORDS", "FIRST-OFFSET", "LAST-OFFSET"]
    consumed = ctl(served, "consume", topic, "--json")
    assert consumed.returncode == 0, consumed.stderr
    read = [json.loads(line) for line in consumed.stdout.splitlines()]
    check_round_trip(read)

    # a real client reads the same records, headers as bytes
    consumer = KafkaConsumer(bootstrap_servers=served.bootstrap_server, auto_offset_reset="earliest",
                             consumer_timeout_ms=10000)
    try:
        consumer.assign([TopicPartition(topic, p) for p in range(3)])
        seen = {}
        for record in consumer:
            seen[record.key.decode()] = (record.partition, record.value.decode(), record.headers)
            if len(seen) == COUNT:
                break
    finally:
        consumer.close()
    assert seen == {r["key"]: (r["partition"], r["value"], [("trace", b"t-1"), ("source", b"ctl")]) for r in read}


def test_consume_prints_a_table_from_an_offset_or_the_end_and_a_limit(served):
    topic = fresh_topic(served, partitions=1)
    assert ctl(served, "produce", topic, "a", "b", "c", "--key", "k", "--header", "h=1").returncode == 0
    shown = ctl(served, "consume", topic, "--offset", "1")
    assert [line.split() for line in shown.stdout.splitlines()] == [
        ["PARTITION", "OFFSET", "KEY", "VALUE", "HEADERS"], ["0", "1", "k", "b", "h=1"], ["0", "2", "k", "c", "h=1"]]
    last = ctl(served, "consume", topic, "--offset", "-1", "--json")
    assert [json.loads(line)["value"] for line in last.stdout.splitlines()] == ["c"]
    assert ctl(served, "consume", topic, "--offset", "end").stdout == ""
    assert [json.loads(line)["offset"] for line in ctl(served, "consume", topic, "--limit", "2",
                                                          "--json").stdout.splitlines()] == [0, 1]


def test_consume_as_a_group_commits_and_resumes_where_it_stopped(served):
    topic, group = fresh_topic(served, partitions=2), f"ctl-group-{uuid.uuid4().hex[:6]}"
    values = [str(i) for i in range(10)]
    assert ctl(served, "produce", topic, *values, "--partition", "1").returncode == 0
    first = ctl(served, "consume", topic, "--group", group, "--limit", "4", "--json")
    assert [json.loads(line)["value"] for line in first.stdout.splitlines()] == values[:4]
    rest = ctl(served, "consume", topic, "--group", group, "--json")
    assert [json.loads(line)["value"] for line in rest.stdout.splitlines()] == values[4:]
    assert ctl(served, "consume", topic, "--group", group).stdout == ""
    committed = {(o["topic"], o["partition"]): o["committed_offset"] for o in served.group(group)["offsets"]}
    assert committed[(topic, 1)] == 10
    # the broker's committed offset, as a kafka-python member of the group reads it
    consumer = KafkaConsumer(bootstrap_servers=served.bootstrap_server, group_id=group, enable_auto_commit=False)
    try:
        assert consumer.committed(TopicPartition(topic, 1)) == 10
    finally:
        consumer.close()


def test_records_a_client_produced_are_read_by_ctl_in_base64(served):
    topic = fresh_topic(served, partitions=1)
    producer = KafkaProducer(bootstrap_servers=served.bootstrap_server)
    producer.send(topic, key=b"\x00\xff", value=b"\x01\x02", headers=[("bin", b"\xfe")]).get(timeout=30)
    producer.send(topic, value=None, key=b"tombstone").get(timeout=30)
    producer.close()
    read = [json.loads(line) for line in ctl(served, "consume", topic, "--base64", "--json").stdout.splitlines()]
    assert [(r["key"], r["value"], r["headers"]) for r in read] == [("AP8=", "AQI=", [["bin", "/g=="]]),
                                                                    ("dG9tYnN0b25l", None, [])]


def test_bad_produce_and_consume_calls_are_refused_with_nothing_appended(served):
    topic = fresh_topic(served, partitions=2)
    wrong = ctl(served, "produce", topic, "x", "--partition", "2")
    assert wrong.returncode == 1 and f"{topic} has no partition 2 (it has 2)" in wrong.stderr
    served.create_topic(compacted := f"compacted-{uuid.uuid4().hex[:6]}", 1, configs={"cleanup.policy": "compact"})
    unkeyed = ctl(served, "produce", compacted, "x")
    assert unkeyed.returncode == 1 and "has no key" in unkeyed.stderr
    assert ctl(served, "produce", topic, "no-separator", "--key-separator", ":").returncode != 0
    missing = ctl(served, "consume", "no-such-topic-here")
    assert missing.returncode == 1 and "no topic 'no-such-topic-here'" in missing.stderr
    assert all(p["high_watermark"] == 0 for p in served.topic(topic)["partitions"])
    assert served.topic(compacted)["partitions"][0]["high_watermark"] == 0


def curl(*args, data=None) -> dict:
    done = subprocess.run(["curl", "-sS", "--fail-with-body", *args] + (["--data-binary", "@-"] if data else []),
                          input=data, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, (done.stdout, done.stderr)
    return json.loads(done.stdout)


def test_curl_round_trips_1000_records_with_keys_and_headers(served):
    if shutil.which("curl") is None:
        pytest.skip("needs curl")
    topic = fresh_topic(served)
    body = json.dumps({"records": [{"key": k, "value": v} for k, v in expected_records()],
                       "headers": {"trace": "t-1", "source": "ctl"}})
    placed = curl("-H", "Content-Type: application/json", f"{served.control_url}/api/topics/{topic}/records",
                  data=body)
    assert [r["partition"] for r in placed["records"]] == [partition_for_key(k.encode(), 3)
                                                           for k, _ in expected_records()]
    read = curl(f"{served.control_url}/api/topics/{topic}/records?limit=5000")
    check_round_trip(read["records"])
    assert sum(n["offset"] for n in read["next_offsets"]) == COUNT
    refused = subprocess.run(["curl", "-sS", "-w", "%{http_code}", "-o", "/dev/null", "-H",
                              "Content-Type: application/json", "--data-binary", '{"records": "nope"}',
                              f"{served.control_url}/api/topics/{topic}/records"],
                             capture_output=True, text=True, timeout=60)
    assert refused.stdout == "400"


def _connected_to(pid: int, port: int) -> bool:
    """Whether process ``pid`` has a TCP connection to ``port`` on loopback (Linux /proc)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[9] in inodes and int(fields[2].rsplit(":", 1)[1], 16) == port and fields[3] == "01":
                return True
    return False


def test_ctrl_c_during_an_await_exits_130(served):
    if not Path("/proc/net/tcp").exists():
        pytest.skip("needs Linux's /proc to see the await's connection")
    port = int(served.control_url.rsplit(":", 1)[1])
    proc = subprocess.Popen([sys.executable, "-m", "kafkaemu", "ctl", "--url", served.control_url, "await", "group",
                             "never-formed", "--state", "Stable", "--timeout", "60s"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not _connected_to(proc.pid, port):   # the await is in flight
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in err
    chained = subprocess.run(["bash", "-c", f"{sys.executable} -m kafkaemu ctl --url {served.control_url} await "
                              f"group never-formed --timeout 100ms && echo carried-on"],
                             capture_output=True, text=True, timeout=60)
    assert chained.returncode == 1 and "carried-on" not in chained.stdout


def test_ctl_requests_piped_to_head_ends_quietly(served):
    served.enable_request_log()
    with connect(served) as sock:   # enough logged requests to fill the pipe head stops reading
        sock.sendall(b"".join(api_versions_frame(correlation_id=i) for i in range(2000)))
        for _ in range(2000):
            read_reply(sock)
    done = subprocess.run(["bash", "-c", f"{sys.executable} -m kafkaemu ctl --url {served.control_url} requests "
                                         f"--last 2000 | head -1; echo \"statuses ${{PIPESTATUS[*]}}\""],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert done.stdout.splitlines()[0].split()[:3] == ["SEQ", "TIME", "NODE"]
    assert done.stdout.splitlines()[-1] == "statuses 141 0"   # the ctl ends as SIGPIPE ends a tool; head's 0
    assert done.stderr == ""

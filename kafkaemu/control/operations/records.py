"""Records: put records into a topic and read them back without a Kafka client (``kafkaemu ctl
produce`` / ``consume``, ``POST``/``GET /api/topics/{topic}/records``), so a test in any language
can seed a topic and check what an application wrote.

Records are appended as a producer without idempotence would append them (the topic's
``max.message.bytes``, its compaction's need of keys), keyed records to the partition Kafka's
default partitioner picks (murmur2 of the key), unkeyed ones to one partition per call, in turn.
Reading is read_uncommitted, as kcat and the console consumer read by default; control batches
(transaction markers) are not records and are skipped. Keys, values and header values are UTF-8
text, or base64 with ``encoding=base64``."""
from __future__ import annotations

import base64
import binascii
import itertools

from ...storage.record_batch import build_batch, iter_records, parse_header
from ..params import ControlError, bad, choice, integer, text
from ..table import Cli, P, Py, op
from .base import ControlBase

MAX_RECORDS = 100_000          # per call, either way: bounded work on the broker's loop
READ_BYTES = 1 << 20           # one read of a partition's log
_RECORD_OVERHEAD = 32          # a record's own fields (length, attributes, deltas, counts) at most


def murmur2(data: bytes) -> int:
    """Kafka's ``Utils.murmur2`` (32-bit MurmurHash2, seed 0x9747b28c), as a signed int."""
    m, r = 0x5BD1E995, 24
    length = len(data)
    h = (0x9747B28C ^ length) & 0xFFFFFFFF
    whole = length - length % 4
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> r
        k = (k * m) & 0xFFFFFFFF
        h = ((h * m) & 0xFFFFFFFF) ^ k
    tail = length % 4
    if tail >= 3:
        h ^= data[whole + 2] << 16
    if tail >= 2:
        h ^= data[whole + 1] << 8
    if tail >= 1:
        h ^= data[whole]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def partition_for_key(key: bytes, partitions: int) -> int:
    """Kafka's ``BuiltInPartitioner.partitionForKey``: ``toPositive(murmur2(key)) % partitions``."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


# -- parameters -----------------------------------------------------------------------------------
def _headers(name: str, value) -> list[tuple[str, object]]:
    """Headers as ``{"name": "value"}`` or ``[["name", "value"], ...]`` (a name may repeat)."""
    pairs = list(value.items()) if isinstance(value, dict) else value
    if not isinstance(pairs, list) or not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in pairs):
        raise bad(f"{name} must be an object of header values or a list of [name, value] pairs, got {value!r}")
    for key, val in pairs:
        if not isinstance(key, str) or not (val is None or isinstance(val, str)):
            raise bad(f"{name}: a header's name is a string and its value a string or null, got {[key, val]!r}")
    return [(k, v) for k, v in pairs]


_headers.kind = "mapping"


def _records(name: str, value) -> list[dict]:
    """Each record a string (its value) or an object with ``value``, ``key``, ``headers`` and
    ``partition``, any of which may be left out."""
    if not isinstance(value, list):
        raise bad(f"{name} must be a list of records (strings or objects), got {type(value).__name__}")
    if len(value) > MAX_RECORDS:
        raise bad(f"{name}: at most {MAX_RECORDS} records a call, got {len(value)}")
    out = []
    for i, record in enumerate(value):
        if isinstance(record, str) or record is None:
            record = {"value": record}
        if not isinstance(record, dict):
            raise bad(f"{name}[{i}] must be a string or an object, got {record!r}")
        unknown = sorted(set(record) - {"key", "value", "headers", "partition"})
        if unknown:
            raise bad(f"{name}[{i}]: unknown field(s) {', '.join(unknown)} (a record has key, value, headers, "
                      f"partition)")
        for field in ("key", "value"):
            if record.get(field) is not None and not isinstance(record[field], str):
                raise bad(f"{name}[{i}].{field} must be a string or null, got {record[field]!r}")
        checked = {"key": record.get("key"), "value": record.get("value"), "headers": None, "partition": None}
        if record.get("headers") is not None:
            checked["headers"] = _headers(f"{name}[{i}].headers", record["headers"])
        if record.get("partition") is not None:
            checked["partition"] = integer(min=0)(f"{name}[{i}].partition", record["partition"])
        out.append(checked)
    return out


def _start(name: str, value) -> int | str:
    """``beginning``, ``end`` or an offset (a negative one counts back from the end, as kcat's)."""
    if isinstance(value, str) and value.strip().lower() in ("beginning", "end", "earliest", "latest"):
        return {"earliest": "beginning", "latest": "end"}.get(value.strip().lower(), value.strip().lower())
    try:
        return integer()(name, value)
    except ControlError:
        raise bad(f"{name} must be beginning, end or an offset, got {value!r}") from None


_ENCODINGS = ("text", "base64")


def _decode(field: str, value: str | None, encoding: str) -> bytes | None:
    if value is None:
        return None
    if encoding == "text":
        return value.encode()
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise bad(f"{field} is not base64: {value[:40]!r}") from None


def _encode(data: bytes | None, encoding: str) -> str | None:
    if data is None:
        return None
    data = bytes(data)
    return data.decode("utf-8", "replace") if encoding == "text" else base64.b64encode(data).decode()


class RecordOps(ControlBase):
    _unkeyed_turn = itertools.count()

    @op("POST", "/api/topics/{topic}/records", topic=P(text, required=True, help="the topic's name"),
        records=P(_records, required=True,
                  help="the records: each a string (its value) or {key, value, headers, partition}"),
        key=P(text, help="the key of every record that gives none"),
        headers=P(_headers, help="headers of every record that gives none ({name: value}; ctl: --header NAME=VALUE)"),
        partition=P(integer(min=0), help="the partition of every record that gives none (default: by key, "
                                         "as Kafka's partitioner)"),
        encoding=P(choice(*_ENCODINGS), default="text", help="text (UTF-8) or base64 keys, values and headers"),
        py=Py("produce", lambda topic, records, *, key=None, headers=None, partition=None, encoding="text":
              {"topic": topic, "records": records, "key": key, "headers": headers, "partition": partition,
               "encoding": encoding}),
        cli=False)
    def records_produce(self, topic: str, records: list[dict], key: str | None, headers: list | None,
                        partition: int | None, encoding: str) -> dict:
        """Append records to a topic (created as a producer's first record creates it, when topics
        are auto-created), keyed ones to the partition Kafka's default partitioner picks.

        Answers each record's partition and offset, in the order given. Nothing is appended when
        any record is refused."""
        t = self.broker.store.get(topic)
        if t is None:
            if not self.broker.config.auto_create_topics:
                raise ControlError(404, f"no topic {topic!r} (and topics are not auto-created)")
            from ...storage.log_store import TopicError
            try:
                t = self.broker.topics.create(topic, self.broker.config.num_partitions, {})
            except TopicError as exc:
                raise bad(str(exc)) from None
        if t.internal:
            raise ControlError(409, f"{topic} is internal")
        count = len(t.partitions)
        unkeyed = next(self._unkeyed_turn) % count
        compacted = "compact" in t.configs.get("cleanup.policy", "delete")
        max_bytes = int(t.configs.get("max.message.bytes", self.broker.config.message_max_bytes))
        now = self._now()
        by_partition: dict[int, list[tuple[int, tuple]]] = {}
        for i, r in enumerate(records):
            k = _decode(f"records[{i}].key", r["key"] if r["key"] is not None else key, encoding)
            v = _decode(f"records[{i}].value", r["value"], encoding)
            hs = [(name, _decode(f"records[{i}].headers.{name}", val, encoding))
                  for name, val in (r["headers"] if r["headers"] is not None else headers or [])]
            p = r["partition"] if r["partition"] is not None else partition
            if p is None:
                p = unkeyed if k is None else partition_for_key(k, count)
            if p >= count:
                raise bad(f"records[{i}]: {topic} has no partition {p} (it has {count})")
            if compacted and k is None:
                raise bad(f"records[{i}] has no key: {topic} is compacted (cleanup.policy {t.configs['cleanup.policy']})")
            by_partition.setdefault(p, []).append((i, (k, v, hs, now)))
        offline = sorted(p for p in by_partition if self.broker.placement.partition_leader(t.partitions[p]) < 0)
        if offline:   # a producer gets no leader for them either
            raise ControlError(409, f"{topic} partition(s) {', '.join(map(str, offline))} have no leader "
                                    f"(its node is stopped)")
        batches = []
        for p, entries in by_partition.items():
            for chunk in _chunks(entries, max_bytes):
                batch = build_batch([record for _, record in chunk])
                if len(batch) > max_bytes:
                    raise bad(f"records[{chunk[0][0]}] is larger than {topic}'s max.message.bytes ({max_bytes})")
                batches.append((p, [i for i, _ in chunk], batch))
        placed: list[dict | None] = [None] * len(records)
        for p, indexes, batch in batches:
            result = t.partitions[p].append(batch, now, max_message_bytes=max_bytes)
            if result.error != "NONE":   # checked above; a refusal here is a bug, not the caller's
                raise ControlError(500, f"{topic}-{p} refused the records: {result.error} {result.message or ''}")
            for delta, i in enumerate(indexes):
                placed[i] = {"partition": p, "offset": result.base_offset + delta}
        return {"topic": topic, "records": placed}

    @op("GET", "/api/topics/{topic}/records", topic=P(text, required=True, help="the topic's name"),
        partition=P(integer(min=0), help="only this partition (default: all)"),
        offset=P(_start, default="beginning", help="beginning, end or an offset (negative: that many before the "
                                                   "end) in each partition read"),
        limit=P(integer(min=1, max=MAX_RECORDS), default=1000, help="at most this many records"),
        group=P(text, help="start from this group's committed offsets (where it has none: from offset)"),
        encoding=P(choice(*_ENCODINGS), default="text", help="text (UTF-8) or base64 keys, values and headers"),
        py=Py("read_records", lambda topic, *, partition=None, offset="beginning", limit=1000, group=None,
              encoding="text": {"topic": topic, "partition": partition, "offset": offset, "limit": limit,
                                "group": group, "encoding": encoding}),
        cli=False)
    def records_read(self, topic: str, partition: int | None, offset, limit: int, group: str | None,
                     encoding: str) -> dict:
        """Read a topic's records up to the high watermark, partition by partition, without
        committing anything.

        Answers the records (partition, offset, timestamp, key, value, headers) and, per partition,
        the offset to read from next."""
        return self._read(topic, partition, offset, limit, group, encoding)

    @op("POST", "/api/groups/{group}/consume", group=P(text, required=True, help="the consumer group"),
        topic=P(text, required=True, help="the topic's name"),
        partition=P(integer(min=0), help="only this partition (default: all)"),
        offset=P(_start, default="beginning", help="where a partition the group has no offset for starts: "
                                                   "beginning, end or an offset"),
        limit=P(integer(min=1, max=MAX_RECORDS), default=1000, help="at most this many records"),
        encoding=P(choice(*_ENCODINGS), default="text", help="text (UTF-8) or base64 keys, values and headers"),
        py=Py("consume", lambda group, topic, *, partition=None, offset="beginning", limit=1000, encoding="text":
              {"group": group, "topic": topic, "partition": partition, "offset": offset, "limit": limit,
               "encoding": encoding}, result="records"),
        cli=False)
    def records_consume(self, group: str, topic: str, partition: int | None, offset, limit: int,
                        encoding: str) -> dict:
        """Read as a consumer group would: from the group's committed offsets, then commit the
        offsets after the records read, as a consumer that is not a member commits them (refused
        while the group has members).

        Answers what reading answers."""
        result = self._read(topic, partition, offset, limit, group, encoding)
        from ...core.offsets.requests import CommitPartition, OffsetCommit
        commits = [CommitPartition(n["partition"], n["offset"], -1, "") for n in result["next_offsets"]]
        if commits:
            answer = self.broker.coordinator.commit_offsets(self._now(), OffsetCommit(group, [(topic, commits)]))
            errors = {p["partition_index"]: p["error_code"] for t in answer["topics"] for p in t["partitions"]
                      if p["error_code"]}
            if errors:
                from ...broker.intercept import error_name
                raise ControlError(409, f"group {group!r} did not take the commit: "
                                        + ", ".join(f"{topic}-{p} {error_name(e)}" for p, e in sorted(errors.items())),
                                   errors={str(p): error_name(e) for p, e in errors.items()})
        return result

    def _read(self, topic: str, partition: int | None, offset, limit: int, group: str | None, encoding: str) -> dict:
        t = self._topic(topic)
        if partition is not None and partition >= len(t.partitions):
            raise ControlError(404, f"{topic} has no partition {partition} (it has {len(t.partitions)})")
        records, next_offsets = [], []
        for plog in t.partitions if partition is None else [t.partitions[partition]]:
            position = self._position(plog, offset, group, topic)
            end = plog.high_watermark
            while position < end and len(records) < limit:
                batches = plog.read(position, READ_BYTES)
                if not batches:
                    break
                for batch in batches:
                    header = parse_header(batch)
                    for record in () if header.is_control else iter_records(batch):
                        if record.offset < position:
                            continue
                        if len(records) >= limit:
                            break
                        records.append({"partition": plog.index, "offset": record.offset,
                                        "timestamp": record.timestamp, "key": _encode(record.key, encoding),
                                        "value": _encode(record.value, encoding),
                                        "headers": [[k, _encode(v, encoding)] for k, v in record.headers]})
                        position = record.offset + 1
                    else:   # the whole batch read: on past its last offset (markers, compacted gaps)
                        position = max(position, header.last_offset + 1)
                        continue
                    break
            next_offsets.append({"partition": plog.index, "offset": position, "high_watermark": end})
        return {"topic": topic, "records": records, "next_offsets": next_offsets}

    def _position(self, plog, offset, group: str | None, topic: str) -> int:
        if group is not None:
            committed = self.broker.coordinator.offsets.store.get(group, topic, plog.index)
            if committed is not None and committed.offset >= 0:
                return max(committed.offset, plog.log_start_offset)
        if offset == "beginning":
            return plog.log_start_offset
        if offset == "end":
            return plog.high_watermark
        if offset < 0:
            return max(plog.log_start_offset, plog.high_watermark + offset)
        return max(offset, plog.log_start_offset)


def _chunks(entries: list, max_bytes: int):
    """Records in batches that each stay under ``max_bytes`` (one record may be a batch alone)."""
    chunk, size = [], 61   # a batch's header
    for entry in entries:
        key, value, headers, _ = entry[1]
        length = _RECORD_OVERHEAD + len(key or b"") + len(value or b"") \
            + sum(len(k.encode()) + len(v or b"") + 10 for k, v in headers)
        if chunk and size + length > max_bytes:
            yield chunk
            chunk, size = [], 61
        chunk.append(entry)
        size += length
    if chunk:
        yield chunk

"""``kafkaemu ctl produce`` and ``consume``: records in and out of a topic from the shell, over the
control API's record operations (control/operations/records.py).

    kafkaemu ctl produce orders one two three
    printf 'k1:v1\\nk2:v2\\n' | kafkaemu ctl produce orders --key-separator :
    kafkaemu ctl consume orders --offset beginning
    kafkaemu ctl consume orders --group billing --json

``produce`` takes values as arguments or, without any, one per line of stdin; ``consume`` prints a
table (``--json``: one JSON object per record and line) and reads to the end of each partition as
it was when the command started, or ``--limit`` records."""
from __future__ import annotations

import argparse
import json
import sys

from .render import table

# Records per request: keeps a request's body well under the control API's 1 MiB.
PRODUCE_BATCH_RECORDS = 2000
PRODUCE_BATCH_BYTES = 512 * 1024
READ_PAGE = 10_000


def add_commands(subparsers) -> None:
    produce = subparsers.add_parser(
        "produce", help="append records to a topic (values as arguments or stdin lines)",
        description="Append records to a topic: each VALUE is one record's value; without any, each line of "
                    "stdin is one. Keyed records go to the partition Kafka's default partitioner picks. "
                    "Prints each record's partition and offset (--json: the API's answer).")
    produce.add_argument("topic", metavar="TOPIC")
    produce.add_argument("values", metavar="VALUE", nargs="*", help="record values (default: stdin, one per line)")
    produce.add_argument("--key", help="the key of every record")
    produce.add_argument("--key-separator", metavar="SEP",
                         help="each value is KEY<SEP>VALUE (as kafka-console-producer's key.separator, kcat -K)")
    produce.add_argument("--header", action="append", default=[], metavar="NAME=VALUE",
                         help="a header of every record (repeatable)")
    produce.add_argument("--partition", type=int, help="the partition (default: by key, as Kafka's partitioner)")
    produce.add_argument("--base64", action="store_true", help="keys, values and header values are base64")
    produce.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print the API's JSON answer")
    produce.set_defaults(_run=run_produce)

    consume = subparsers.add_parser(
        "consume", help="print a topic's records (table, or JSON lines with --json)",
        description="Print a topic's records, partition by partition, up to each partition's end when the command "
                    "started. With --group, start from the group's committed offsets and commit after the records "
                    "read (as a consumer that is not a member of the group).")
    consume.add_argument("topic", metavar="TOPIC")
    consume.add_argument("--partition", type=int, help="only this partition (default: all)")
    consume.add_argument("--offset", default="beginning",
                         help="beginning, end, or an offset (negative: that many before the end); with --group, "
                              "where a partition without a committed offset starts (default: beginning)")
    consume.add_argument("--limit", type=int, help="at most this many records (default: all)")
    consume.add_argument("--group", help="read as this consumer group, committing the offsets read")
    consume.add_argument("--base64", action="store_true", help="print keys, values and header values as base64")
    consume.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                         help="one JSON object per record and line")
    consume.set_defaults(_run=run_consume)


# -- produce --------------------------------------------------------------------------------------
def produce_records(args) -> list:
    values = args.values if args.values else [line.rstrip("\r\n") for line in sys.stdin]
    if args.key_separator is None:
        return values
    records = []
    for value in values:
        key, sep, rest = value.partition(args.key_separator)
        if not sep:
            raise SystemExit(f"kafkaemu ctl produce: no key separator {args.key_separator!r} in {value!r}")
        records.append({"key": key, "value": rest})
    return records


def _batches(records: list):
    batch, size = [], 0
    for record in records:
        length = len(json.dumps(record))
        if batch and (len(batch) >= PRODUCE_BATCH_RECORDS or size + length > PRODUCE_BATCH_BYTES):
            yield batch
            batch, size = [], 0
        batch.append(record)
        size += length
    if batch:
        yield batch


def run_produce(client, args) -> int:
    headers = []
    for item in args.header:
        name, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"kafkaemu ctl produce: --header takes NAME=VALUE, got {item!r}")
        headers.append([name, value])
    common = {"key": args.key, "headers": headers or None, "partition": args.partition,
              "encoding": "base64" if args.base64 else None}
    placed = []
    for batch in _batches(produce_records(args)):
        answer = client.call("records_produce", topic=args.topic, records=batch, **common)
        placed += answer["records"]
    if args.json:
        print(json.dumps({"topic": args.topic, "records": placed}, indent=2))
    else:
        counts: dict[int, list[int]] = {}
        for r in placed:
            counts.setdefault(r["partition"], []).append(r["offset"])
        print(table([[p, len(offs), min(offs), max(offs)] for p, offs in sorted(counts.items())],
                    ["PARTITION", "RECORDS", "FIRST-OFFSET", "LAST-OFFSET"]))
    return 0


# -- consume --------------------------------------------------------------------------------------
def run_consume(client, args) -> int:
    encoding = "base64" if args.base64 else None
    partitions = [args.partition] if args.partition is not None else \
        [p["partition"] for p in client.call("topic", topic=args.topic)["partitions"]]
    remaining = args.limit
    header_printed = False
    for partition in partitions:
        offset, end = args.offset, None
        while remaining is None or remaining > 0:
            page = READ_PAGE if remaining is None else min(READ_PAGE, remaining)
            if args.group:
                answer = client.call("records_consume", group=args.group, topic=args.topic, partition=partition,
                                     offset=offset, limit=page, encoding=encoding)
            else:
                answer = client.call("records_read", topic=args.topic, partition=partition, offset=offset,
                                     limit=page, encoding=encoding)
            records = answer["records"]
            (position,) = answer["next_offsets"]
            end = position["high_watermark"] if end is None else end
            _print_records(records, args.json, not header_printed)
            header_printed = header_printed or bool(records)
            if remaining is not None:
                remaining -= len(records)
            if not records or position["offset"] >= end:
                break
            offset = position["offset"]
            if args.group:   # the group's committed offset is where the next page starts
                offset = "beginning"
    return 0


def _print_records(records: list[dict], as_json: bool, with_header: bool) -> None:
    if as_json:
        for r in records:
            print(json.dumps(r))
    elif records:
        text = table([[r["partition"], r["offset"], r["key"], r["value"],
                       " ".join(f"{k}={v}" for k, v in r["headers"]) or None] for r in records],
                     ["PARTITION", "OFFSET", "KEY", "VALUE", "HEADERS"])
        print(text if with_header else text.split("\n", 1)[1])
    sys.stdout.flush()

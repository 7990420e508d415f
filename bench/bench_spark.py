"""Spark against kafkaemu: time from ``readStream ... start()`` to the first micro-batch holding data
(default and deprecated-offset-fetching modes), and records/s of a Spark batch read of 1,000,000
small records (plus the Spark Kafka sink's rate writing them).

Needs Spark's Kafka connector: the folder ``make java-deps`` fills from Maven Central, or where
kafkaemu/spark/session.py finds it; without it, prints why it skipped and exits 0. The emulator runs as a
subprocess so the broker and Spark's driver do not share an interpreter.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kafkaemu.spark.session import ConnectorUnavailable  # noqa: E402


def first_batch_ms(spark, bootstrap: str, topic: str, deprecated: bool) -> float:
    spark.conf.set("spark.sql.streaming.kafka.useDeprecatedOffsetFetching", "true" if deprecated else "false")
    name = f"first_batch_{uuid.uuid4().hex[:8]}"
    start = time.perf_counter()
    query = (spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
             .option("subscribe", topic).option("startingOffsets", "earliest").load()
             .selectExpr("CAST(value AS STRING) AS value")
             .writeStream.format("memory").queryName(name)
             .option("checkpointLocation", tempfile.mkdtemp(prefix="kafkaemu-bench-"))
             .start())
    try:
        # Progress is reported once a batch is in the sink; polling it starts no Spark job.
        deadline = start + 120
        while time.perf_counter() < deadline:
            if query.exception() is not None:
                raise RuntimeError(query.exception())
            if any(p["numInputRows"] > 0 for p in query.recentProgress):
                return (time.perf_counter() - start) * 1000
            time.sleep(0.01)
        raise RuntimeError("no data within 120 s")
    finally:
        query.stop()
        spark.conf.set("spark.sql.streaming.kafka.useDeprecatedOffsetFetching", "false")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    try:
        import pyspark  # noqa: F401
    except ImportError as exc:
        print(f"bench_spark: skipped: {exc}")
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "integration" / "java"))
    import fetch_jars

    from kafka.admin import KafkaAdminClient, NewTopic

    from kafkaemu.spark.session import local_session
    from kafkaemu.testing.emulator import KafkaEmulator

    with KafkaEmulator(subprocess_mode=True) as emulator:
        bootstrap = emulator.bootstrap_server
        try:
            spark = local_session("kafkaemu-bench", jars=fetch_jars.fetched_spark_connector(),
                                  extra={"spark.driver.memory": "2g"})
        except ConnectorUnavailable as exc:
            print(f"bench_spark: skipped: {exc}")
            return 0
        spark.sparkContext.setLogLevel("ERROR")
        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        small, big = f"bench-first-{uuid.uuid4().hex[:6]}", f"bench-1m-{uuid.uuid4().hex[:6]}"
        admin.create_topics([NewTopic(small, 3, 1), NewTopic(big, 4, 1)])
        admin.close()
        try:
            (spark.range(300).selectExpr("CAST(id AS STRING) AS value").write.format("kafka")
             .option("kafka.bootstrap.servers", bootstrap).option("topic", small).save())
            for deprecated in (False, True):
                times = [first_batch_ms(spark, bootstrap, small, deprecated) for _ in range(args.runs)]
                mode = "useDeprecatedOffsetFetching=true" if deprecated else "default (AdminClient)"
                print(f"readStream start() -> first micro-batch with data, {mode}: first (cold) {times[0]:.0f} ms, "
                      f"median {statistics.median(times):.0f} ms (runs: {', '.join(f'{t:.0f}' for t in times)})")

            start = time.perf_counter()
            (spark.range(args.records).selectExpr("CAST(id % 1000 AS STRING) AS key", "CAST(id AS STRING) AS value")
             .write.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("topic", big).save())
            write_s = time.perf_counter() - start
            print(f"Spark Kafka sink, {args.records:,} small records: {args.records / write_s:,.0f} records/s "
                  f"({write_s:.1f} s)")

            best = None
            for _ in range(args.runs):
                start = time.perf_counter()
                row = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
                       .option("subscribe", big).option("startingOffsets", "earliest")
                       .option("endingOffsets", "latest").load()
                       .selectExpr("count(*) AS n", "sum(length(value)) AS bytes").collect()[0])
                elapsed = time.perf_counter() - start
                if row["n"] != args.records:
                    raise RuntimeError(f"read {row['n']} records, wrote {args.records}")
                best = elapsed if best is None else min(best, elapsed)
            print(f"Spark batch read, {args.records:,} small records: {args.records / best:,.0f} records/s "
                  f"(best of {args.runs}: {best:.1f} s)")
        finally:
            spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

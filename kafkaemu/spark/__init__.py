"""kafkaemu's PySpark pipeline (optional extra ``spark``): read ``__consumer_offsets`` through
Spark's own Kafka source, decode commits and group metadata with kafkaemu's codecs, and build a
consumer-lag table as a batch job or a streaming query.

``kafkaemu.spark.decoding`` is plain Python; ``kafkaemu.spark.consumer_lag`` needs pyspark (and,
to read from a broker, Spark's Kafka connector on the classpath)."""
from .decoding import DecodedRecord, decode_record

__all__ = ["DecodedRecord", "decode_record"]

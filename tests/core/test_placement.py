import pytest

from kafkaemu.core.placement import java_string_hash, kafka_abs, partition_for

# Vectors computed with Java's String.hashCode and Kafka's Utils.abs (java 17).
VECTORS = [
    ("", 0, 0),
    ("a", 97, 47),
    ("hello", 99162322, 22),
    ("my-group", -1906497762, 12),
    ("polygenelubricants", -2147483648, 0),      # Integer.MIN_VALUE: Utils.abs gives 0
    ("\U0001F600", 1772899, 49),                 # a surrogate pair: hashed as two UTF-16 units
    ("h\u00e9llo", 103094734, 34),
    ("console-consumer-12345", 158455506, 6),
]


@pytest.mark.parametrize("group_id,hash_code,partition", VECTORS)
def test_java_hash_and_partition(group_id, hash_code, partition):
    assert java_string_hash(group_id) == hash_code
    assert partition_for(group_id, 50) == partition


def test_kafka_abs_edge_cases():
    assert kafka_abs(-(2**31)) == 0
    assert kafka_abs(-5) == 5
    assert kafka_abs(2**31 - 1) == 2**31 - 1

"""The run walker (records checked a column at a time, ``record_validation._walk_runs``) against
the per-record walkers it stands in for: same position, count, max timestamp delta, offset
sequence and null keys, or the same error, on generated batches, well-formed and damaged."""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkaemu.storage import record_validation as rv
from kafkaemu.storage.record_batch import InvalidBatch, encode_records

_MIN = rv._MIN


def per_record(buf, count, index, fields, keys):
    acc = [_MIN, True, []]
    try:
        if fields:
            pos, walked = rv._walk_fields(buf, 0, len(buf), count, index, acc, keys)
        else:
            pos, walked, acc[0] = rv._walk_timestamps(buf, 0, len(buf), count, _MIN)
    except InvalidBatch as exc:
        return "error", exc.code_name, str(exc)
    return pos, walked, acc[0], acc[1] if fields else None, acc[2]


def by_runs(buf, count, index, fields, keys):
    acc = [_MIN, True, []]
    try:
        pos, walked = rv._walk_runs(buf, 0, len(buf), count, index, acc, fields, keys)
    except InvalidBatch as exc:
        return "error", exc.code_name, str(exc)
    return pos, walked, acc[0], acc[1] if fields else None, acc[2]


MODES = [(False, False), (True, False), (True, True)]   # timestamps only; offsets; offsets and keys


def agree(buf, count, index=0):
    for fields, keys in MODES:
        assert by_runs(bytearray(buf), count, index, fields, keys) == per_record(bytearray(buf), count, index,
                                                                                  fields, keys)


def uniform(n, value_size=100, ts=lambda i: i // 100, key=lambda i: None, delta=lambda i: i):
    return encode_records([(key(i), b"v" * value_size, [], 1000 + ts(i), delta(i)) for i in range(n)], 1000)


# -- shapes producers send: long runs, varint widths changing at record 64 and 8192 ---------------

@pytest.mark.parametrize("n,size", [(9090, 100), (990, 1000), (97, 10_240), (8300, 10), (1, 100), (70, 20_000)])
def test_runs_agree_on_uniform_batches(n, size):
    buf = uniform(n, size)
    agree(buf, n)
    acc = [_MIN, True, []]
    assert rv._walk_runs(bytearray(buf), 0, len(buf), n, 0, acc, True, True) == (len(buf), n)
    assert acc == [(n - 1) // 100, True, list(range(n))]   # no keys


@pytest.mark.parametrize("ts", [lambda i: -i, lambda i: (i * 7919) % 20000 - 10000, lambda i: 1 << 40 if i == 500 else 0,
                                lambda i: 63 + i % 3, lambda i: -(1 << 20) + i])
def test_runs_find_the_max_timestamp_whatever_the_deltas(ts):
    agree(uniform(1000, 50, ts=ts), 1000)


@pytest.mark.parametrize("delta", [lambda i: i + 1, lambda i: 0, lambda i: i if i != 700 else 699,
                                   lambda i: i if i < 8200 else i + 5, lambda i: i if i % 4000 else i + 1])
def test_runs_see_offset_deltas_out_of_sequence(delta):
    buf = uniform(8300, 10, delta=delta)
    agree(buf, 8300)
    assert by_runs(bytearray(buf), 8300, 0, True, False)[3] is False


def test_runs_list_null_keys_by_index():
    buf = uniform(3000, 20, key=lambda i: None if i % 97 == 0 or i == 2999 else b"k%04d" % (i % 10000))
    agree(buf, 3000)
    assert by_runs(bytearray(buf), 3000, 0, True, True)[4] == [i for i in range(3000) if i % 97 == 0 or i == 2999]


def test_runs_agree_on_damaged_uniform_batches():
    buf = uniform(2000, 30)
    for at in range(0, len(buf), 997):
        for byte in (0x00, 0x01, 0x7F, 0x80, 0xFF):
            damaged = bytearray(buf)
            damaged[at] = byte
            agree(damaged, 2000)
    for cut in (1, 2, 17, len(buf) // 2):
        agree(buf[:-cut], 2000)
    agree(buf + b"\x00" * 40, 2000)
    agree(buf, 1999)
    agree(buf, 2001)
    agree(buf, 1 << 31 - 1)


def test_runs_start_at_a_later_index_as_compressed_pieces_do():
    buf = uniform(500, 10, delta=lambda i: i + 8000)
    agree(buf, 500, index=8000)
    assert by_runs(bytearray(buf), 500, 8000, True, False)[:4] == (len(buf), 500, 4, True)


# -- generated batches ----------------------------------------------------------------------------

_field = st.one_of(st.none(), st.binary(max_size=40), st.integers(0, 20_000).map(lambda n: b"x" * n))
_record = st.tuples(_field, _field, st.lists(st.tuples(st.text(max_size=3), _field), max_size=2),
                    st.integers(-(1 << 33), 1 << 33))


@st.composite
def batches(draw):
    """Encoded records: a few varied ones mixed with runs of alike ones."""
    out = []
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            key, value, headers, ts = draw(_record)
            n = draw(st.integers(1, 300))
            spread = draw(st.sampled_from([0, 1, 50, 100_000]))
            out += [(key, value, headers, ts + (i * spread) // 7) for i in range(n)]
        else:
            out += draw(st.lists(_record, min_size=1, max_size=5))
    deltas = list(range(len(out)))
    if draw(st.booleans()):
        deltas[draw(st.integers(0, len(out) - 1))] += draw(st.sampled_from([-1, 1, 64, 10_000]))
    base = out[0][3]
    return encode_records([r + (d,) for r, d in zip(out, deltas)], base), len(out)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(batches(), st.data())
def test_runs_agree_with_the_per_record_walk(batch, data):
    buf, n = batch
    agree(buf, n)
    agree(buf, data.draw(st.integers(0, n + 3)))
    damaged = bytearray(buf)
    for _ in range(data.draw(st.integers(1, 3))):
        damaged[data.draw(st.integers(0, len(buf) - 1))] = data.draw(st.integers(0, 255))
    agree(damaged, n)
    agree(buf[:data.draw(st.integers(0, len(buf)))], n)


@given(st.binary(min_size=1, max_size=3000))
def test_max_byte_is_max(data):
    assert rv._max_byte(data) == max(data) == rv._max_byte(bytearray(data))


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_compressed_batches_inflating_to_several_pieces_walk_whole(codec):
    # ~2.6 MB inflated: three pieces, records cut at piece boundaries; a bad delta in the last piece
    from kafkaemu.storage.record_batch import build_batch, parse_header
    n = 2600
    recs = [(b"k%d" % i, b"%07d" % i * 140, [], 5000 + i % 977, i if i != 2500 else 2501) for i in range(n)]
    batch = build_batch(recs, codec=codec, last_offset_delta=n - 1)
    check = rv.check_records(batch, parse_header(batch), fields=True)
    assert check.uncompressed_bytes > 2 * (1 << 20)
    assert (check.max_timestamp, check.sequential, check.null_keys) == (5976, False, [])
    good = build_batch([r[:4] for r in recs], codec=codec)
    check = rv.check_records(good, parse_header(good), fields=True)
    assert (check.max_timestamp, check.sequential) == (5976, True)

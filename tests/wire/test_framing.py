import struct

import pytest

from kafkaemu.wire.framing import FrameDecoder, FrameError, frame


def frames_of(*bodies):
    return b"".join(frame(b) for b in bodies)


def test_whole_feed_yields_every_frame():
    data = frames_of(b"abc", b"", b"x" * 1000)
    assert FrameDecoder(10_000).feed(data) == [b"abc", b"", b"x" * 1000]


def test_one_byte_at_a_time_yields_the_same_frames():
    bodies = [b"abc", b"", b"hello world" * 20]
    decoder = FrameDecoder(10_000)
    got = []
    for i, byte in enumerate(frames_of(*bodies)):
        got += decoder.feed(bytes([byte]))
    assert got == bodies
    assert decoder.buffered == 0


def test_partial_frame_is_buffered_until_complete():
    decoder = FrameDecoder(100)
    data = frame(b"0123456789")
    assert decoder.feed(data[:7]) == []
    assert decoder.buffered == 7
    assert decoder.feed(data[7:]) == [b"0123456789"]


def test_oversized_prefix_is_rejected_before_its_body_arrives():
    decoder = FrameDecoder(1024)
    with pytest.raises(FrameError, match="exceeds socket.request.max.bytes"):
        decoder.feed(struct.pack(">i", 1025))
    assert decoder.buffered <= 4  # nothing was allocated for the declared size


def test_negative_size_is_rejected():
    with pytest.raises(FrameError, match="negative"):
        FrameDecoder(1024).feed(struct.pack(">i", -1))


def test_frame_at_exactly_the_limit_is_accepted():
    assert FrameDecoder(5).feed(frame(b"12345")) == [b"12345"]


def test_frames_are_bytes_whether_sliced_from_a_read_or_from_the_buffer():
    decoder = FrameDecoder(1 << 20)
    big = bytes(range(256)) * 1000
    data = frames_of(b"first", big, b"last")
    got = decoder.feed(data[:20])                   # "first" whole, the big one begun
    for start in range(20, len(data), 4096):        # the big one arrives in many reads
        got += decoder.feed(memoryview(data)[start:start + 4096])
    assert got == [b"first", big, b"last"]
    assert all(type(f) is bytes for f in got)
    assert decoder.buffered == 0


def test_a_frame_over_many_reads_large_and_small_is_joined_whole():
    decoder = FrameDecoder(1 << 22)
    big = bytes(range(256)) * 8000                  # 2 MB, as a large Produce
    data = frames_of(b"a", big, b"bc") + frame(b"d")[:2]
    cuts = [0, 3, 7, 9, 300_000, 300_001, 300_010, 900_000, 1_500_000, 1_500_100, 2_048_000, len(data)]
    got = []
    for lo, hi in zip(cuts, cuts[1:]):
        got += decoder.feed(data[lo:hi])
    assert got == [b"a", big, b"bc"]
    assert decoder.buffered == 2                    # half of the last size prefix
    assert decoder.feed(frame(b"d")[2:]) == [b"d"]
    assert decoder.buffered == 0


def test_a_trickled_frame_is_held_in_one_buffer_not_an_object_per_read():
    decoder = FrameDecoder(1 << 20)
    body = b"y" * 5000
    data = frame(body)
    got = []
    for i in range(len(data)):
        got += decoder.feed(data[i:i + 1])
    assert got == [body]
    assert len(decoder._pieces) == 0
    decoder.feed(data[:100])
    for i in range(100, 4000):
        decoder.feed(data[i:i + 1])
    assert len(decoder._pieces) <= 2                # the first read's rest and one merged buffer

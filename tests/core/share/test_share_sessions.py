"""Share sessions as Kafka's SharePartitionManager.newContext / acknowledgeSessionUpdate answer."""
import pytest

from kafkaemu.core.group_api import GroupError
from kafkaemu.core.share.sessions import ShareSessionCache
from kafkaemu.protocol.errors import ErrorCode as E

KEY = (0, "g", "m")
TP = (b"t" * 16, 0)


def error_of(fn, *args):
    with pytest.raises(GroupError) as info:
        fn(*args)
    return info.value.code


def test_open_fetch_close():
    cache = ShareSessionCache()
    session, replaced = cache.for_fetch(KEY, 0, [TP], [], False)
    assert replaced is None and session.epoch == 1 and list(session.partitions) == [TP]
    session, _ = cache.for_fetch(KEY, 1, [], [], True)
    assert session.epoch == 2
    assert cache.for_acknowledge(KEY, 2).epoch == 3
    _, closed = cache.for_fetch(KEY, -1, [], [], True)
    assert closed is session and KEY not in cache.sessions


def test_errors():
    cache = ShareSessionCache()
    assert error_of(cache.for_fetch, KEY, 1, [], [], False) == E.SHARE_SESSION_NOT_FOUND
    assert error_of(cache.for_fetch, KEY, -1, [], [], False) == E.SHARE_SESSION_NOT_FOUND
    assert error_of(cache.for_fetch, KEY, 0, [TP], [], True) == E.INVALID_REQUEST
    cache.for_fetch(KEY, 0, [TP], [], False)
    assert error_of(cache.for_fetch, KEY, 5, [], [], False) == E.INVALID_SHARE_SESSION_EPOCH
    assert error_of(cache.for_fetch, KEY, -1, [TP], [], False) == E.INVALID_REQUEST
    assert error_of(cache.for_acknowledge, KEY, 0) == E.INVALID_SHARE_SESSION_EPOCH
    assert error_of(cache.for_acknowledge, KEY, 2) == E.INVALID_SHARE_SESSION_EPOCH
    assert error_of(cache.for_acknowledge, (0, "g", "other"), 1) == E.SHARE_SESSION_NOT_FOUND


def test_epoch_zero_replaces_the_session_and_forgotten_partitions_leave_it():
    cache = ShareSessionCache()
    first, _ = cache.for_fetch(KEY, 0, [TP], [], False)
    second, replaced = cache.for_fetch(KEY, 0, [], [], False)
    assert replaced is first and second.epoch == 1
    other = (b"u" * 16, 1)
    session, _ = cache.for_fetch(KEY, 1, [TP, other], [TP], False)
    assert list(session.partitions) == [other]


def test_a_session_belongs_to_the_connection_that_opened_it():
    cache = ShareSessionCache()
    session, _ = cache.for_fetch(KEY, 0, [TP], [], False, 7)
    assert cache.disconnected(8) is None and KEY in cache.sessions
    assert cache.disconnected(7) is session and KEY not in cache.sessions
    assert cache.disconnected(7) is None


def test_a_session_closed_or_replaced_before_its_connection_drops_is_not_removed_again():
    """Kafka marks the old connection's entry stale: its late disconnect leaves the new session."""
    cache = ShareSessionCache()
    cache.for_fetch(KEY, 0, [TP], [], False, 7)
    newer, replaced = cache.for_fetch(KEY, 0, [TP], [], False, 8)   # the client reconnected
    assert replaced is not None
    assert cache.disconnected(7) is None and cache.sessions[KEY] is newer
    cache.for_acknowledge(KEY, -1)
    assert cache.disconnected(8) is None

"""Client quota entities as Kafka's controller validates them and its broker describes them, and
the precedence that picks the quota a client gets (DefaultQuotaCallback)."""
import pytest

from kafkaemu.core.quotas.entities import (CLIENT_ID, IP, USER, ClientQuotas, Entity, QuotaError, from_json,
                                           to_json)


def E(**parts):
    return Entity((t.replace("_", "-"), n) for t, n in parts.items())


def alter(quotas, entity, *ops, validate_only=False):
    [(_, code, message)] = quotas.alter([(entity, list(ops))], validate_only)
    return code, message


@pytest.mark.parametrize("entity, ops, code, message", [
    (Entity(), [("producer_byte_rate", 1.0, False)], "INVALID_REQUEST", "Invalid empty client quota entity"),
    (E(group="g"), [("producer_byte_rate", 1.0, False)], "INVALID_REQUEST",
     "Unhandled client quota entity type: group"),
    (E(user=""), [("producer_byte_rate", 1.0, False)], "INVALID_REQUEST", "Empty user not supported"),
    (E(user="u"), [("nope", 1.0, False)], "INVALID_REQUEST", "Invalid configuration key nope"),
    (E(user="u"), [("producer_byte_rate", 0.0, False)], "INVALID_REQUEST",
     "Quota producer_byte_rate must be greater than 0"),
    (E(user="u"), [("request_percentage", -5.0, False)], "INVALID_REQUEST",
     "Quota request_percentage must be greater than 0"),
    (E(user="u"), [("producer_byte_rate", 1.5, False)], "INVALID_REQUEST",
     "producer_byte_rate cannot be a fractional value."),
    (E(user="u"), [("consumer_byte_rate", 1e19, False)], "INVALID_REQUEST",
     "Proposed value for consumer_byte_rate is too large for a LONG."),
    (E(ip="1.2.3.4"), [("producer_byte_rate", 1.0, False)], "INVALID_REQUEST",
     "Invalid configuration key producer_byte_rate"),
    (E(ip="1.2.3.4"), [("connection_creation_rate", 3e9, False)], "INVALID_REQUEST",
     "Proposed value for connection_creation_rate is too large for an INT."),
    (E(ip="not an ip"), [("connection_creation_rate", 3.0, False)], "INVALID_REQUEST",
     "not an ip is not a valid IP or resolvable host."),
    (E(user="u", ip="1.2.3.4"), [("request_percentage", 3.0, False)], "INVALID_REQUEST",
     "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"),
])
def test_bad_alterations_are_refused_as_the_controller(entity, ops, code, message):
    quotas = ClientQuotas()
    assert alter(quotas, entity, *ops) == (code, message)
    assert quotas.entries == {}


def test_set_remove_validate_only_and_duplicates():
    changes = []
    quotas = ClientQuotas(on_change=lambda entries: changes.append(dict(entries)))
    assert alter(quotas, E(user="u"), ("producer_byte_rate", 1024.0, False),
                 validate_only=True) == ("NONE", None)
    assert quotas.entries == {} and changes == []
    assert alter(quotas, E(user="u"), ("producer_byte_rate", 1024.0, False),
                 ("request_percentage", 12.5, False)) == ("NONE", None)
    assert quotas.entries == {E(user="u"): {"producer_byte_rate": 1024.0, "request_percentage": 12.5}}
    assert alter(quotas, E(user="u"), ("producer_byte_rate", 0, True)) == ("NONE", None)
    assert alter(quotas, E(user="u"), ("request_percentage", 0, True), ("nope", 0, True)) == ("NONE", None)
    assert quotas.entries == {} and len(changes) == 3
    code, message = alter(quotas, E(user="u"), ("producer_byte_rate", 1.0, False), ("producer_byte_rate", 2.0, False))
    assert code == "INVALID_REQUEST" and message.startswith("Duplicate quota key producer_byte_rate")
    results = quotas.alter([(E(client_id="c"), [("producer_byte_rate", 1.0, False)]),
                            (E(client_id="c"), [("producer_byte_rate", 2.0, False)]),
                            (E(user="x"), [("consumer_byte_rate", 9.0, False)])])
    assert [(code, message and message.split(" ClientQuotaEntity")[0]) for _, code, message in results] == [
        ("INVALID_REQUEST", "Ignoring duplicate entity"), ("NONE", None)]
    assert quotas.entries == {E(user="x"): {"consumer_byte_rate": 9.0}}


@pytest.fixture
def populated():
    quotas = ClientQuotas()
    for entity in (E(user="alice"), E(user=None), E(client_id="app"), E(client_id=None),
                   E(user="alice", client_id="app"), E(user=None, client_id=None), E(ip="10.0.0.1")):
        assert alter(quotas, entity, *([("connection_creation_rate", 5.0, False)] if IP in dict(entity)
                                       else [("producer_byte_rate", 100.0, False)])) == ("NONE", None)
    return quotas


@pytest.mark.parametrize("components, strict, expected", [
    ([], False, "all"),
    ([], True, []),
    ([(USER, 0, "alice")], False, [E(user="alice"), E(user="alice", client_id="app")]),
    ([(USER, 0, "alice")], True, [E(user="alice")]),
    ([(USER, 1, None)], False, [E(user=None), E(user=None, client_id=None)]),
    ([(USER, 2, None)], True, [E(user="alice"), E(user=None)]),
    ([(CLIENT_ID, 2, None)], False, [E(client_id="app"), E(client_id=None), E(user="alice", client_id="app"),
                                     E(user=None, client_id=None)]),
    ([(USER, 2, None), (CLIENT_ID, 0, "app")], False, [E(user="alice", client_id="app")]),
    ([(USER, 1, None), (CLIENT_ID, 1, None)], True, [E(user=None, client_id=None)]),
    ([(IP, 2, None)], False, [E(ip="10.0.0.1")]),
    ([(USER, 0, "bob")], False, []),
])
def test_describe_filters_as_the_broker_cache(populated, components, strict, expected):
    found = populated.describe(components, strict)
    assert set(found) == (set(populated.entries) if expected == "all" else set(expected))


@pytest.mark.parametrize("components, code", [
    ([(USER, 0, "a"), (USER, 2, None)], "INVALID_REQUEST"),
    ([("", 2, None)], "INVALID_REQUEST"),
    ([("group", 2, None)], "UNSUPPORTED_VERSION"),
    ([(IP, 2, None), (USER, 2, None)], "INVALID_REQUEST"),
    ([(USER, 0, None)], "UNKNOWN_SERVER_ERROR"),
    ([(USER, 7, None)], "UNKNOWN_SERVER_ERROR"),
])
def test_bad_filters(populated, components, code):
    with pytest.raises(QuotaError) as info:
        populated.describe(components, False)
    assert info.value.code == code


def test_precedence_and_sensor_tags():
    quotas = ClientQuotas()
    levels = [E(client_id=None), E(client_id="c"), E(user=None), E(user=None, client_id=None),
              E(user=None, client_id="c"), E(user="u"), E(user="u", client_id=None), E(user="u", client_id="c")]
    expected_tags = [("", "c"), ("", "c"), ("u", ""), ("u", "c"), ("u", "c"), ("u", ""), ("u", "c"), ("u", "c")]
    assert quotas.quota_for("producer_byte_rate", "u", "c") == (None, ("", ""))
    for rank, (entity, tags) in enumerate(zip(levels, expected_tags)):
        alter(quotas, entity, ("producer_byte_rate", float(rank + 1), False))
        assert quotas.quota_for("producer_byte_rate", "u", "c") == (rank + 1, tags)
    assert quotas.quota_for("producer_byte_rate", "other", "c") == (5.0, ("other", "c"))
    assert quotas.quota_for("consumer_byte_rate", "u", "c") == (None, ("", ""))


def test_json_round_trip(populated):
    assert from_json(to_json(populated.entries)) == populated.entries

"""Request bodies a client repeats byte for byte (envelope.REUSED_BODY_APIS) are decoded once and
reused; every request still gets its own answer: its correlation id, and what its own body asks."""
from kafkaemu.protocol import envelope
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode
from tests.conftest import WireClient, new_broker


def test_a_repeated_body_is_decoded_once_and_each_request_gets_its_own_answer():
    client = WireClient(new_broker(topics={"a": 1, "b": 2}))
    route = envelope.route(ApiKey.METADATA, 12)
    route.reused_bodies.clear()

    def ask(name):
        answer = client.call(ApiKey.METADATA, 12, {"topics": [{"name": name}], "allow_auto_topic_creation": False})
        return [(t.name, t.error_code, len(t.partitions)) for t in answer.topics]

    assert ask("a") == [("a", 0, 1)]
    (kept,) = route.reused_bodies.values()
    assert ask("a") == [("a", 0, 1)]                 # WireClient checks each reply's correlation id
    assert list(route.reused_bodies.values()) == [kept]
    assert ask("b") == [("b", 0, 2)]
    assert ask("c") == [("c", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 0)]
    assert len(route.reused_bodies) == 3


def test_reused_bodies_are_bounded():
    client = WireClient(new_broker())
    route = envelope.route(ApiKey.HEARTBEAT, 4)
    route.reused_bodies.clear()
    for i in range(envelope.MAX_REUSED_BODIES + 5):
        answer = client.call(ApiKey.HEARTBEAT, 4, {"group_id": f"g{i}", "generation_id": 1, "member_id": "m",
                                                   "group_instance_id": None})
        assert answer.error_code == ErrorCode.UNKNOWN_MEMBER_ID
        assert len(route.reused_bodies) <= envelope.MAX_REUSED_BODIES


def test_other_apis_decode_every_body():
    assert envelope.route(ApiKey.OFFSET_COMMIT, 9).reused_bodies is None
    assert envelope.route(ApiKey.PRODUCE, 11).reused_bodies is None

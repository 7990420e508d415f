"""The security controls: ACLs, denials, SCRAM users and tokens through KafkaEmulator, and their
part in snapshots, restore and reset."""
import pytest

from kafkaemu.control.params import ControlError
from kafkaemu.testing import KafkaEmulator


def test_acls_scram_users_and_their_snapshots():
    with KafkaEmulator(authorizer=True, sasl_users={"seed": "pw"}) as e:
        added = e.add_acl("topic", "orders", "User:alice", "read", pattern_type="prefixed")
        assert added == {"resource_type": "TOPIC", "resource_name": "orders", "pattern_type": "PREFIXED",
                         "principal": "User:alice", "host": "*", "operation": "READ", "permission": "ALLOW"}
        e.add_acl("group", "g", "User:bob", "read", permission="deny")
        assert [a["resource_name"] for a in e.acls()] == ["orders", "g"]
        assert [a["principal"] for a in e.acls(resource_type="group")] == ["User:bob"]
        with pytest.raises(ControlError) as info:
            e.add_acl("cluster", "other", "User:x", "alter")
        assert info.value.status == 400 and "kafka-cluster" in str(info.value)
        e.add_scram_user("carol", "secret", mechanism="scram-sha-512", iterations=8192)
        assert {u["user"]: u["credentials"] for u in e.scram_users()}["carol"] == \
            [{"mechanism": "SCRAM-SHA-512", "iterations": 8192}]
        e.snapshot("with")
        assert [a["resource_name"] for a in e.remove_acls(principal="User:bob")] == ["g"]
        e.remove_scram_user("carol")
        e.restore("with")
        assert len(e.acls()) == 2 and "carol" in {u["user"] for u in e.scram_users()}
        e.reset()
        assert e.acls() == [] and [u["user"] for u in e.scram_users()] == ["seed"]
        assert e.denials() == [] and e.delegation_tokens() == []


def test_acl_controls_need_authorization_on():
    with KafkaEmulator() as e:
        with pytest.raises(ControlError) as info:
            e.acls()
        assert info.value.status == 409


def test_the_web_page_shows_acls_and_denials():
    from kafkaemu.auth.acl import AclOperation, ResourceType
    from kafkaemu.control.web import render_page
    with KafkaEmulator(authorizer=True) as e:
        e.add_acl("topic", "orders", "User:alice", "read")
        e.call(lambda broker: broker.authorizer.record_denial("User:<mallory>", "10.0.0.9", AclOperation.WRITE,
                                                              ResourceType.TOPIC, "orders", "PRODUCE"))
        page = e.call(lambda broker: render_page(e.server.control, "")).decode()
    assert '<section id="security">' in page and "User:alice" in page
    assert "User:&lt;mallory&gt;" in page and "10.0.0.9" in page   # escaped
    with KafkaEmulator() as e:
        assert '<section id="security">' not in e.call(lambda broker: render_page(e.server.control, "")).decode()

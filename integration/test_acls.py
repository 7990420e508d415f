"""The ACL APIs (DescribeAcls, CreateAcls, DeleteAcls) with real admin clients: kafka-python's own
``test_create_describe_delete_acls`` pattern, confluent-kafka's AdminClient, and Kafka's answers
when authorization is off (SECURITY_DISABLED) or the caller lacks CLUSTER ALTER."""
import pytest

from kafkaemu.testing import KafkaEmulator

USERS = {"admin": "admin-secret", "alice": "alice-secret"}


@pytest.fixture(scope="module")
def open_emulator():
    """Authorization on, everyone allowed where no ACL says otherwise (kafka-python's fixture)."""
    with KafkaEmulator(authorizer=True, allow_everyone_if_no_acl_found=True) as emulator:
        yield emulator


@pytest.fixture(scope="module")
def sasl_emulator():
    with KafkaEmulator(sasl_users=USERS, extra={
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": "User:admin"}) as emulator:
        yield emulator


def every_acl_kafka_python():
    """kafka-python's filter matching every ACL."""
    from kafka.admin import ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, ResourcePatternFilter
    from kafka.admin import ResourceType
    return ACLFilter(principal=None, host=None, operation=ACLOperation.ANY, permission_type=ACLPermissionType.ANY,
                     resource_pattern=ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY))


def every_acl_confluent():
    """confluent-kafka's filter matching every ACL binding."""
    from confluent_kafka.admin import AclBindingFilter, AclOperation, AclPermissionType, ResourcePatternType
    from confluent_kafka.admin import ResourceType
    return AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY,
                            AclPermissionType.ANY)


# -- kafka-python ---------------------------------------------------------------------------------
def test_kafka_python_create_describe_delete_acls(open_emulator):
    from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType, KafkaAdminClient, ResourcePattern,
                             ResourceType)
    from kafka.errors import NoError
    admin = KafkaAdminClient(bootstrap_servers=open_emulator.bootstrap_server)
    try:
        topic_filter = ACLFilter(principal=None, host="*", operation=ACLOperation.ANY,
                                 permission_type=ACLPermissionType.ANY,
                                 resource_pattern=ResourcePattern(ResourceType.TOPIC, "topic"))
        acls, error = admin.describe_acls(topic_filter)
        assert error is NoError and acls == []
        acl = ACL(principal="User:test", host="*", operation=ACLOperation.READ, permission_type=ACLPermissionType.ALLOW,
                  resource_pattern=ResourcePattern(ResourceType.TOPIC, "topic"))
        result = admin.create_acls([acl])
        assert len(result["failed"]) == 0 and len(result["succeeded"]) == 1
        acls, error = admin.describe_acls(topic_filter)
        assert error is NoError and len(acls) == 1
        assert (acls[0].principal, acls[0].operation, acls[0].resource_pattern.resource_name) == \
            ("User:test", ACLOperation.READ, "topic")
        deleted = admin.delete_acls([ACLFilter(principal="User:test", host="*", operation=ACLOperation.READ,
                                               permission_type=ACLPermissionType.ALLOW,
                                               resource_pattern=ResourcePattern(ResourceType.TOPIC, "topic"))])
        assert len(deleted) == 1 and len(deleted[0][1]) == 1 and deleted[0][2] is NoError
        acls, error = admin.describe_acls(ACLFilter(principal="*", host="*", operation=ACLOperation.ANY,
                                                    permission_type=ACLPermissionType.ANY,
                                                    resource_pattern=ResourcePattern(ResourceType.TOPIC, "topic")))
        assert error is NoError and acls == []
    finally:
        admin.close()


def test_kafka_python_invalid_acls_get_kafkas_errors(open_emulator):
    from kafka.admin import ACL, ACLOperation, ACLPermissionType, KafkaAdminClient, ResourcePattern, ResourceType
    from kafka.errors import InvalidRequestError
    admin = KafkaAdminClient(bootstrap_servers=open_emulator.bootstrap_server)
    try:
        bad_cluster = ACL(principal="User:x", host="*", operation=ACLOperation.ALTER,
                          permission_type=ACLPermissionType.ALLOW,
                          resource_pattern=ResourcePattern(ResourceType.CLUSTER, "not-the-cluster"))
        result = admin.create_acls([bad_cluster])
        assert result["succeeded"] == [] and result["failed"] == [InvalidRequestError]
    finally:
        admin.close()


def test_kafka_python_acl_apis_without_an_authorizer_are_security_disabled():
    from kafka.admin import KafkaAdminClient
    from kafka.errors import SecurityDisabledError
    with KafkaEmulator() as emulator:
        admin = KafkaAdminClient(bootstrap_servers=emulator.bootstrap_server)
        try:
            with pytest.raises(SecurityDisabledError):
                admin.describe_acls(every_acl_kafka_python())
        finally:
            admin.close()


# -- confluent-kafka --------------------------------------------------------------------------------
def confluent_admin(emulator, user):
    from confluent_kafka.admin import AdminClient
    return AdminClient({"bootstrap.servers": emulator.bootstrap_server, "security.protocol": "SASL_PLAINTEXT",
                        "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": user, "sasl.password": USERS[user]})


def test_confluent_create_describe_delete_acls_with_prefixes(sasl_emulator):
    from confluent_kafka.admin import (AclBinding, AclBindingFilter, AclOperation, AclPermissionType,
                                       ResourcePatternType, ResourceType)
    admin = confluent_admin(sasl_emulator, "admin")
    bindings = [
        AclBinding(ResourceType.TOPIC, "orders", ResourcePatternType.LITERAL, "User:alice", "*",
                   AclOperation.READ, AclPermissionType.ALLOW),
        AclBinding(ResourceType.TOPIC, "ord", ResourcePatternType.PREFIXED, "User:bob", "*",
                   AclOperation.WRITE, AclPermissionType.DENY),
        AclBinding(ResourceType.GROUP, "g1", ResourcePatternType.LITERAL, "User:alice", "*",
                   AclOperation.READ, AclPermissionType.ALLOW),
    ]
    for future in admin.create_acls(bindings, request_timeout=10).values():
        assert future.result() is None
    matching = admin.describe_acls(AclBindingFilter(ResourceType.TOPIC, "orders", ResourcePatternType.MATCH, None,
                                                    None, AclOperation.ANY, AclPermissionType.ANY),
                                   request_timeout=10).result()
    assert sorted(b.name for b in matching) == ["ord", "orders"]
    everything = admin.describe_acls(every_acl_confluent(),
                                     request_timeout=10).result()
    assert sorted(bindings) == sorted(everything)
    groups = AclBindingFilter(ResourceType.GROUP, None, ResourcePatternType.ANY, None, None, AclOperation.ANY,
                              AclPermissionType.ANY)
    deleted = admin.delete_acls([groups], request_timeout=10)[groups].result()
    assert deleted == [bindings[2]]
    left = admin.delete_acls([every_acl_confluent()], request_timeout=10)
    assert sorted(list(left.values())[0].result()) == sorted(bindings[:2])


def test_confluent_acl_calls_need_cluster_alter_and_describe(sasl_emulator):
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import AclBinding, AclOperation, AclPermissionType, ResourcePatternType, ResourceType
    admin = confluent_admin(sasl_emulator, "alice")
    binding = AclBinding(ResourceType.TOPIC, "t", ResourcePatternType.LITERAL, "User:alice", "*",
                         AclOperation.ALL, AclPermissionType.ALLOW)
    with pytest.raises(KafkaException) as info:
        list(admin.create_acls([binding], request_timeout=10).values())[0].result()
    assert info.value.args[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    # (librdkafka hands an empty list for a DescribeAcls error; kafka-python raises it)
    from kafka.admin import KafkaAdminClient
    from kafka.errors import ClusterAuthorizationFailedError
    kp_admin = KafkaAdminClient(bootstrap_servers=sasl_emulator.bootstrap_server, security_protocol="SASL_PLAINTEXT",
                                sasl_mechanism="PLAIN", sasl_plain_username="alice",
                                sasl_plain_password=USERS["alice"])
    try:
        with pytest.raises(ClusterAuthorizationFailedError):
            kp_admin.describe_acls(every_acl_kafka_python())
    finally:
        kp_admin.close()


def test_acls_last_across_a_restart_with_a_data_dir(tmp_path):
    from kafka.admin import (ACL, ACLOperation, ACLPermissionType, ACLResourcePatternType, KafkaAdminClient,
                             ResourcePattern, ResourceType)
    settings = dict(authorizer=True, allow_everyone_if_no_acl_found=True, data_dir=str(tmp_path))
    acl = ACL(principal="User:kept", host="*", operation=ACLOperation.WRITE, permission_type=ACLPermissionType.DENY,
              resource_pattern=ResourcePattern(ResourceType.TOPIC, "keep.", ACLResourcePatternType.PREFIXED))
    with KafkaEmulator(**settings) as first:
        admin = KafkaAdminClient(bootstrap_servers=first.bootstrap_server)
        assert admin.create_acls([acl])["failed"] == []
        admin.close()
    with KafkaEmulator(**settings) as second:
        admin = KafkaAdminClient(bootstrap_servers=second.bootstrap_server)
        try:
            found, _ = admin.describe_acls(every_acl_kafka_python())
        finally:
            admin.close()
    assert [(a.principal, a.resource_pattern.resource_name, a.permission_type) for a in found] == \
        [("User:kept", "keep.", ACLPermissionType.DENY)]

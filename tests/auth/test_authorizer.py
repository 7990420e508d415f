"""The authorizer as a table: (ACLs, principal, host, operation, resource) -> decision, with the
cases of Apache Kafka's StandardAuthorizerTest."""
from __future__ import annotations

import pytest

from kafkaemu.auth.acl import (Acl, AclFilter, AclOperation as Op, AclPermissionType as Perm, PatternType as PT,
                               ResourceType as RT)
from kafkaemu.auth.authorizer import Authorizer, operation_bits, parse_super_users

LOCAL, HOST1, HOST2 = "127.0.0.1", "192.168.1.1", "192.168.1.2"
ALLOW, DENY = Perm.ALLOW, Perm.DENY


def acl(rt, name, pt, principal, host, op, perm):
    return Acl(rt, name, pt, principal, host, op, perm)


def foo(op, perm):
    return acl(RT.TOPIC, "foo_", PT.PREFIXED, "User:bob", "*", op, perm)


def bar(op, perm):
    return acl(RT.GROUP, "bar", PT.LITERAL, "User:*", "*", op, perm)


MANY = [
    acl(RT.TOPIC, "green2", PT.LITERAL, "User:*", "*", Op.READ, ALLOW),
    acl(RT.TOPIC, "green", PT.PREFIXED, "User:bob", "*", Op.READ, ALLOW),
    acl(RT.TOPIC, "betamax4", PT.LITERAL, "User:bob", "*", Op.READ, ALLOW),
    acl(RT.TOPIC, "betamax", PT.LITERAL, "User:bob", "*", Op.READ, ALLOW),
    acl(RT.TOPIC, "beta", PT.PREFIXED, "User:*", "*", Op.READ, ALLOW),
    acl(RT.TOPIC, "alpha", PT.PREFIXED, "User:*", "*", Op.READ, ALLOW),
    acl(RT.TOPIC, "alp", PT.PREFIXED, "User:bob", "*", Op.READ, DENY),
    acl(RT.GROUP, "*", PT.LITERAL, "User:bob", "*", Op.WRITE, ALLOW),
    acl(RT.GROUP, "wheel", PT.LITERAL, "User:*", "*", Op.WRITE, DENY),
]
DENY_ALL = [
    acl(RT.TOPIC, "foo", PT.LITERAL, "User:alice", "*", Op.ALL, DENY),
    acl(RT.TOPIC, "foo", PT.PREFIXED, "User:alice", "*", Op.READ, ALLOW),
    acl(RT.TOPIC, "foo", PT.LITERAL, "User:*", "*", Op.ALL, DENY),
    acl(RT.TOPIC, "foo", PT.PREFIXED, "User:*", "*", Op.DESCRIBE, ALLOW),
]
OP_ALL = [
    acl(RT.TOPIC, "foo", PT.LITERAL, "User:*", "*", Op.ALL, ALLOW),
    acl(RT.TOPIC, "bar", PT.PREFIXED, "User:alice", "*", Op.ALL, ALLOW),
    acl(RT.TOPIC, "baz", PT.LITERAL, "User:bob", "*", Op.ALL, ALLOW),
]
HOSTS = [
    acl(RT.TOPIC, "foo", PT.LITERAL, "User:alice", HOST1, Op.READ, DENY),
    acl(RT.TOPIC, "foo", PT.LITERAL, "User:alice", "*", Op.READ, ALLOW),
    acl(RT.TOPIC, "bar", PT.LITERAL, "User:bob", HOST2, Op.READ, ALLOW),
    acl(RT.TOPIC, "bar", PT.LITERAL, "User:*", LOCAL, Op.DESCRIBE, ALLOW),
]
PREFIXES = [
    acl(RT.TOPIC, "fooa", PT.PREFIXED, "User:alice", "*", Op.ALL, ALLOW),
    acl(RT.TOPIC, "foobar", PT.LITERAL, "User:bob", "*", Op.ALL, ALLOW),
    acl(RT.TOPIC, "f", PT.PREFIXED, "User:bob", "*", Op.ALL, ALLOW),
]

CASES = [
    # implication: READ/WRITE/DELETE/ALTER/DESCRIBE ALLOW imply DESCRIBE; CREATE does not
    *[([foo(op, ALLOW)], "bob", LOCAL, Op.DESCRIBE, RT.TOPIC, "foo_bar", True)
      for op in (Op.DESCRIBE, Op.READ, Op.WRITE, Op.DELETE, Op.ALTER)],
    ([foo(Op.CREATE, ALLOW)], "bob", LOCAL, Op.DESCRIBE, RT.TOPIC, "foo_bar", False),
    # a DENY implies nothing (and the resource has ACLs, so the default does not apply)
    *[([foo(op, DENY)], "bob", LOCAL, Op.DESCRIBE, RT.TOPIC, "foo_bar", False)
      for op in (Op.READ, Op.WRITE, Op.DELETE, Op.ALTER)],
    ([foo(Op.READ, DENY), foo(Op.DESCRIBE, ALLOW)], "bob", LOCAL, Op.DESCRIBE, RT.TOPIC, "foo_bar", True),
    *[([foo(op, ALLOW)], "bob", LOCAL, Op.DESCRIBE_CONFIGS, RT.TOPIC, "foo_bar", True)
      for op in (Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS)],
    ([foo(Op.ALTER_CONFIGS, DENY), foo(Op.DESCRIBE_CONFIGS, ALLOW)], "bob", LOCAL, Op.DESCRIBE_CONFIGS, RT.TOPIC,
     "foo_bar", True),
    ([foo(Op.ALTER_CONFIGS, DENY), foo(Op.ALL, ALLOW)], "bob", LOCAL, Op.ALTER_CONFIGS, RT.TOPIC, "foo_bar", False),
    # principals
    ([foo(Op.READ, ALLOW)], "alice", LOCAL, Op.READ, RT.TOPIC, "foo_bar", False),
    ([bar(Op.READ, DENY), bar(Op.READ, ALLOW)], "alice", LOCAL, Op.READ, RT.GROUP, "bar", False),
    # simple authorizations
    ([foo(Op.READ, ALLOW), foo(Op.WRITE, ALLOW), bar(Op.DESCRIBE_CONFIGS, ALLOW), bar(Op.ALTER_CONFIGS, ALLOW)],
     "bob", LOCAL, Op.READ, RT.TOPIC, "foo_", True),
    ([bar(Op.ALTER_CONFIGS, ALLOW)], "fred", LOCAL, Op.ALTER_CONFIGS, RT.GROUP, "bar", True),
    # DENY over ALLOW with ALL
    (DENY_ALL, "alice", LOCAL, Op.WRITE, RT.TOPIC, "foo", False),
    (DENY_ALL, "alice", LOCAL, Op.READ, RT.TOPIC, "foo", False),
    (DENY_ALL, "alice", LOCAL, Op.DESCRIBE, RT.TOPIC, "foo", False),
    (DENY_ALL, "alice", LOCAL, Op.READ, RT.TOPIC, "foobar", True),
    (DENY_ALL, "bob", LOCAL, Op.DESCRIBE, RT.TOPIC, "foo", False),
    (DENY_ALL, "bob", LOCAL, Op.DESCRIBE, RT.TOPIC, "foobaz", True),
    (DENY_ALL, "bob", LOCAL, Op.READ, RT.TOPIC, "foobaz", False),
    # ALL allows every operation
    (OP_ALL, "alice", LOCAL, Op.WRITE, RT.TOPIC, "foo", True),
    (OP_ALL, "alice", LOCAL, Op.DESCRIBE_CONFIGS, RT.TOPIC, "bar", True),
    (OP_ALL, "alice", LOCAL, Op.DESCRIBE, RT.TOPIC, "baz", False),
    (OP_ALL, "bob", LOCAL, Op.READ, RT.TOPIC, "bar", False),
    (OP_ALL, "bob", LOCAL, Op.DESCRIBE, RT.TOPIC, "baz", True),
    (OP_ALL, "malory", LOCAL, Op.DESCRIBE, RT.TOPIC, "foo", True),
    (OP_ALL, "malory", LOCAL, Op.WRITE, RT.TOPIC, "bar", False),
    # hosts
    *[(HOSTS, who, host, op, RT.TOPIC, name, want) for who, host, wants in (
        ("alice", LOCAL, (True, False, True)), ("alice", HOST1, (False, False, False)),
        ("alice", HOST2, (True, False, False)), ("bob", LOCAL, (False, False, True)),
        ("bob", HOST1, (False, False, False)), ("bob", HOST2, (False, True, True)))
      for (op, name), want in zip(((Op.READ, "foo"), (Op.READ, "bar"), (Op.DESCRIBE, "bar")), wants)],
    # many ACLs: prefixes, a wildcard group ACL, a deny on a prefix
    (MANY, "bob", LOCAL, Op.READ, RT.TOPIC, "green1", True),
    (MANY, "bob", LOCAL, Op.WRITE, RT.GROUP, "wheel", False),
    (MANY, "bob", LOCAL, Op.READ, RT.TOPIC, "alpha", False),
    (MANY, "bob", LOCAL, Op.WRITE, RT.GROUP, "arbitrary", True),
    (MANY, "bob", LOCAL, Op.READ, RT.TOPIC, "ala", False),
    (MANY, "alice", LOCAL, Op.READ, RT.TOPIC, "alpha9", True),
    (MANY, "alice", LOCAL, Op.READ, RT.TOPIC, "betamax4", True),
    (MANY, "alice", LOCAL, Op.READ, RT.TOPIC, "green1", False),
    # prefix ACLs
    (PREFIXES, "bob", LOCAL, Op.WRITE, RT.TOPIC, "foobarr", True),
    (PREFIXES, "bob", LOCAL, Op.READ, RT.TOPIC, "goobar", False),
    (PREFIXES, "bob", LOCAL, Op.READ, RT.TOPIC, "fooa", True),
    (PREFIXES, "alice", LOCAL, Op.DESCRIBE, RT.TOPIC, "fooa", True),
    (PREFIXES, "alice", LOCAL, Op.WRITE, RT.TOPIC, "bar", False),
    # a literal ACL whose name is a prefix of the resource does not apply
    ([acl(RT.TOPIC, "foo", PT.LITERAL, "User:bob", "*", Op.READ, ALLOW)], "bob", LOCAL, Op.READ, RT.TOPIC,
     "foobar", False),
    # resource types are separate
    ([acl(RT.GROUP, "foo", PT.LITERAL, "User:bob", "*", Op.READ, ALLOW)], "bob", LOCAL, Op.READ, RT.TOPIC,
     "foo", False),
    # nothing at all: denied (allow.everyone.if.no.acl.found is off)
    ([], "bob", LOCAL, Op.READ, RT.TOPIC, "foo", False),
]


@pytest.mark.parametrize("acls,user,host,op,rt,name,allowed", CASES)
def test_decision_table(acls, user, host, op, rt, name, allowed):
    assert Authorizer(acls=acls).authorize(f"User:{user}", host, op, rt, name) is allowed


def test_allow_everyone_if_no_acl_found_applies_only_to_resources_without_acls():
    acls = [acl(RT.TOPIC, "topic1", PT.LITERAL, "User:Alice", "*", Op.READ, ALLOW)]
    for allow in (True, False):
        authorizer = Authorizer({"User:alice", "User:chris"}, allow, acls)
        assert not authorizer.authorize("User:Bob", LOCAL, Op.READ, RT.TOPIC, "topic1")
        assert authorizer.authorize("User:Bob", LOCAL, Op.READ, RT.TOPIC, "topic2") is allow
    # a wildcard or prefix ACL of anyone counts as an ACL on the resource
    authorizer = Authorizer((), True, [acl(RT.TOPIC, "t", PT.PREFIXED, "User:x", "*", Op.READ, ALLOW)])
    assert not authorizer.authorize("User:Bob", LOCAL, Op.READ, RT.TOPIC, "topic2")
    assert authorizer.authorize("User:Bob", LOCAL, Op.READ, RT.TOPIC, "other")


def test_super_users_pass_everything_even_a_deny():
    acls = [acl(RT.TOPIC, "*", PT.LITERAL, "User:*", "*", Op.ALL, DENY)]
    authorizer = Authorizer(parse_super_users("User:alice; User:chris;"), False, acls)
    assert authorizer.authorize("User:alice", LOCAL, Op.WRITE, RT.TOPIC, "x")
    assert authorizer.authorize("User:chris", LOCAL, Op.CLUSTER_ACTION, RT.CLUSTER, "kafka-cluster")
    assert not authorizer.authorize("User:bob", LOCAL, Op.READ, RT.TOPIC, "x")
    with pytest.raises(ValueError):
        parse_super_users("alice")


def test_authorized_operations_bits():
    authorizer = Authorizer(acls=[acl(RT.TOPIC, "t", PT.LITERAL, "User:bob", "*", Op.READ, ALLOW),
                                  acl(RT.TOPIC, "t", PT.LITERAL, "User:bob", "*", Op.ALTER_CONFIGS, ALLOW)])
    bits = authorizer.authorized_operations("User:bob", LOCAL, RT.TOPIC, "t")
    assert bits == operation_bits([Op.READ, Op.DESCRIBE, Op.ALTER_CONFIGS, Op.DESCRIBE_CONFIGS])
    assert authorizer.authorized_operations("User:eve", LOCAL, RT.TOPIC, "t") == 0


@pytest.mark.parametrize("acls,allowed", [
    ([], False),
    ([acl(RT.TOPIC, "a", PT.LITERAL, "User:bob", "*", Op.WRITE, ALLOW)], True),
    ([acl(RT.TOPIC, "a", PT.LITERAL, "User:bob", "*", Op.WRITE, ALLOW),
      acl(RT.TOPIC, "a", PT.LITERAL, "User:bob", "*", Op.WRITE, DENY)], False),
    ([acl(RT.TOPIC, "abc", PT.PREFIXED, "User:bob", "*", Op.WRITE, ALLOW),
      acl(RT.TOPIC, "ab", PT.PREFIXED, "User:*", "*", Op.ALL, DENY)], False),
    ([acl(RT.TOPIC, "abc", PT.PREFIXED, "User:bob", "*", Op.WRITE, ALLOW),
      acl(RT.TOPIC, "abd", PT.PREFIXED, "User:*", "*", Op.ALL, DENY)], True),
    ([acl(RT.TOPIC, "*", PT.LITERAL, "User:*", "*", Op.WRITE, ALLOW)], True),
    ([acl(RT.TOPIC, "x", PT.LITERAL, "User:bob", "*", Op.WRITE, ALLOW),
      acl(RT.TOPIC, "*", PT.LITERAL, "User:bob", "*", Op.WRITE, DENY)], False),
    ([acl(RT.TOPIC, "x", PT.LITERAL, "User:bob", "10.0.0.1", Op.WRITE, ALLOW)], False),
    ([acl(RT.TOPIC, "x", PT.LITERAL, "User:bob", "*", Op.READ, ALLOW)], False),
])
def test_authorize_by_resource_type(acls, allowed):
    assert Authorizer(acls=acls).authorize_by_resource_type("User:bob", LOCAL, Op.WRITE, RT.TOPIC) is allowed


def test_create_validates_and_deduplicates():
    authorizer = Authorizer()
    good = acl(RT.TOPIC, "t", PT.LITERAL, "User:bob", "*", Op.READ, ALLOW)
    results = authorizer.create([
        good, good,
        acl(RT.CLUSTER, "other", PT.LITERAL, "User:bob", "*", Op.ALTER, ALLOW),
        acl(RT.TOPIC, "", PT.LITERAL, "User:bob", "*", Op.READ, ALLOW),
        acl(RT.ANY, "t", PT.LITERAL, "User:bob", "*", Op.READ, ALLOW),
        acl(RT.TOPIC, "t", PT.MATCH, "User:bob", "*", Op.READ, ALLOW),
        acl(RT.TOPIC, "t", PT.LITERAL, "User:bob", "*", Op.ANY, ALLOW),
        acl(RT.TOPIC, "t", PT.LITERAL, "User:bob", "*", Op.READ, Perm.ANY),
        acl(RT.TOPIC, "t", PT.LITERAL, "bob", "*", Op.READ, ALLOW),
        acl(RT.TOPIC, "t", PT.LITERAL, "", "*", Op.READ, ALLOW),
    ])
    assert results[:2] == [None, None]
    assert results[2] == "The only valid name for the CLUSTER resource is kafka-cluster"
    assert results[3] == "Invalid empty resource name"
    assert results[4] == "Invalid resourceType ANY"
    assert results[5] == "Invalid patternType MATCH"
    assert results[6] == "Invalid operation ANY"
    assert results[7] == "Invalid permissionType ANY"
    assert results[8].startswith("Could not parse principal") and results[9].startswith("Could not parse principal")
    assert authorizer.acls == [good]


def test_filters_describe_and_delete():
    literal = acl(RT.TOPIC, "foo", PT.LITERAL, "User:a", "*", Op.READ, ALLOW)
    wildcard = acl(RT.TOPIC, "*", PT.LITERAL, "User:a", "*", Op.READ, ALLOW)
    prefixed = acl(RT.TOPIC, "fo", PT.PREFIXED, "User:b", "h", Op.WRITE, DENY)
    other = acl(RT.GROUP, "foo", PT.LITERAL, "User:a", "*", Op.READ, ALLOW)
    authorizer = Authorizer(acls=[literal, wildcard, prefixed, other])
    assert authorizer.describe(AclFilter()) == [literal, wildcard, prefixed, other]
    assert authorizer.describe(AclFilter(RT.TOPIC, "foo", PT.MATCH)) == [literal, wildcard, prefixed]
    assert authorizer.describe(AclFilter(RT.TOPIC, "foo", PT.ANY)) == [literal]
    assert authorizer.describe(AclFilter(RT.TOPIC, "fo", PT.PREFIXED)) == [prefixed]
    assert authorizer.describe(AclFilter(RT.TOPIC, "foo", PT.LITERAL)) == [literal]
    assert authorizer.describe(AclFilter(RT.ANY, None, PT.ANY, "User:b")) == [prefixed]
    assert authorizer.describe(AclFilter(host="h")) == [prefixed]
    assert authorizer.describe(AclFilter(operation=Op.READ, permission_type=ALLOW)) == [literal, wildcard, other]
    results = authorizer.delete([AclFilter(RT.TOPIC, "foo", PT.MATCH, "User:a"), AclFilter(RT.GROUP),
                                 AclFilter(RT.UNKNOWN), AclFilter(operation=Op.UNKNOWN)])
    assert results == [[literal, wildcard], [other], "Unknown patternFilter.", "Unknown entryFilter."]
    assert authorizer.acls == [prefixed]
    assert not authorizer.authorize("User:a", LOCAL, Op.READ, RT.TOPIC, "foo")


def test_changes_are_reported_for_persistence(tmp_path):
    from kafkaemu.auth import acl_file
    authorizer = Authorizer(on_change=lambda acls: acl_file.save(str(tmp_path), acls))
    one = acl(RT.TOPIC, "t", PT.PREFIXED, "User:bob", "*", Op.READ, ALLOW)
    authorizer.create([one])
    assert acl_file.load(str(tmp_path)) == [one]
    authorizer.delete([AclFilter()])
    assert acl_file.load(str(tmp_path)) == []
    (tmp_path / "acls.json").write_text("{not json")
    assert acl_file.load(str(tmp_path)) == []
    assert (tmp_path / "acls.json.corrupt").exists()


def test_ten_thousand_acls_keep_a_check_to_a_few_lookups():
    acls = [acl(RT.TOPIC, f"topic-{i}", PT.LITERAL, f"User:u{i}", "*", Op.READ, ALLOW) for i in range(10000)]
    authorizer = Authorizer(acls=acls)
    buckets = list(authorizer._buckets(RT.TOPIC, "topic-5"))
    assert len(buckets) == 1 and len(buckets[0]) == 1
    assert authorizer.authorize("User:u5", LOCAL, Op.READ, RT.TOPIC, "topic-5")


def test_more_new_acls_than_one_batch_takes_are_refused_whole():
    from kafkaemu.auth.authorizer import MAX_ACLS_PER_REQUEST, TooManyAcls
    authorizer = Authorizer()
    many = [acl(RT.TOPIC, f"t{i}", PT.LITERAL, "User:bob", "*", Op.READ, ALLOW)
            for i in range(MAX_ACLS_PER_REQUEST + 1)]
    with pytest.raises(TooManyAcls):
        authorizer.create(many)
    assert len(authorizer) == 0
    assert authorizer.create(many[:MAX_ACLS_PER_REQUEST]) == [None] * MAX_ACLS_PER_REQUEST
    assert authorizer.create(many) == [None] * len(many)  # only one of them is new

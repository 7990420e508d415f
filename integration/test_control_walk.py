"""Every operation of the control table, called through all three ways in: the HTTP API, the
``KafkaEmulator`` method(s) made from it and ``kafkaemu ctl`` — each against a real server whose
state is prepared the same way before every call (a topic, a group member, an open transaction,
a fault rule, a snapshot, a stopped node where the operation needs one)."""
from __future__ import annotations

import http.client
import inspect
import json

import pytest

from kafkaemu.control import cli
from kafkaemu.control.params import ControlError, duration_ms
from kafkaemu.control.python_api import mapping
from kafkaemu.control.table import OPS
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.testing import KafkaEmulator
from kafkaemu.testing.raw_client import connect, decode_reply, encode_request, read_reply

# What each operation is called with (a function of the prepared state where it needs an id), and
# what it needs besides the common state. Every operation of the table must be here.
EXAMPLES = {
    "routes": {}, "state": {"internal": True},
    "clock_get": {}, "clock_advance": {"ms": "2s"}, "clock_set": {"now_ms": lambda s: s["now_ms"] + 5000},
    "expire_member": {"group": "g", "client_id": "walker"},
    "faults": {}, "fault_add": {"api": "Heartbeat", "error": "NOT_COORDINATOR", "count": 2},
    "fault_remove": {"id": lambda s: s["fault_id"]}, "faults_clear": {},
    "nodes": {}, "node_stop": {"node": 1}, "node_start": {"node": 1},
    "leader_move": {"topic": "t", "partition": 1, "node": 1}, "coordinator_move": {"group": "g", "node": 1},
    "txn_coordinator_move": {"transactional_id": "tx", "node": 1},
    "transaction": {"transactional_id": "tx"}, "transaction_hold": {"transactional_id": "tx"},
    "transaction_release": {"transactional_id": "tx"}, "transaction_abort": {"transactional_id": "tx"},
    "transaction_time_out": {"transactional_id": "tx"}, "transaction_fence": {"transactional_id": "tx"},
    "api_version_caps": {}, "api_version_cap": {"api": "Fetch", "max_version": 11},
    "api_version_uncap": {"api": "Metadata"}, "api_version_caps_clear": {},
    "request_log_config": {"enabled": True}, "requests": {"errors": True}, "requests_clear": {},
    "topics": {}, "topic": {"topic": "t"}, "topic_create": {"name": "new", "partitions": 3},
    "topic_delete": {"topic": "t"},
    "groups": {}, "group": {"group": "g"}, "journal_get": {"group": "g"},
    "await_group": {"group": "g", "members": 1, "timeout_ms": "5s"},
    "await_lag": {"group": "g", "topic": "t", "timeout_ms": "5s"},
    "await_offset": {"topic": "t", "partition": 0, "offset": 0, "timeout_ms": "5s"},
    "snapshot_list": {}, "snapshot_save": {"name": "s2"}, "snapshot_restore": {"name": "s"},
    "snapshot_delete": {"name": "s"}, "reset": {},
    "schema_subjects": {}, "schema_subject_names": {"deleted": True}, "schema_subject": {"subject": "t-value"}, "schema_journal": {"after": -1, "limit": 10},
    "acls": {"resource_type": "topic"}, "acls_remove": {"principal": "User:walker"},
    "acl_add": {"resource_type": "topic", "resource_name": "t", "principal": "User:walker", "operation": "read"},
    "denials": {}, "scram_users": {}, "scram_user_add": {"user": "carol", "password": "pw"},
    "scram_user_remove": {"user": "walker"}, "delegation_tokens": {},
    "share_groups": {}, "share_group": {"group": "sg"}, "share_records": {"group": "sg", "topic": "st", "partition": 0},
    "release_share_record": {"group": "sg", "topic": "st", "partition": 0, "offset": 0},
    "await_share_group": {"group": "sg", "members": 1, "timeout_ms": "5s"},
    "await_share_offset": {"group": "sg", "topic": "st", "partition": 0, "offset": 0, "timeout_ms": "5s"},
    "client_quotas": {}, "client_quota_set": {"key": "producer_byte_rate", "value": 1048576, "client_id": "walker"},
    "client_quota_remove": {"key": "producer_byte_rate", "user": "<default>"},
    "telemetry": {},
    "records_produce": {"topic": "t", "records": ["v", {"key": "k", "value": "w", "headers": {"h": "1"}}]},
    "records_read": {"topic": "t", "offset": "beginning"},
    "records_consume": {"group": "walk-reader", "topic": "t"},
}
NEEDS_A_STOPPED_NODE = {"node_start"}
# Python parameter names that stand for an operation's parameter of another name.
PY_ALIASES = {"node_id": "node", "rule_id": "id", "when": "now_ms", "group_id": "group", "timeout": "timeout_ms"}


@pytest.fixture(scope="module")
def emulator():
    # authorization on (everyone allowed while there is no ACL), for the ACL operations
    with KafkaEmulator(manual_clock=True, control_port=0, nodes=2, group_initial_rebalance_delay_ms=0,
                       schema_registry=True, authorizer=True, allow_everyone_if_no_acl_found=True) as e:
        yield e


def request(sock, api_key: int, version: int, body: dict, correlation_id: int, client_id: str = "walker"):
    sock.sendall(encode_request(api_key, version, body, correlation_id, client_id))
    return decode_reply(api_key, version, read_reply(sock), correlation_id)


SUBSCRIPTION = b"\x00\x00" + b"\x00\x00\x00\x01" + b"\x00\x01t" + b"\xff\xff\xff\xff"   # v0: topic t, no user data


def prepare(e: KafkaEmulator, op: str) -> dict:
    """The same state before every call: topic t (2 partitions), group g with one member (client
    id "walker", no SyncGroup, so it stays), transactional id tx with an open transaction on t-0,
    a fault rule on Produce, snapshot s and the request log on."""
    e.reset()
    for name in e.snapshots():
        e.delete_snapshot(name["name"])
    e.create_topic("t", partitions=2)
    e.move_coordinator("g", 0)
    e.move_transaction_coordinator("tx", 0)
    with connect(e) as sock:
        joined = request(sock, ApiKey.JOIN_GROUP, 5, {
            "group_id": "g", "session_timeout_ms": 30000, "rebalance_timeout_ms": 30000, "member_id": "",
            "group_instance_id": "walker-1", "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": SUBSCRIPTION}]}, correlation_id=2)
        assert joined.error_code == 0, joined
        pid = request(sock, ApiKey.INIT_PRODUCER_ID, 1, {"transactional_id": "tx", "transaction_timeout_ms": 60000},
                      correlation_id=3)
        assert pid.error_code == 0, pid
        added = request(sock, ApiKey.ADD_PARTITIONS_TO_TXN, 1, {
            "v3_and_below_transactional_id": "tx", "v3_and_below_producer_id": pid.producer_id,
            "v3_and_below_producer_epoch": pid.producer_epoch,
            "v3_and_below_topics": [{"name": "t", "partitions": [0]}]}, correlation_id=4)
        assert added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == 0
    e.call(_share_group)
    fault = e.inject_fault("Produce", error="NOT_LEADER_OR_FOLLOWER", times=None)
    e.snapshot("s")
    e.enable_request_log()
    e.cap_api_version("Metadata", 9)
    e.add_scram_user("walker", "walker-pw")
    e.add_acl("group", "other", "User:walker", "read")
    if op in NEEDS_A_STOPPED_NODE:
        e.stop_node(1)
    if op.startswith("schema_"):   # a subject in the schema registry
        import urllib.request
        urllib.request.urlopen(urllib.request.Request(
            e.get_schema_registry_url() + "/subjects/t-value/versions", data=b'{"schema": "\\"string\\""}',
            headers={"Content-Type": "application/json"}, method="POST"), timeout=30).read()
    return {"fault_id": fault["id"], "now_ms": e.now_ms()}


def _share_group(broker) -> None:
    """Share group sg: member walker-share holds the three records of st-0 (from offset 0)."""
    from kafkaemu.core.modern import TopicMeta
    from kafkaemu.core.share.requests import ShareHeartbeat
    from kafkaemu.storage.record_batch import build_batch
    t = broker.topics.create("st", 1, {})
    broker.coordinator.share_group_heartbeat(broker.now_ms, ShareHeartbeat("sg", "walker-share", 0,
                                                                           subscribed_topic_names=["st"]),
                                             {"st": TopicMeta("st", t.topic_id, 1)})
    t.partitions[0].append(build_batch([(b"k", b"v", [], broker.now_ms)] * 3), broker.now_ms)
    shares = broker.shares
    shares.offsets_altered(broker.now_ms, "sg", t.topic_id, 0, 0)
    assert shares.acquire(broker.now_ms, "sg", "walker-share", t.topic_id, 0, 10, [(0, 2)])


def example(op: str, state: dict) -> dict:
    return {k: v(state) if callable(v) else v for k, v in EXAMPLES[op].items()}


def over_http(e: KafkaEmulator, op: str, params: dict):
    spec = OPS[op]
    path, rest = spec.path, dict(params)
    for key in spec.path_params:
        path = path.replace("{" + key + "}", str(rest.pop(key)))
    body = None
    if spec.method == "GET" and rest:
        path += "?" + "&".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in rest.items())
    elif rest:
        body = json.dumps(rest)
    host, port = e.control_url.split("//")[1].rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request(spec.method, path, body=body, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


def ctl_argv(op: str, params: dict) -> list[str]:
    """The command line of the operation's first ctl command with these parameters."""
    spec = OPS[op]
    command = spec.cli[0]
    argv = command.words.split()
    for name in command.positional:
        argv.append(str(params[name]))
    for name, value in params.items():
        if name in command.positional or command.fixed.get(name) == value:
            continue
        flag = command.flags.get(name, "--" + name.replace("_", "-"))
        if spec.params[name].kind == "flag":
            argv.append(flag if value else flag.replace("--", "--no-", 1))
        elif spec.params[name].kind == "mapping":
            argv += [x for k, v in value.items() for x in (flag, f"{k}={v}")]
        else:
            argv += [flag, str(value)]
    return argv


def python_args(op: str, py, params: dict) -> dict:
    _, signature = mapping(OPS[op], py)
    kwargs = {}
    for name, p in signature.parameters.items():
        source = PY_ALIASES.get(name, name)
        if source not in params and name == "name":
            source = "topic" if "topic" in params else source
        if source in params:
            value = params[source]
            kwargs[name] = duration_ms(name, value) / 1000 if name == "timeout" else value
        elif p.default is inspect.Parameter.empty:
            pytest.fail(f"KafkaEmulator.{py.name}: no example value for its parameter {name}")
    return kwargs


def test_every_operation_has_an_example():
    assert set(EXAMPLES) == set(OPS), "add an example for each new operation (and remove old ones)"


@pytest.mark.parametrize("op", sorted(OPS))
def test_every_operation_answers_alike_through_http_python_and_ctl(emulator, op, capsys):
    e = emulator
    state = prepare(e, op)
    params = example(op, state)
    status, http_answer = over_http(e, op, params)
    assert status == 200, http_answer

    for py in OPS[op].py:
        state = prepare(e, op)
        params = example(op, state)
        try:
            getattr(e, py.name)(**python_args(op, py, params))
        except ControlError as exc:  # pragma: no cover (the failure message)
            pytest.fail(f"KafkaEmulator.{py.name} refused: {exc.body()}")

    if not OPS[op].cli:   # produce and consume: ctl commands of their own (integration/test_control_records.py)
        return
    state = prepare(e, op)
    params = example(op, state)
    capsys.readouterr()
    code = cli.main(["--url", e.control_url, "--json", *ctl_argv(op, params)])
    out = capsys.readouterr()
    assert code == 0, out.err
    ctl_answer = json.loads(out.out)
    if isinstance(http_answer, dict):
        assert set(ctl_answer) == set(http_answer)

"""Fault rules, API version caps and the request log, through the sans-IO connection."""
import pytest

from kafkaemu.control.params import BadRequest, ControlError
from kafkaemu.protocol.api_keys import ApiKey

from .harness import Env


def create(client, name, partitions=1):
    topic = {"name": name, "num_partitions": partitions, "replication_factor": 1, "assignments": [], "configs": []}
    return client.call(ApiKey.CREATE_TOPICS, 7, {"topics": [topic], "timeout_ms": 1000, "validate_only": False})


def metadata(client, *topics, version=12):
    return client.call(ApiKey.METADATA, version, {"topics": [{"topic_id": b"\0" * 16, "name": t} for t in topics],
                                                  "allow_auto_topic_creation": False,
                                                  "include_topic_authorized_operations": False})


def test_a_rule_by_names_fires_its_count_and_reports_it():
    env = Env()
    rule = env.op("fault_add", api="CreateTopics", error="POLICY_VIOLATION", count=2)
    assert (rule["id"], rule["api_key"], rule["error_code"], rule["count"], rule["fired"]) == (1, 19, 44, 2, 0)
    c = env.client()
    assert [create(c, n).topics[0].error_code for n in ("x1", "x2", "x3")] == [44, 44, 0]
    [report] = env.op("faults")["faults"]
    assert (report["fired"], report["active"]) == (2, False)   # spent, still reported
    assert env.op("fault_remove", id=1)["fired"] == 2
    assert env.op("faults")["faults"] == []


def test_rules_match_client_id_version_range_and_node():
    env = Env(nodes=2)
    env.op("fault_add", api="Metadata", error="UNKNOWN_SERVER_ERROR", until_removed=True, client_id="victim",
           min_version=9, max_version=12, node=1)
    env.broker.topics.create("t", 1, {})
    assert metadata(env.client("victim", node_id=1), "t").topics[0].error_code == -1
    assert metadata(env.client("other", node_id=1), "t").topics[0].error_code == 0     # client id
    assert metadata(env.client("victim", node_id=0), "t").topics[0].error_code == 0    # node
    assert metadata(env.client("victim", node_id=1), "t", version=8).topics[0].error_code == 0  # version
    assert env.op("faults")["faults"][0]["fired"] == 1
    env.op("faults_clear")
    assert metadata(env.client("victim", node_id=1), "t").topics[0].error_code == 0


def test_a_partition_scoped_error_fails_only_that_partition_of_a_produce():
    env = Env()
    env.broker.topics.create("t", 3, {})
    env.op("fault_add", api="Produce", error="NOT_LEADER_OR_FOLLOWER", topic="t", partition=1, count=2)
    c = env.client()
    answer = c.produce_many("t", [0, 1, 2])
    errors = {p.index: (p.error_code, p.base_offset) for p in answer.responses[0].partition_responses}
    assert errors == {0: (0, 0), 1: (6, -1), 2: (0, 0)}
    # the failed partition's records were not appended, so the producer's retry cannot duplicate them
    assert [p.high_watermark for p in env.broker.store.get("t").partitions] == [1, 0, 1]
    # a request not naming partition 1 does not use up the rule
    c.produce_many("t", [0, 2])
    assert env.op("faults")["faults"][0]["fired"] == 1
    assert c.produce("t", 1, [b"again"]).responses[0].partition_responses[0].error_code == 6
    assert c.produce("t", 1, [b"third"]).responses[0].partition_responses[0].error_code == 0
    assert env.broker.store.get("t").partitions[1].high_watermark == 1


def test_a_topic_scoped_fetch_error_empties_that_partitions_data():
    env = Env()
    env.broker.topics.create("t", 1, {})
    c = env.client()
    c.produce("t", 0, [b"a"])
    env.op("fault_add", api="Fetch", error="OFFSET_OUT_OF_RANGE", topic="t")
    part = c.fetch("t", 0).responses[0].partitions[0]
    assert (part.error_code, part.high_watermark, part.records) == (1, -1, b"")
    assert c.fetch("t", 0).responses[0].partitions[0].records


def test_black_hole_neither_handles_nor_answers_and_drop_closes_after_handling():
    env = Env()
    env.op("fault_add", api="CreateTopics", black_hole=True)
    c = env.client()
    assert create(c, "hole") is None and env.broker.store.get("hole") is None and not c.aborted
    env.op("fault_add", api="CreateTopics", drop_connection=True)
    d = env.client()
    assert create(d, "dropped") is None and d.aborted
    assert env.broker.store.get("dropped") is not None   # handled, the answer lost


def test_a_delayed_reply_waits_for_the_manual_clock():
    env = Env()
    env.op("fault_add", api="ApiVersions", delay_ms="2s")
    c = env.client()
    assert c.call(ApiKey.API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"}) is None
    env.op("clock_advance", ms="1999ms")
    assert c.replies() == []
    env.op("clock_advance", ms=1)
    assert c.replies()[0].error_code == 0


@pytest.mark.parametrize("params,message", [
    ({"api": "Hartbeat", "error": "NOT_COORDINATOR"}, "did you mean Heartbeat"),
    ({"api": "Heartbeat", "error": "NOT_COORDINATER"}, "did you mean NOT_COORDINATOR"),
    ({"api": 999, "error": 16}, "unknown API|does not implement"),
    ({"api": "Heartbeat", "error": 12345}, "not a Kafka error code"),
    ({"api": "Heartbeat"}, "give an error"),
    ({"api": "Heartbeat", "error": 16, "count": 0}, "at least 1"),
    ({"api": "Heartbeat", "delay_ms": "-1s"}, "must not be negative"),
    ({"api": "Heartbeat", "black_hole": True, "error": 16}, "black_hole never answers"),
    ({"api": "Produce", "error": 6, "partition": 1}, "partition needs topic"),
    ({"api": "Produce", "error": 6, "min_version": 5, "max_version": 3}, "above max_version"),
    ({"api": "Produce", "error": 6, "node": 7}, "no node 7"),
    ({"api": "Produce", "error": 6, "until_removed": "maybe"}, "true or false"),
])
def test_bad_rules_are_refused_and_add_nothing(params, message):
    env = Env()
    with pytest.raises(BadRequest, match=message):
        env.op("fault_add", **params)
    assert env.op("faults")["faults"] == []
    with pytest.raises(ControlError, match="no fault rule 3"):
        env.op("fault_remove", id=3)


def test_a_version_cap_lowers_what_api_versions_advertises():
    env = Env()
    c = env.client()

    def advertised():
        reply = c.call(ApiKey.API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
        return {k.api_key: (k.min_version, k.max_version) for k in reply.api_keys}
    full = advertised()
    env.op("api_version_cap", api="Fetch", max_version=4)
    env.op("api_version_cap", api="Metadata", max_version=-1)   # below the lowest: not advertised
    capped = advertised()
    assert capped[1] == (full[1][0], 4) and 3 not in capped and capped[0] == full[0]
    listed = {a["api"]: a["advertised_max"] for a in env.op("api_version_caps")["apis"]}
    assert listed["Fetch"] == 4 and listed["Produce"] == full[0][1]
    env.op("api_version_uncap", api="Fetch")
    with pytest.raises(ControlError, match="has no version cap"):
        env.op("api_version_uncap", api="Fetch")
    env.op("api_version_caps_clear")
    assert advertised() == full


def test_the_request_log_is_off_until_switched_on_and_records_what_was_answered():
    env = Env()
    env.broker.topics.create("t", 2, {})
    c = env.client("logged")
    c.produce("t", 0, [b"before"])
    assert env.op("requests")["entries"] == []
    env.op("request_log_config", enabled=True)
    c.produce("t", 0, [b"one"])
    env.op("fault_add", api="Produce", error="NOT_LEADER_OR_FOLLOWER", topic="t", partition=1)
    c.produce_many("t", [0, 1])
    c.produce("t", 0, [b"fire and forget"], acks=0)
    entries = env.op("requests")["entries"]
    assert [(e["seq"], e["api"], e["version"], e["client_id"], e["error_codes"], e["outcome"]) for e in entries] == [
        (1, "Produce", 9, "logged", [], "answered"),
        (2, "Produce", 9, "logged", ["NOT_LEADER_OR_FOLLOWER"], "answered"),
        (3, "Produce", 9, "logged", [], "no_response")]
    first = entries[0]
    assert (first["node"], first["connection"], first["correlation_id"], first["fault"]) == (0, c.conn.connection_id,
                                                                                            2, None)
    assert first["latency_ms"] >= 0 and "request" not in first
    assert entries[1]["fault"] == 1
    assert [e["seq"] for e in env.op("requests", errors=True)["entries"]] == [2]
    assert [e["seq"] for e in env.op("requests", after=2)["entries"]] == [3]
    assert [e["seq"] for e in env.op("requests", last=1)["entries"]] == [3]
    assert env.op("requests", api="Fetch")["entries"] == []


def test_the_request_log_keeps_decoded_bodies_on_request_and_its_capacity():
    env = Env()
    env.broker.topics.create("t", 1, {})
    env.op("request_log_config", enabled=True, bodies=True, capacity=2)
    c = env.client()
    for value in (b"a", b"b", b"c"):
        c.produce("t", 0, [value])
    status = env.op("requests")
    assert [e["seq"] for e in status["entries"]] == [2, 3] and status["evicted"] == 1
    entry = status["entries"][-1]
    assert entry["request"]["topic_data"][0]["name"] == "t"
    assert entry["response"]["responses"][0]["partition_responses"][0]["base_offset"] == 2
    assert isinstance(entry["request"]["topic_data"][0]["partition_data"][0]["records"], str)  # base64
    env.op("requests_clear")
    assert env.op("requests")["entries"] == [] and env.op("requests")["next_seq"] == 4
    env.op("request_log_config", enabled=False)
    c.produce("t", 0, [b"d"])
    assert env.op("requests")["entries"] == []

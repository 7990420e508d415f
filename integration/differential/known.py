"""The differences between Kafka's answers and kafkaemu's that are known and explained.

A difference the suite finds passes only when an entry here explains it: on purpose (kafkaemu
differs by design, the reason says why) or open (not yet fixed; ``owner`` names the branch
rebuilding that part, the reason what Kafka does). docs/fidelity.md lists every one found.
An entry matches on the API, the field's path (a regular expression) and optionally the scenario.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Known:
    api: str
    path: str
    reason: str
    on_purpose: bool
    owner: str = ""          # for an open one: the branch that owns the code (docs/fidelity.md)
    scenario: str = ".*"

    def explains(self, api: str, scenario: str, path: str) -> bool:
        return (self.api == api and re.fullmatch(self.path, path) is not None
                and re.fullmatch(self.scenario, scenario) is not None)


REDESIGN = "redesign"       # the group managers (issue 27)
SHAREPLANE = "shareplane"   # the share data plane (issue 27, then 29's share findings)
SETTINGS = "settings"       # broker and group configs (issue 27, then 30)
SURFACE = "surface44"       # answering as Kafka 4.4.0 (issue 29 item 4)

KNOWN: list[Known] = [
    # -- on purpose -------------------------------------------------------------------------------
    Known("Metadata", r"topics\[[^]]+\]\.(error_code|partitions\.length)", scenario="api-metadata", on_purpose=True,
          reason="kafkaemu creates an unknown topic at once when a Metadata request may auto-create it, and "
                 "answers it available (handlers/metadata.py); Kafka's KRaft broker answers "
                 "UNKNOWN_TOPIC_OR_PARTITION and asks its controller to create it, visible to a later request (so "
                 "the scenario's next requests, v4 and v5, still find it missing on Kafka)"),
    Known("Produce", r"responses\[[^]]+\]\.partition_responses\.0\.(error_code|base_offset|log_start_offset)",
          scenario="api-produce", on_purpose=True,
          reason="kafkaemu auto-creates an unknown topic on Produce too (handlers/produce.py); Kafka answers "
                 "UNKNOWN_TOPIC_OR_PARTITION and creates it on the producer's next Metadata request: a client "
                 "retries and sees the same outcome"),
    Known("DescribeConfigs", r"results\.0\.configs\[group\.initial\.rebalance\.delay\.ms\]\.(value|config_source)",
          on_purpose=True,
          reason="kafkaemu's initial rebalance delay is 150 ms where Kafka's is 3000 ms, so that test groups "
                 "form quickly (docs/groups.md); kafkaemu reports it as a static setting"),
    Known("ShareFetch", r"responses.*", scenario="api-sharefetch", on_purpose=True,
          reason="the first ShareFetch to reach a share partition: Kafka's SharePartition is still loading its "
                 "state from the share coordinator (asynchronously), so Kafka answers without the partition "
                 "and includes it (no records, error NONE) from the next fetch on, for any member id; "
                 "kafkaemu's share partitions are ready at once, so it answers the partition from the first "
                 "(measured against Kafka 4.4: a joined member's first fetch is answered without it too)"),
    Known("DescribeLogDirs", r"results\.\d+\.(total|usable)_bytes", on_purpose=True,
          reason="kafkaemu keeps logs in memory (without --data-dir): there is no disk to measure, so -1 "
                 "(unknown), as the protocol allows"),
    # -- answering as Kafka 4.4.0 (surface44; docs/kafka_4_4.md) -------------------------------------
    Known("ApiVersions", r"api_keys\[(83|84|85|86|87|94)\]", on_purpose=True,
          reason="Kafka's broker listener advertises the share coordinator's state RPCs (83-87) and "
                 "UnregisterController (94), which no client sends: kafkaemu keeps share-group state inside its "
                 "coordinator and emulates no controller quorum to unregister from"),
    # -- open: configs (settings) -------------------------------------------------------------------
    Known("DescribeConfigs", r"results\.0\.configs\[streams\.assignor\.name\]\.value", on_purpose=False,
          owner=SETTINGS, reason="a group's streams.assignor.name: Kafka 4.4 describes its default, sticky; "
                                 "kafkaemu describes it with no value"),
    Known("DescribeConfigs", r"results\.0\.configs\[[a-z.]+\]", scenario="api-describeconfigs",
          on_purpose=False, owner=SETTINGS,
          reason="a group resource's configs: Kafka 4.4 adds consumer/share/streams.assignment.interval.ms, "
                 "share.partition.max.record.locks, share.renew.acknowledge.enable, streams.assignor.name, "
                 "streams.initial.rebalance.delay.ms, streams.rack.aware.assignment.tags and the "
                 "errors.deadletterqueue ones, which kafkaemu's group configs lack"),
    Known("DescribeConfigs", r"results\.0\.configs\[[^]]+\]\.synonyms.*", on_purpose=False, owner=SETTINGS,
          reason="a topic config's synonyms: Kafka lists the broker config it defaults to by the broker's name "
                 "(log.segment.delete.delay.ms for file.delete.delay.ms, log.retention.bytes, ...), and none for "
                 "configs without a broker default (flush.ms, segment.ms, retention.ms at its default: "
                 "log.retention.hours is in other units); kafkaemu names the topic config itself where its broker "
                 "configs lack the synonym (handlers/broker_configs.py)"),
    # -- open: not fixed here ----------------------------------------------------------------------
    Known("Fetch", r"responses\.0\.partitions\.0\.(records|aborted_transactions\.length)", scenario="transaction",
          on_purpose=False, owner="kafka-ref (not fixed: the data path's read chunking)",
          reason="a read_committed Fetch from offset 0 over a committed and an aborted transaction: Kafka 4.4 "
                 "answers the first batch alone (and so no aborted transaction); kafkaemu answers every batch up "
                 "to the last stable offset with the aborted transaction. A consumer sees the same records"),
    Known("Produce", r"responses\[[^]]+\]\.partition_responses\.0\.error_message", scenario="data-path-bad-input",
          on_purpose=False, owner="kafka-ref (not fixed: which append errors carry a message)",
          reason="Kafka answers a CRC mismatch (CORRUPT_MESSAGE) and a truncated batch (INVALID_RECORD) without "
                 "an error message and a batch of magic 3 (CORRUPT_MESSAGE) with one; kafkaemu the other way "
                 "round for the last two. The error codes are the same"),
    # -- open: groups (redesign) and the share data plane (shareplane) -------------------------------
    Known("ConsumerGroupHeartbeat", r"(member_epoch|assignment\.topic_partitions\.length)", on_purpose=False,
          owner=REDESIGN,
          reason="Kafka 4.4's first heartbeat answers an empty assignment (the assignment follows in a later "
                 "heartbeat, and the member's epoch with it); kafkaemu answers the assignment at once. Both start a "
                 "new group at epoch 1 (ModernGroup), so the joining member's epoch is 2 in each"),
    Known("ConsumerGroupDescribe", r"groups\[[^]]+\]\.(group_epoch|assignment_epoch|members\.0\..*)", on_purpose=False,
          owner=REDESIGN, reason="follows from the first heartbeat's epochs and assignment (ConsumerGroupHeartbeat); "
                                 "Kafka also describes an unset regex as \"\" where kafkaemu sends null"),
    Known("ShareGroupHeartbeat", r"(member_epoch|assignment\.topic_partitions\.length)", on_purpose=False,
          owner=REDESIGN, reason="as ConsumerGroupHeartbeat: Kafka assigns in a later heartbeat"),
    Known("ShareGroupDescribe", r"groups\[[^]]+\]\.(group_epoch|assignment_epoch|members\.0\..*)", on_purpose=False,
          owner=REDESIGN, reason="follows from the first heartbeat's epochs and assignment"),
    Known("StreamsGroupHeartbeat", r"(status|task_offset_interval_ms|active_tasks\.length|member_epoch)",
          on_purpose=False, owner=REDESIGN,
          reason="Kafka 4.4 answers a status list (e.g. ASSIGNMENT_DELAYED) and task.offset.interval.ms "
                 "(60000), and assigns tasks in a later heartbeat: its joining member stays at the target "
                 "assignment's epoch 1 until then, while the group moves to 2; kafkaemu sends null status, 0 and "
                 "the tasks at once, so its member is at the group's epoch 2 (both start a group at epoch 1)"),
    Known("StreamsGroupDescribe", r"groups.*", on_purpose=False, owner=REDESIGN,
          reason="follows from the first heartbeat (Kafka's group is still Assigning, epoch 2 / assignment 1); "
                 "Kafka describes an unknown streams group with GROUP_ID_NOT_FOUND and a message"),
    Known("DescribeGroups", r"groups\[[^]]+\]\.authorized_operations", on_purpose=False, owner=REDESIGN,
          reason="Kafka sets a group's authorized operations only when it describes it without error; kafkaemu "
                 "sets them on a v6 GROUP_ID_NOT_FOUND too (core/coordinator.py)"),
]


def explain(api: str, scenario: str, path: str) -> Known | None:
    return next((k for k in KNOWN if k.explains(api, scenario, path)), None)

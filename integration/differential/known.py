"""The differences between Kafka's answers and kafkaemu's that are known and explained.

A difference the suite finds passes only when an entry here explains it: on purpose (kafkaemu
differs by design, the reason says why) or open (not yet fixed; ``owner`` names the branch
rebuilding that part, the reason what Kafka does). docs/fidelity.md lists every one found.
An entry matches on the API, the field's path (a regular expression) and optionally the scenario and
the exchange's label.
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
    label: str = ".*"        # the exchange's label in its scenario ("b joins")

    def explains(self, api: str, scenario: str, path: str, label: str = "") -> bool:
        return (self.api == api and re.fullmatch(self.path, path) is not None
                and re.fullmatch(self.scenario, scenario) is not None and re.fullmatch(self.label, label) is not None)


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
    # -- on purpose: the data path -----------------------------------------------------------------
    Known("Fetch", r"responses\.0\.partitions\.0\.(records|aborted_transactions\.length)", scenario="transaction",
          on_purpose=True,
          reason="a read_committed Fetch from offset 0 over a committed and an aborted transaction: Kafka reads "
                 "one log segment per fetch (LocalLog.read), and rolled a segment at the commit marker because "
                 "the scenario's records carry fixed 2023 timestamps and the marker is stamped now, more than "
                 "segment.ms apart (LogSegment.shouldRoll measures from the segment's first batch timestamp), "
                 "so it answered the first batch alone. kafkaemu's in-memory log has no segments and answers "
                 "every batch up to the last stable offset, with the aborted transaction, in one fetch "
                 "(docs/data_path.md); a consumer sees the same records"),
    # -- on purpose: the first modern-group heartbeat assigns at once (docs/groups.md, docs/share_groups.md)
    Known("ConsumerGroupHeartbeat", r"(member_epoch|assignment\.topic_partitions\.length)", on_purpose=True,
          reason="kafkaemu's first heartbeat answers the member with its assignment at once, so test consumers "
                 "start fetching one heartbeat sooner (as its 150 ms initial rebalance delay serves tests); Kafka "
                 "4.4 computes target assignments at most every consumer.assignment.interval.ms and may answer "
                 "the join with an empty assignment, assigning in a later heartbeat. Both start a new group at "
                 "epoch 1 (ModernGroup), so the joining member's epoch is 2 in each. A KIP-848 client takes "
                 "whatever assignment it is given"),
    Known("ConsumerGroupDescribe", scenario="(api|auth)-.*",
          path=r"groups\[[^]]+\]\.(group_epoch|assignment_epoch|members\[[^]]+\]\.(member_epoch|"
          r"assignment\..*|target_assignment\..*))", on_purpose=True,
          reason="follows from the first heartbeat's epochs and assignment (ConsumerGroupHeartbeat, on purpose)"),
    Known("ShareGroupHeartbeat", r"(member_epoch|assignment\.topic_partitions\.length)", on_purpose=True,
          reason="as ConsumerGroupHeartbeat: kafkaemu assigns in the first heartbeat, at the epoch of the join "
                 "(Kafka answered the scenario's at epoch 2 and assigned in a later heartbeat)"),
    Known("ShareGroupDescribe", scenario="(api|auth)-.*",
          path=r"groups\[[^]]+\]\.(group_epoch|assignment_epoch|members\[[^]]+\]\..*)", on_purpose=True,
          reason="follows from the first heartbeat's epochs and assignment (ShareGroupHeartbeat, on purpose)"),
    Known("client: Java", r"group (while member|after leaving)\.(group epoch|target assignment epoch)|"
          r"group while member\.members\.0\.epoch", scenario="Java: share group.*", on_purpose=True,
          reason="follows from the first heartbeat (ShareGroupHeartbeat, on purpose): Kafka 4.4 answered the "
                 "join at epoch 2 without partitions and assigned them at group epoch 3, once their share state "
                 "was initialized; kafkaemu assigns at the join's epoch 2, so each later epoch is one lower"),
    Known("StreamsGroupHeartbeat", r"(status(\..*)?|active_tasks\.length|member_epoch)",
          scenario="api-streamsgroupheartbeat", on_purpose=True,
          reason="as ConsumerGroupHeartbeat: kafkaemu assigns the tasks in the first heartbeat, so its joining "
                 "member is at the group's epoch 2; Kafka 4.4 answered the join without tasks and with the status "
                 "ASSIGNMENT_DELAYED, its member staying at the target assignment's epoch 1 until a later "
                 "heartbeat assigns (kafkaemu's status list is empty there, as Kafka's is when it has none)"),
    Known("StreamsGroupHeartbeat", r"(status(\..*)?|active_tasks\.length|member_epoch)",
          scenario="rebalance-streams", label=r"[a-z] joins", on_purpose=True,
          reason="a member joining a streams group that has members: kafkaemu computes the new target assignment "
                 "in the join itself (at the bumped group epoch, so the joining member is at that epoch, its status "
                 "empty); Kafka 4.4 answers the join at the previous target assignment's epoch with the status "
                 "ASSIGNMENT_DELAYED and assigns in a later heartbeat. The revocation and assignment that follow "
                 "are compared and identical"),
    Known("ShareGroupDescribe", r"groups\[[^]]+\]\.(group_epoch|assignment_epoch|members\[[^]]+\]\.member_epoch)",
          scenario="rebalance-share", on_purpose=True,
          reason="Kafka is one group epoch ahead from the first assignment on: it assigns a share group's partitions "
                 "only once the share coordinator has initialized their state (InitializeShareGroupState, "
                 "asynchronous after the join), and bumps the group epoch when that completes; kafkaemu's share "
                 "partitions are ready at once (as for ShareFetch), so its first assignment is at the join's epoch. "
                 "Every later step moves both by the same epochs"),
    Known("StreamsGroupDescribe", scenario="(api|auth)-.*",
          path=r"groups\[[^]]+\]\.(group_epoch|assignment_epoch|group_state|members\[[^]]+\]\."
          r"(member_epoch|(assignment|target_assignment)\.active_tasks\.length))", on_purpose=True,
          reason="follows from the first heartbeat (StreamsGroupHeartbeat, on purpose): Kafka's group is still "
                 "Assigning (epoch 2, assignment and member at 1), kafkaemu's is Stable with the tasks assigned "
                 "at epoch 2"),
]


def explain(api: str, scenario: str, path: str, label: str = "") -> Known | None:
    return next((k for k in KNOWN if k.explains(api, scenario, path, label)), None)

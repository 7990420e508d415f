"""Each client's admin API for consumer groups, seen the same way by the shared group scenarios
(integration/test_groups.py):

- ``listing(state=None)``: {group_id: {"protocol_type", "state", "type"}} (only groups in ``state``)
- ``describe(group)``: {"state", "protocol_type", "assignor", "members": [{"client_id", "host",
  "assigned": {(topic, partition)}, "topics": {subscribed topic}}]}
- ``offsets(group)``: {(topic, partition): (committed offset, metadata)}
- ``delete(group)``: None when deleted, else the Kafka error name (``"NON_EMPTY_GROUP"``)
- ``delete_offsets(group, [(topic, partition)])``, where the client has it

A fact the client's API does not report is None and named in ``unreported`` ("listing.state",
"describe.protocol_type", "member.topics"); ``filters_states``, ``deletes_groups`` and
``deletes_offsets`` say which optional calls the client has. States are Kafka's names ("Stable")."""
from __future__ import annotations

import asyncio

REQUEST_TIMEOUT_S = 10


class KafkaPythonAdmin:
    unreported: frozenset = frozenset()
    filters_states = deletes_groups = deletes_offsets = True

    def __init__(self, bootstrap: str):
        from kafka import KafkaAdminClient
        self._admin = KafkaAdminClient(bootstrap_servers=bootstrap)

    def listing(self, state: str | None = None) -> dict:
        groups = self._admin.list_groups(states_filter=[state] if state else None)
        return {g["group_id"]: {"protocol_type": g["protocol_type"], "state": g["group_state"], "type": g["group_type"]}
                for g in groups}

    def describe(self, group: str) -> dict:
        desc = self._admin.describe_groups([group])[group]
        # DescribeGroups v6 (KIP-1043): a group that does not exist is Dead with GROUP_ID_NOT_FOUND
        assert desc["error"] is None or (desc["group_state"] == "Dead" and "GroupIdNotFound" in desc["error"]), desc
        members = [{"client_id": m["client_id"], "host": m["client_host"],
                    "assigned": {(t["topic"], p) for t in m["member_assignment"]["assigned_partitions"]
                                 for p in t["partitions"]},
                    "topics": set(m["member_metadata"]["topics"])} for m in desc["members"]]
        return {"state": desc["group_state"], "protocol_type": desc["protocol_type"],
                "assignor": desc["protocol_data"], "members": members}

    def offsets(self, group: str) -> dict:
        got = self._admin.list_group_offsets({group: None})[group]
        return {(tp.topic, tp.partition): (om.offset, om.metadata) for tp, om in got.items()}

    def delete(self, group: str) -> str | None:
        import kafka.errors
        result = self._admin.delete_groups([group])[group]      # "OK" or an error class's name
        return None if result == "OK" else getattr(kafka.errors, result).message

    def delete_offsets(self, group: str, partitions) -> None:
        from kafka import TopicPartition
        result = self._admin.delete_group_offsets(group, [TopicPartition(t, p) for t, p in partitions])
        assert all(error.errno == 0 for error in result.values()), result

    def close(self) -> None:
        self._admin.close()


# librdkafka's enums named as Kafka names group states
_CONFLUENT_STATES = {"STABLE": "Stable", "EMPTY": "Empty", "DEAD": "Dead", "PREPARING_REBALANCE": "PreparingRebalance",
                     "COMPLETING_REBALANCE": "CompletingRebalance"}


class ConfluentAdmin:
    # librdkafka reports only whether a group is "simple" (no protocol type), and no subscriptions
    unreported = frozenset({"listing.protocol_type", "describe.protocol_type", "member.topics"})
    filters_states = deletes_groups = True
    deletes_offsets = False

    def __init__(self, bootstrap: str):
        from confluent_kafka.admin import AdminClient
        self._admin = AdminClient({"bootstrap.servers": bootstrap})

    def listing(self, state: str | None = None) -> dict:
        from confluent_kafka import ConsumerGroupState
        states = {ConsumerGroupState[k] for k, v in _CONFLUENT_STATES.items() if v == state} if state else None
        listed = self._admin.list_consumer_groups(states=states).result(REQUEST_TIMEOUT_S)
        assert not listed.errors, listed.errors
        return {g.group_id: {"protocol_type": None, "state": _CONFLUENT_STATES[g.state.name], "type": g.type.name.lower()}
                for g in listed.valid}

    def describe(self, group: str) -> dict:
        desc = self._admin.describe_consumer_groups([group])[group].result(REQUEST_TIMEOUT_S)
        members = [{"client_id": m.client_id, "host": m.host,
                    "assigned": {(tp.topic, tp.partition) for tp in m.assignment.topic_partitions},
                    "topics": None} for m in desc.members]
        return {"state": _CONFLUENT_STATES[desc.state.name], "protocol_type": None,
                "assignor": desc.partition_assignor, "members": members}

    def offsets(self, group: str) -> dict:
        from confluent_kafka import ConsumerGroupTopicPartitions
        got = self._admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group]
        return {(tp.topic, tp.partition): (tp.offset, tp.metadata or "")
                for tp in got.result(REQUEST_TIMEOUT_S).topic_partitions}

    def delete(self, group: str) -> str | None:
        from confluent_kafka import KafkaException
        try:
            self._admin.delete_consumer_groups([group])[group].result(REQUEST_TIMEOUT_S)
        except KafkaException as exc:
            return exc.args[0].name()
        return None

    def close(self) -> None:
        pass


class AiokafkaAdmin:
    """AIOKafkaAdminClient on an event loop of its own, driven from the test's thread."""
    # aiokafka sends ListGroups without states or types and has no delete calls
    unreported = frozenset({"listing.state", "listing.type"})
    filters_states = deletes_groups = deletes_offsets = False

    def __init__(self, bootstrap: str):
        from aiokafka.admin import AIOKafkaAdminClient
        self._loop = asyncio.new_event_loop()

        async def start():
            admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
            await admin.start()
            return admin
        self._admin = self._run(start())

    def _run(self, coro):
        return self._loop.run_until_complete(coro)

    def listing(self, state: str | None = None) -> dict:
        assert state is None, "aiokafka cannot filter groups by state"
        return {g[0]: {"protocol_type": g[1], "state": None, "type": None}
                for g in self._run(self._admin.list_consumer_groups())}

    def describe(self, group: str) -> dict:
        from aiokafka.coordinator.protocol import ConsumerProtocolMemberAssignment, ConsumerProtocolMemberMetadata
        [resp] = self._run(self._admin.describe_consumer_groups([group]))
        [g] = resp.groups
        error_code, group_id, state, protocol_type, protocol, members = g[:6]
        assert (error_code, group_id) == (0, group), g
        out = []
        for _member_id, client_id, host, metadata, assignment in members:
            assigned = ConsumerProtocolMemberAssignment.decode(assignment).assignment
            out.append({"client_id": client_id, "host": host,
                        "assigned": {(t, p) for t, ps in assigned for p in ps},
                        "topics": set(ConsumerProtocolMemberMetadata.decode(metadata).subscription)})
        return {"state": state, "protocol_type": protocol_type, "assignor": protocol, "members": out}

    def offsets(self, group: str) -> dict:
        got = self._run(self._admin.list_consumer_group_offsets(group))
        return {(tp.topic, tp.partition): (om.offset, om.metadata) for tp, om in got.items()}

    def close(self) -> None:
        self._run(self._admin.close())
        self._loop.close()

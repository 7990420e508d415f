"""The cluster's shape: nodes stopped and started, partition leaders and group coordinators moved."""
from __future__ import annotations

from ...storage.log_store import OFFSETS_TOPIC
from ..params import ControlError, boolean, choice, integer, text
from ..table import Cli, P, Py, op
from ..views import group_ids
from .base import ControlBase, log


class NodeOps(ControlBase):
    @op("GET", "/api/nodes", py=Py("nodes", lambda: {}, result="nodes"), cli=Cli("nodes"))
    def nodes(self) -> dict:
        """Every node with its address, whether it runs, whether it is a registered broker
        (UnregisterBroker removes it until it restarts) and a metadata quorum voter."""
        broker = self.broker
        offsets = broker.store.get(OFFSETS_TOPIC)
        leading: dict[int, int] = {}
        for topic in broker.store.topics.values():
            for p in topic.partitions:
                leader = broker.placement.partition_leader(p)
                leading[leader] = leading.get(leader, 0) + 1
        coordinating = {n: sum(1 for p in offsets.partitions if broker.placement.partition_leader(p) == n)
                        for n in broker.placement.listeners}
        return {"nodes": [{"node_id": n, "host": host, "port": port, "running": n not in broker.placement.stopped_nodes,
                           "registered": n not in broker.placement.unregistered,
                           "voter": n in broker.quorum.voters,
                           "leader_of": leading.get(n, 0), "offsets_partitions": coordinating[n]}
                          for n, (host, port) in sorted(broker.placement.listeners.items())]}

    def _running_nodes(self, excluding: int | None = None) -> list[int]:
        placement = self.broker.placement
        return [n for n in placement.node_ids if n not in placement.stopped_nodes and n != excluding]

    @op("POST", "/api/nodes/{node}/stop", node=P(integer(min=0), required=True, help="the node's id"),
        leaders=P(choice("move", "offline"), default="move",
                  help="move: its partitions and coordinators go to running nodes; offline: they have no leader"),
        py=Py("stop_node", lambda node_id, leaders="move": {"node": node_id, "leaders": leaders},
              doc="Stop a node's listener; its partitions and coordinators move to running nodes "
                  '(``leaders="offline"``: they stay without a leader until it starts).'),
        cli=Cli("node stop", "node", switches={"--offline": ("leaders", "offline")}))
    async def node_stop(self, node: int, leaders: str) -> dict:
        """Stop a node: its listener closes and its connections drop; the partitions it leads (and
        the groups it coordinates) move to the running nodes or go offline."""
        broker = self.broker
        self._node(node)
        if node in broker.placement.stopped_nodes:
            raise ControlError(409, f"node {node} is already stopped")
        others = self._running_nodes(excluding=node)
        if leaders == "move" and not others:
            raise ControlError(409, f"no other node runs to take over node {node}'s partitions; "
                                    f"stop it with leaders=offline")
        moved, offline = [], []
        led = [p for t in broker.store.topics.values() for p in t.partitions
               if broker.placement.partition_leader(p) == node]
        for i, p in enumerate(led):
            if leaders == "move":   # to another running replica of a reassigned partition, if it has one
                replicas = [r for r in broker.placement.replicas(p) if r in others]
                target = replicas[0] if replicas else others[i % len(others)]
                broker.placement.move_leader(p.topic.name, p.index, target)
                moved.append((p.topic.name, p.index, target))
            else:
                p.bump_leader_epoch()
                offline.append((p.topic.name, p.index))
        broker.placement.stopped_nodes.add(node)
        self._moved_by_stop[node] = moved
        self._offline_by_stop[node] = offline
        if self.server is not None:
            await self.server.stop_listener(node)
        log.info("node_stopped", node_id=node, moved=len(moved), offline=len(offline))
        return {"node": node, "running": False,
                "moved": [{"topic": t, "partition": p, "leader": n} for t, p, n in moved],
                "offline": [{"topic": t, "partition": p} for t, p in offline]}

    @op("POST", "/api/nodes/{node}/start", node=P(integer(min=0), required=True, help="the node's id"),
        restore_leaders=P(boolean, default=True, help="move the partitions its stop moved away back to it"),
        py=Py("start_node", lambda node_id, restore_leaders=True:
              {"node": node_id, "restore_leaders": restore_leaders}),
        cli=Cli("node start", "node", switches={"--keep-leaders": ("restore_leaders", False)}))
    async def node_start(self, node: int, restore_leaders: bool) -> dict:
        """Start a stopped node on its port of before; its offline partitions get it back as
        leader, and (by default) those its stop moved away return to it. A broker UnregisterBroker
        removed registers again, as a restarted Kafka broker does."""
        broker = self.broker
        self._node(node)
        if node not in broker.placement.stopped_nodes:
            raise ControlError(409, f"node {node} is running")
        if self.server is not None:
            try:
                await self.server.start_listener(node)
            except OSError as exc:
                raise ControlError(409, f"node {node} cannot listen on its port again: {exc}") from None
        broker.placement.stopped_nodes.discard(node)
        broker.placement.register(node)
        back = []
        for t, index in self._offline_by_stop.pop(node, []):
            topic = broker.store.get(t)
            if topic is not None and index < len(topic.partitions):
                topic.partitions[index].bump_leader_epoch()  # the offline partition elects its leader again
        for t, index, target in self._moved_by_stop.pop(node, []) if restore_leaders else []:
            topic = broker.store.get(t)
            if topic is not None and index < len(topic.partitions) \
                    and broker.placement.partition_leader(topic.partitions[index]) == target:
                broker.placement.move_leader(t, index, node)
                back.append({"topic": t, "partition": index, "leader": node})
        log.info("node_started", node_id=node, leaders_back=len(back))
        return {"node": node, "running": True, "returned": back}

    def _partition(self, topic: str, partition: int):
        t = self._topic(topic)
        if partition >= len(t.partitions):
            raise ControlError(404, f"topic {topic!r} has {len(t.partitions)} partitions, no partition {partition}")
        return t.partitions[partition]

    @op("POST", "/api/topics/{topic}/partitions/{partition}/leader", topic=P(text, required=True),
        partition=P(integer(min=0), required=True), node=P(integer(min=0), required=True, help="the new leader"),
        py=Py("move_leader", lambda topic, partition, node_id: {"topic": topic, "partition": partition,
                                                                 "node": node_id}, result="leader_epoch",
              doc="Elect ``node_id`` leader of a partition (clients get NOT_LEADER_OR_FOLLOWER or "
                  "NOT_COORDINATOR from the old node and follow Metadata); returns the new leader epoch."),
        cli=Cli("leader move", "topic", "partition", "node"))
    def leader_move(self, topic: str, partition: int, node: int) -> dict:
        """Elect ``node`` leader of a partition (a new leader epoch); clients get
        NOT_LEADER_OR_FOLLOWER from the old leader and follow Metadata."""
        plog = self._partition(topic, partition)
        self._live_target(node)
        epoch = self.broker.placement.move_leader(topic, partition, node)
        return {"topic": topic, "partition": plog.index, "leader": node, "leader_epoch": epoch}

    @op("POST", "/api/groups/{group}/coordinator", group=P(text, required=True),
        node=P(integer(min=0), required=True, help="the new coordinator"),
        py=Py("move_coordinator", lambda group, node_id: {"group": group, "node": node_id}),
        cli=Cli("coordinator move", "group", "node"))
    def coordinator_move(self, group: str, node: int) -> dict:
        """Move a group's coordinator: its __consumer_offsets partition gets a new leader (so do
        the other groups on that partition, listed in the answer)."""
        self._live_target(node)
        index = self.broker.placement.group_partition(group)
        epoch = self.broker.placement.move_leader(OFFSETS_TOPIC, index, node)
        sharing = [g for g in group_ids(self.broker) if self.broker.placement.group_partition(g) == index]
        return {"group": group, "coordinator": node, "offsets_partition": index, "leader_epoch": epoch,
                "groups_on_partition": sharing}

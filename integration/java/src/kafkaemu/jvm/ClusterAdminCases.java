package kafkaemu.jvm;

import static kafkaemu.jvm.Support.*;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.AddRaftVoterOptions;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.clients.admin.RaftVoterEndpoint;
import org.apache.kafka.clients.admin.RemoveRaftVoterOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.BrokerIdNotRegisteredException;
import org.apache.kafka.common.errors.DuplicateVoterException;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.errors.InvalidReplicaAssignmentException;
import org.apache.kafka.common.errors.InconsistentClusterIdException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.errors.VoterNotFoundException;

/**
 * The cluster administration APIs of a 3-node kafkaemu (--nodes 3) through the Java AdminClient:
 * reassignments that move replicas, elections, log dirs, the metadata quorum, config resources,
 * voters added and removed (KIP-853) and a broker unregistered.
 *
 * Usage: java kafkaemu.jvm.ClusterAdminCases CASE BOOTSTRAP; prints "PASS CASE" or "FAIL CASE: reason".
 */
public final class ClusterAdminCases {
    private ClusterAdminCases() {}

    public static void main(String[] args) {
        String name = args[0];
        try {
            switch (name) {
                case "reassign-elect" -> reassignAndElect(args[1]);
                case "log-dirs-quorum" -> logDirsAndQuorum(args[1]);
                case "configs" -> configs(args[1]);
                case "quorum-membership" -> quorumMembership(args[1]);
                default -> throw new CheckFailed("no case " + name);
            }
            System.out.println("PASS " + name);
            System.exit(0);
        } catch (Throwable e) {
            System.out.println("FAIL " + name + ": " + e);
            e.printStackTrace();
            System.exit(1);
        }
    }

    static TopicPartitionInfo partition(Admin admin, String topic, int index) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
        return d.partitions().get(index);
    }

    static List<Integer> ids(TopicPartitionInfo p) {
        return p.replicas().stream().map(n -> n.id()).collect(Collectors.toList());
    }

    static void reassignAndElect(String bootstrap) throws Exception {
        String topic = unique("jvm-reassign");
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, topic, 2);
            TopicPartition tp = new TopicPartition(topic, 0);
            admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(2, 0, 1)))))
                .all().get();
            waitUntil(10_000, "metadata shows replicas [2, 0, 1]", () -> {
                try { return ids(partition(admin, topic, 0)).equals(List.of(2, 0, 1)); }
                catch (Exception e) { return false; }
            });
            check(admin.listPartitionReassignments().reassignments().get().isEmpty(), "a reassignment still ongoing");

            // the preferred replica (2) leads after a preferred election, or already did
            Map<TopicPartition, Optional<Throwable>> elected =
                admin.electLeaders(ElectionType.PREFERRED, Set.of(tp)).partitions().get();
            check(elected.get(tp).isEmpty() || elected.get(tp).get() instanceof ElectionNotNeededException,
                  "preferred election: " + elected);
            checkEquals(2, partition(admin, topic, 0).leader().id(), "leader after the preferred election");
            Map<TopicPartition, Optional<Throwable>> again =
                admin.electLeaders(ElectionType.PREFERRED, Set.of(tp)).partitions().get();
            check(again.get(tp).isPresent() && again.get(tp).get() instanceof ElectionNotNeededException,
                  "a second election should not be needed: " + again);
            TopicPartition unknown = new TopicPartition(topic + "-nope", 0);
            Map<TopicPartition, Optional<Throwable>> missing =
                admin.electLeaders(ElectionType.PREFERRED, Set.of(unknown)).partitions().get();
            check(missing.get(unknown).isPresent() && missing.get(unknown).get() instanceof UnknownTopicOrPartitionException,
                  "election of an unknown topic: " + missing);

            expect(InvalidReplicaAssignmentException.class, () -> admin.alterPartitionReassignments(
                Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(0, 9))))).all().get());
            expect(InvalidReplicaAssignmentException.class, () -> admin.alterPartitionReassignments(
                Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(1, 1))))).all().get());
            expect(UnknownTopicOrPartitionException.class, () -> admin.alterPartitionReassignments(
                Map.of(new TopicPartition(topic, 7), Optional.of(new NewPartitionReassignment(List.of(0))))).all().get());
        }
    }

    interface Call { void run() throws Exception; }

    static void expect(Class<? extends Throwable> kind, Call call) throws Exception {
        try {
            call.run();
        } catch (ExecutionException e) {
            check(kind.isInstance(e.getCause()), "expected " + kind.getSimpleName() + ", got " + e.getCause());
            return;
        }
        throw new CheckFailed("expected " + kind.getSimpleName() + ", the call succeeded");
    }

    static void logDirsAndQuorum(String bootstrap) throws Exception {
        String topic = unique("jvm-logdirs");
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, topic, 3);
            produce(bootstrap, topic, 3, 300);
            Map<Integer, Map<String, LogDirDescription>> dirs = admin.describeLogDirs(List.of(0, 1, 2)).allDescriptions().get();
            checkEquals(3, dirs.size(), "nodes with log dirs");
            long total = 0;
            for (Map.Entry<Integer, Map<String, LogDirDescription>> node : dirs.entrySet()) {
                checkEquals(1, node.getValue().size(), "log dirs of node " + node.getKey());
                for (Map.Entry<String, LogDirDescription> dir : node.getValue().entrySet()) {
                    check(dir.getValue().error() == null, "log dir error " + dir.getValue().error());
                    for (Map.Entry<TopicPartition, org.apache.kafka.clients.admin.ReplicaInfo> r : dir.getValue().replicaInfos().entrySet()) {
                        if (r.getKey().topic().equals(topic)) {
                            total += r.getValue().size();
                            checkEquals(node.getKey().intValue(), partition(admin, topic, r.getKey().partition()).leader().id(),
                                        "the node holding " + r.getKey());
                        }
                    }
                }
            }
            check(total > 300, "the topic's replicas hold its bytes, got " + total);

            int leader = partition(admin, topic, 0).leader().id();
            String path = dirs.get(leader).keySet().iterator().next();
            TopicPartitionReplica replica = new TopicPartitionReplica(topic, 0, leader);
            admin.alterReplicaLogDirs(Map.of(replica, path)).all().get();

            QuorumInfo quorum = admin.describeMetadataQuorum().quorumInfo().get();
            checkEquals(0, quorum.leaderId(), "quorum leader");
            checkEquals(List.of(0), quorum.voters().stream().map(QuorumInfo.ReplicaState::replicaId).collect(Collectors.toList()), "voters");
            checkEquals(List.of(1, 2), quorum.observers().stream().map(QuorumInfo.ReplicaState::replicaId).sorted().collect(Collectors.toList()), "observers");
            check(quorum.highWatermark() > 0, "quorum high watermark " + quorum.highWatermark());
        }
    }

    static List<Integer> voterIds(QuorumInfo quorum) {
        return quorum.voters().stream().map(QuorumInfo.ReplicaState::replicaId).sorted().collect(Collectors.toList());
    }

    static void quorumMembership(String bootstrap) throws Exception {
        String topic = unique("jvm-unregister");
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, topic, 3);
            String clusterId = admin.describeCluster().clusterId().get();
            Map<Integer, Node> nodes = admin.describeCluster().nodes().get().stream()
                .collect(Collectors.toMap(Node::id, n -> n));
            QuorumInfo quorum = admin.describeMetadataQuorum().quorumInfo().get();
            Map<Integer, Uuid> dirs = quorum.observers().stream()
                .collect(Collectors.toMap(QuorumInfo.ReplicaState::replicaId, QuorumInfo.ReplicaState::replicaDirectoryId));
            Uuid voter0 = quorum.voters().get(0).replicaDirectoryId();
            Set<RaftVoterEndpoint> at1 = Set.of(new RaftVoterEndpoint("CONTROLLER", nodes.get(1).host(), nodes.get(1).port()));

            admin.addRaftVoter(1, dirs.get(1), at1, new AddRaftVoterOptions().setClusterId(Optional.of(clusterId))).all().get();
            quorum = admin.describeMetadataQuorum().quorumInfo().get();
            checkEquals(List.of(0, 1), voterIds(quorum), "voters after adding 1");
            checkEquals(List.of(2), quorum.observers().stream().map(QuorumInfo.ReplicaState::replicaId).collect(Collectors.toList()), "observers");
            checkEquals(nodes.get(1).port(), quorum.nodes().get(1).endpoints().get(0).port(), "the new voter's endpoint");

            expect(DuplicateVoterException.class, () -> admin.addRaftVoter(1, dirs.get(1), at1).all().get());
            expect(InconsistentClusterIdException.class, () -> admin.addRaftVoter(2, dirs.get(2), at1,
                new AddRaftVoterOptions().setClusterId(Optional.of("not-" + clusterId))).all().get());
            expect(VoterNotFoundException.class, () -> admin.removeRaftVoter(2, dirs.get(2)).all().get());
            expect(VoterNotFoundException.class, () -> admin.removeRaftVoter(1, Uuid.randomUuid()).all().get());

            admin.removeRaftVoter(1, dirs.get(1), new RemoveRaftVoterOptions().setClusterId(Optional.of(clusterId))).all().get();
            checkEquals(List.of(0), voterIds(admin.describeMetadataQuorum().quorumInfo().get()), "voters after removing 1");
            expect(VoterNotFoundException.class, () -> admin.removeRaftVoter(0, voter0).all().get());   // the last voter

            expect(BrokerIdNotRegisteredException.class, () -> admin.unregisterBroker(7).all().get());
            List<Integer> ledBy2 = new java.util.ArrayList<>();
            for (int i = 0; i < 3; i++) {
                if (partition(admin, topic, i).leader().id() == 2) ledBy2.add(i);
            }
            admin.unregisterBroker(2).all().get();
            checkEquals(List.of(0, 1), admin.describeCluster().nodes().get().stream().map(Node::id).sorted()
                .collect(Collectors.toList()), "brokers after unregistering 2");
            for (int i : ledBy2) {
                TopicPartitionInfo p = partition(admin, topic, i);
                check(p.leader() == null, "partition " + i + " of the unregistered broker has no leader, got " + p.leader());
            }
            expect(BrokerIdNotRegisteredException.class, () -> admin.unregisterBroker(2).all().get());
        }
    }

    static void configs(String bootstrap) throws Exception {
        String topic = unique("jvm-configs");
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, topic, 1);
            ConfigResource node0 = new ConfigResource(ConfigResource.Type.BROKER, "0");
            Config broker = admin.describeConfigs(List.of(node0)).all().get().get(node0);
            ConfigEntry advertised = broker.get("advertised.listeners");
            check(advertised != null && advertised.value().contains("://"), "advertised.listeners: " + advertised);
            checkEquals(ConfigEntry.ConfigSource.STATIC_BROKER_CONFIG, advertised.source(), "advertised.listeners source");
            check(advertised.isReadOnly(), "advertised.listeners is read-only");
            checkEquals(ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, broker.get("min.insync.replicas").source(),
                        "min.insync.replicas source");

            ConfigResource cluster = new ConfigResource(ConfigResource.Type.BROKER, "");
            admin.incrementalAlterConfigs(Map.of(cluster, List.of(new AlterConfigOp(
                new ConfigEntry("log.retention.ms", "3600000"), AlterConfigOp.OpType.SET)))).all().get();
            ConfigResource t = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            ConfigEntry retention = admin.describeConfigs(List.of(t)).all().get().get(t).get("retention.ms");
            checkEquals("3600000", retention.value(), "retention.ms after the cluster default changed");
            checkEquals(ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, retention.source(), "retention.ms source");
            expect(InvalidRequestException.class, () -> admin.incrementalAlterConfigs(Map.of(cluster, List.of(
                new AlterConfigOp(new ConfigEntry("num.partitions", "3"), AlterConfigOp.OpType.SET)))).all().get());
            admin.incrementalAlterConfigs(Map.of(cluster, List.of(new AlterConfigOp(
                new ConfigEntry("log.retention.ms", ""), AlterConfigOp.OpType.DELETE)))).all().get();

            ConfigResource logger = new ConfigResource(ConfigResource.Type.BROKER_LOGGER, "0");
            admin.incrementalAlterConfigs(Map.of(logger, List.of(new AlterConfigOp(
                new ConfigEntry("kafkaemu.wire", "DEBUG"), AlterConfigOp.OpType.SET)))).all().get();
            checkEquals("DEBUG", admin.describeConfigs(List.of(logger)).all().get().get(logger).get("kafkaemu.wire").value(),
                        "logger level");

            String group = unique("jvm-group");
            ConfigResource g = new ConfigResource(ConfigResource.Type.GROUP, group);
            admin.incrementalAlterConfigs(Map.of(g, List.of(new AlterConfigOp(
                new ConfigEntry("consumer.session.timeout.ms", "50000"), AlterConfigOp.OpType.SET)))).all().get();
            checkEquals("50000", admin.describeConfigs(List.of(g)).all().get().get(g).get("consumer.session.timeout.ms").value(),
                        "group config");

            Collection<ConfigResource> listed = admin.listConfigResources().all().get();
            check(listed.contains(node0) && listed.contains(new ConfigResource(ConfigResource.Type.BROKER, "2"))
                  && listed.contains(t) && listed.contains(g), "listConfigResources: " + listed);
        }
    }
}

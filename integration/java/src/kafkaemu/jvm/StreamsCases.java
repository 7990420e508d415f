package kafkaemu.jvm;

import static kafkaemu.jvm.Support.*;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListStreamsGroupOffsetsSpec;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.admin.StreamsGroupMemberDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.internals.AsyncKafkaConsumer;
import org.apache.kafka.clients.consumer.internals.StreamsRebalanceData;
import org.apache.kafka.clients.consumer.internals.StreamsRebalanceListener;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.message.StreamsGroupHeartbeatResponseData;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Streams groups (KIP-1071) with Kafka Streams' own protocol client in kafka-clients 4.4.0: an
 * AsyncKafkaConsumer given StreamsRebalanceData and a StreamsRebalanceListener, as Kafka Streams'
 * StreamThread makes it, and the Admin client's streams-group calls.
 *
 * Usage: java kafkaemu.jvm.StreamsCases CASE BOOTSTRAP   (or "list")
 */
public final class StreamsCases {
    private StreamsCases() {}

    interface Case {
        void run(String bootstrap) throws Exception;
    }

    static Map<String, Case> cases() {
        Map<String, Case> c = new LinkedHashMap<>();
        c.put("streams-two-members", StreamsCases::twoMembers);
        c.put("streams-missing-source-topic", StreamsCases::missingSourceTopic);
        return c;
    }

    /** One Kafka Streams client thread: the consumer, its topology and the tasks it was given. */
    static final class Member implements AutoCloseable {
        final AsyncKafkaConsumer<String, String> consumer;
        final StreamsRebalanceData data;
        final Set<StreamsRebalanceData.TaskId> active = new HashSet<>();
        int records;
        boolean closed;

        Member(String bootstrap, String app, String clientId, int port, Map<String, StreamsRebalanceData.Subtopology> subs,
               Collection<String> topics) {
            Properties p = consumerProps(bootstrap, app, clientId);
            p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
            p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");   // as Kafka Streams sets it
            data = new StreamsRebalanceData(UUID.randomUUID(), Optional.of(new StreamsRebalanceData.HostInfo("localhost", port)),
                                            Optional.empty(), subs, Map.of(),
                                            Map::of, Map::of);   // no task offset sums: nothing stored yet
            consumer = new AsyncKafkaConsumer<>(new ConsumerConfig(p), new StringDeserializer(), new StringDeserializer(),
                                                Optional.of(data));
            // As Kafka Streams' DefaultStreamsRebalanceListener: the reconciled assignment is what the
            // next heartbeat reports as owned, so a revocation is acknowledged to the coordinator.
            consumer.subscribe(topics, new StreamsRebalanceListener() {
                @Override public void onTasksRevoked(Set<StreamsRebalanceData.TaskId> tasks) { active.removeAll(tasks); }
                @Override public void onTasksAssigned(StreamsRebalanceData.Assignment assignment) {
                    active.clear();
                    active.addAll(assignment.activeTasks());
                    data.setReconciledAssignment(assignment);
                }
                @Override public void onAllTasksLost() {
                    active.clear();
                    data.setReconciledAssignment(StreamsRebalanceData.Assignment.EMPTY);
                }
            });
        }

        void poll() {
            records += consumer.poll(ms(50)).count();
        }

        @Override public void close() {
            if (!closed) {
                closed = true;
                consumer.close();
            }
        }
    }

    /** One stateful subtopology (Subtopology takes source, repartition sink, repartition source and
     *  changelog topics, then copartition groups). */
    static Map<String, StreamsRebalanceData.Subtopology> topology(String source, String changelog) {
        StreamsRebalanceData.TopicInfo log = new StreamsRebalanceData.TopicInfo(Optional.empty(), Optional.empty(),
                                                                                Map.of("cleanup.policy", "compact"));
        return Map.of("0", new StreamsRebalanceData.Subtopology(Set.of(source), Set.of(), Map.of(), Map.of(changelog, log),
                                                                List.of()));
    }

    static StreamsGroupDescription describe(Admin admin, String app) throws Exception {
        return admin.describeStreamsGroups(List.of(app)).all().get().get(app);
    }

    static int activeTasks(StreamsGroupMemberDescription m) {
        return m.assignment().activeTasks().stream().mapToInt(t -> t.partitions().size()).sum();
    }

    /** Two members share the four tasks of a stateful subtopology; the broker creates its changelog
     *  topic; a commit is listed; one leaves and the other takes every task; the group is deleted. */
    static void twoMembers(String bootstrap) throws Exception {
        String app = unique("streams-app");
        String in = app + "-in";
        String changelog = app + "-store-changelog";
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, in, 4);
            produce(bootstrap, in, 4, 40);
            Map<String, StreamsRebalanceData.Subtopology> subs = topology(in, changelog);
            Member a = new Member(bootstrap, app, "a", 8081, subs, List.of(in));
            Member b = new Member(bootstrap, app, "b", 8082, subs, List.of(in));
            try {
                waitUntil(60000, "both members hold tasks, all four tasks held once", () -> {
                    a.poll();
                    b.poll();
                    Set<StreamsRebalanceData.TaskId> all = new HashSet<>(a.active);
                    all.addAll(b.active);
                    return !a.active.isEmpty() && !b.active.isEmpty() && all.size() == 4
                        && a.active.size() + b.active.size() == 4;
                });
                checkEquals(4, admin.describeTopics(List.of(changelog)).allTopicNames().get().get(changelog)
                    .partitions().size(), "changelog partitions the broker created");
                waitUntil(30000, "the group is Stable with two members", () -> {
                    a.poll();
                    b.poll();
                    try {
                        StreamsGroupDescription d = describe(admin, app);
                        return d.groupState() == GroupState.STABLE && d.members().size() == 2
                            && d.members().stream().allMatch(m -> activeTasks(m) == 2);
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                });
                StreamsGroupDescription d = describe(admin, app);
                // (StreamsGroupDescription.toString fails without authorized operations: print its parts)
                check(d.subtopologies().size() == 1, "one subtopology described: " + d.subtopologies());
                check(d.members().stream().allMatch(m -> m.userEndpoint().isPresent()), "endpoints described: "
                      + d.members());
                waitUntil(30000, "the endpoints of both members reach a", () -> {
                    a.poll();
                    b.poll();
                    return a.data.partitionsByHost().size() == 2;
                });

                Collection<GroupListing> listed = admin.listGroups(new ListGroupsOptions().withTypes(Set.of(GroupType.STREAMS)))
                    .all().get();
                check(listed.stream().anyMatch(g -> g.groupId().equals(app) && g.type().orElse(null) == GroupType.STREAMS),
                      "listGroups(streams) lists " + app + ": " + listed);

                waitUntil(30000, "a read records of its tasks", () -> {
                    a.poll();
                    b.poll();
                    return a.records > 0;
                });
                a.consumer.commitSync();
                Map<TopicPartition, OffsetAndMetadata> committed = admin.listStreamsGroupOffsets(
                    Map.of(app, new ListStreamsGroupOffsetsSpec())).partitionsToOffsetAndMetadata(app).get();
                check(!committed.isEmpty() && committed.values().stream().allMatch(o -> o != null && o.offset() > 0),
                      "listStreamsGroupOffsets shows a's commit: " + committed);

                b.close();
                waitUntil(60000, "a takes every task once b has left", () -> {
                    a.poll();
                    return a.active.size() == 4;
                });
                checkEquals(1, describe(admin, app).members().size(), "members after b left");
            } finally {
                a.close();
                b.close();
            }
            checkEquals(GroupState.EMPTY, describe(admin, app).groupState(), "state once every member left");
            TopicPartition p0 = new TopicPartition(in, 0);
            admin.alterStreamsGroupOffsets(app, Map.of(p0, new OffsetAndMetadata(3))).all().get();
            checkEquals(3L, admin.listStreamsGroupOffsets(Map.of(app, new ListStreamsGroupOffsetsSpec()))
                .partitionsToOffsetAndMetadata(app).get().get(p0).offset(), "offset altered by the admin");
            admin.deleteStreamsGroupOffsets(app, Set.of(p0)).all().get();
            check(admin.listStreamsGroupOffsets(Map.of(app, new ListStreamsGroupOffsetsSpec()))
                .partitionsToOffsetAndMetadata(app).get().get(p0) == null, "offset deleted by the admin");
            admin.deleteStreamsGroups(List.of(app)).all().get();
            try {
                describe(admin, app);
                throw new CheckFailed("the deleted group is still described");
            } catch (ExecutionException e) {
                check(e.getCause() instanceof GroupIdNotFoundException, "describe after delete: " + e.getCause());
            }
        }
    }

    /** A topology reading a topic that does not exist: the member hears MISSING_SOURCE_TOPICS and
     *  the group is NotReady; once the topic is created it gets the tasks. */
    static void missingSourceTopic(String bootstrap) throws Exception {
        String app = unique("streams-app");
        String in = app + "-late";
        try (Admin admin = admin(bootstrap);
             Member a = new Member(bootstrap, app, "a", 8083, topology(in, app + "-s-changelog"), List.of(in))) {
            waitUntil(30000, "the member hears that a source topic is missing", () -> {
                a.poll();
                List<StreamsGroupHeartbeatResponseData.Status> statuses = a.data.statuses();
                return statuses != null && statuses.stream().anyMatch(s -> s.statusCode() == 1);
            });
            checkEquals(GroupState.NOT_READY, describe(admin, app).groupState(), "state without the source topic");
            createTopic(admin, in, 2);
            waitUntil(60000, "the member gets both tasks once the topic exists", () -> {
                a.poll();
                return a.active.size() == 2;
            });
        }
    }

    public static void main(String[] args) {
        Runner.main("StreamsCases", "BOOTSTRAP", cases(), args, (c, a) -> c.run(a[0]));
    }
}

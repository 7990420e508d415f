package kafkaemu.jvm;

import static kafkaemu.jvm.Support.*;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.GroupNotEmptyException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/** AdminClient calls Spark's driver and everyday tooling make. */
final class AdminCases {
    private AdminCases() {}

    /** createTopics, listTopics, describeTopics (by name, by id, paged), describeCluster. */
    static void topics(String bootstrap) throws Exception {
        String small = unique("jvm-admin-a");
        String wide = unique("jvm-admin-b");
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, small, 3);
            createTopic(admin, wide, 7);

            try {
                createTopic(admin, small, 3);
                throw new CheckFailed("creating an existing topic succeeded");
            } catch (ExecutionException e) {
                check(e.getCause() instanceof TopicExistsException, "duplicate create: expected TopicExistsException, got " + e.getCause());
            }

            Set<String> names = admin.listTopics().names().get();
            check(names.contains(small) && names.contains(wide), "listTopics misses the new topics: " + names);

            DescribeClusterResult cluster = admin.describeCluster();
            Collection<Node> nodes = cluster.nodes().get();
            String clusterId = cluster.clusterId().get();
            Node controller = cluster.controller().get();
            check(!nodes.isEmpty(), "describeCluster: no nodes");
            check(clusterId != null && !clusterId.isEmpty(), "describeCluster: no cluster id");
            check(controller != null && !controller.isEmpty(), "describeCluster: no controller");
            Set<Integer> nodeIds = nodes.stream().map(Node::id).collect(Collectors.toSet());

            // A partition limit of 2 makes the client page through DescribeTopicPartitions with cursors.
            for (int limit : new int[] {2000, 2}) {
                Map<String, TopicDescription> byName = admin.describeTopics(List.of(small, wide),
                        new DescribeTopicsOptions().partitionSizeLimitPerResponse(limit)).allTopicNames().get();
                checkDescription(byName.get(small), small, 3, nodeIds);
                checkDescription(byName.get(wide), wide, 7, nodeIds);
            }
            Map<String, TopicDescription> byName = admin.describeTopics(List.of(small, wide)).allTopicNames().get();
            Uuid smallId = byName.get(small).topicId();
            Uuid wideId = byName.get(wide).topicId();
            check(!smallId.equals(wideId), "two topics share the id " + smallId);

            Map<Uuid, TopicDescription> byId = admin.describeTopics(TopicCollection.ofTopicIds(List.of(smallId, wideId)))
                    .allTopicIds().get();
            checkEquals(small, byId.get(smallId).name(), "describeTopics by id: name of " + smallId);
            checkEquals(7, byId.get(wideId).partitions().size(), "describeTopics by id: partitions of " + wide);

            try {
                admin.describeTopics(List.of(unique("jvm-missing"))).allTopicNames().get();
                throw new CheckFailed("describing a missing topic succeeded");
            } catch (ExecutionException e) {
                check(e.getCause() instanceof UnknownTopicOrPartitionException,
                        "missing topic: expected UnknownTopicOrPartitionException, got " + e.getCause());
            }

            // The consumer sees the same topic id through Metadata as the admin client through DescribeTopicPartitions.
            try (KafkaConsumer<String, String> consumer = consumer(consumerProps(bootstrap, null, "jvm-meta"))) {
                List<org.apache.kafka.common.PartitionInfo> infos = consumer.partitionsFor(wide, Duration.ofSeconds(10));
                checkEquals(7, infos.size(), "consumer partitionsFor " + wide);
            }
            admin.deleteTopics(List.of(small)).all().get();
            waitUntil(10_000, "deleted topic still listed", () -> {
                try {
                    return !admin.listTopics().names().get().contains(small);
                } catch (Exception e) {
                    return false;
                }
            });
        }
    }

    private static void checkDescription(TopicDescription d, String name, int partitions, Set<Integer> nodeIds) {
        check(d != null, "describeTopics: no description for " + name);
        checkEquals(name, d.name(), "topic name");
        check(!d.isInternal(), name + " reported internal");
        check(d.topicId() != null && !Uuid.ZERO_UUID.equals(d.topicId()), name + ": zero topic id");
        checkEquals(partitions, d.partitions().size(), name + " partition count");
        for (int i = 0; i < partitions; i++) {
            TopicPartitionInfo p = d.partitions().get(i);
            checkEquals(i, p.partition(), name + " partition order");
            check(p.leader() != null && nodeIds.contains(p.leader().id()), name + "-" + i + ": leader " + p.leader() + " not a cluster node");
            check(!p.replicas().isEmpty() && !p.isr().isEmpty(), name + "-" + i + ": no replicas or isr");
        }
    }

    /** listOffsets earliest, latest and by timestamp, as Spark's KafkaOffsetReaderAdmin asks. */
    static void listOffsets(String bootstrap) throws Exception {
        String topic = unique("jvm-offsets");
        long base = System.currentTimeMillis() - 60_000;
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, topic, 2);
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps(bootstrap))) {
                for (int i = 0; i < 10; i++) {
                    // partition 0 gets timestamps base, base+1000, ..., base+9000; partition 1 stays empty
                    producer.send(new ProducerRecord<>(topic, 0, base + i * 1000L, "k" + i, "v" + i)).get();
                }
            }
            TopicPartition p0 = new TopicPartition(topic, 0);
            TopicPartition p1 = new TopicPartition(topic, 1);
            Map<TopicPartition, ListOffsetsResultInfo> earliest = admin.listOffsets(
                    Map.of(p0, OffsetSpec.earliest(), p1, OffsetSpec.earliest())).all().get();
            Map<TopicPartition, ListOffsetsResultInfo> latest = admin.listOffsets(
                    Map.of(p0, OffsetSpec.latest(), p1, OffsetSpec.latest())).all().get();
            checkEquals(0L, earliest.get(p0).offset(), "earliest p0");
            checkEquals(0L, earliest.get(p1).offset(), "earliest p1");
            checkEquals(10L, latest.get(p0).offset(), "latest p0");
            checkEquals(0L, latest.get(p1).offset(), "latest p1");

            ListOffsetsResultInfo at = admin.listOffsets(Map.of(p0, OffsetSpec.forTimestamp(base + 4500))).all().get().get(p0);
            checkEquals(5L, at.offset(), "offset for timestamp base+4500 (first record at or after it)");
            checkEquals(base + 5000, at.timestamp(), "timestamp of that record");
            ListOffsetsResultInfo exact = admin.listOffsets(Map.of(p0, OffsetSpec.forTimestamp(base))).all().get().get(p0);
            checkEquals(0L, exact.offset(), "offset for the first record's exact timestamp");
            ListOffsetsResultInfo after = admin.listOffsets(Map.of(p0, OffsetSpec.forTimestamp(base + 60_000))).all().get().get(p0);
            checkEquals(-1L, after.offset(), "offset for a timestamp after every record");
        }
    }

    /** list/describe consumer groups, list/alter committed offsets, delete groups. */
    @SuppressWarnings("removal") // listConsumerGroups is what Spark-era tooling still calls
    static void consumerGroups(String bootstrap) throws Exception {
        String topic = unique("jvm-groups");
        String group = unique("jvm-admin-group");
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, topic, 2);
            produce(bootstrap, topic, 2, 20);
            TopicPartition p0 = new TopicPartition(topic, 0);
            TopicPartition p1 = new TopicPartition(topic, 1);

            try (KafkaConsumer<String, String> c = consumer(consumerProps(bootstrap, group, "C1"))) {
                c.subscribe(List.of(topic));
                waitUntil(15_000, "consumer never got an assignment", () -> {
                    c.poll(Duration.ofMillis(100));
                    return c.assignment().size() == 2;
                });
                c.commitSync(Map.of(p0, new OffsetAndMetadata(4, "meta-0"), p1, new OffsetAndMetadata(6)));

                ConsumerGroupDescription live = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
                checkEquals(GroupState.STABLE, live.groupState(), "state with an active member");
                checkEquals(1, live.members().size(), "members");
                MemberDescription m = live.members().iterator().next();
                checkEquals("C1", m.clientId(), "member client id");
                check(m.consumerId().startsWith("C1-"), "member id should start with the client id: " + m.consumerId());
                checkEquals(Set.of(p0, p1), m.assignment().topicPartitions(), "member assignment");
                checkEquals("range", live.partitionAssignor(), "assignor (default range first)");
                check(live.coordinator() != null && !live.coordinator().isEmpty(), "no coordinator");

                try {
                    admin.deleteConsumerGroups(List.of(group)).all().get();
                    throw new CheckFailed("deleting a group with a member succeeded");
                } catch (ExecutionException e) {
                    check(e.getCause() instanceof GroupNotEmptyException, "delete non-empty: expected GroupNotEmptyException, got " + e.getCause());
                }
            }

            Collection<GroupListing> listed = admin.listGroups().all().get();
            GroupListing listing = listed.stream().filter(g -> g.groupId().equals(group)).findFirst().orElse(null);
            check(listing != null, "listGroups misses " + group + ": " + listed);
            checkEquals(GroupState.EMPTY, listing.groupState().orElse(null), "listed state after the member left");
            check(admin.listConsumerGroups().all().get().stream().anyMatch(g -> g.groupId().equals(group)),
                    "listConsumerGroups misses " + group);

            ConsumerGroupDescription empty = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
            checkEquals(GroupState.EMPTY, empty.groupState(), "described state after the member left");
            checkEquals(0, empty.members().size(), "members after leave");

            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get();
            checkEquals(4L, committed.get(p0).offset(), "committed p0");
            checkEquals("meta-0", committed.get(p0).metadata(), "committed p0 metadata");
            checkEquals(6L, committed.get(p1).offset(), "committed p1");

            admin.alterConsumerGroupOffsets(group, Map.of(p0, new OffsetAndMetadata(9), p1, new OffsetAndMetadata(1))).all().get();
            Map<TopicPartition, OffsetAndMetadata> altered = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get();
            checkEquals(9L, altered.get(p0).offset(), "altered p0");
            checkEquals(1L, altered.get(p1).offset(), "altered p1");

            // A consumer of the group starts where the altered offsets say.
            try (KafkaConsumer<String, String> c = consumer(consumerProps(bootstrap, group, "C2"))) {
                c.assign(List.of(p0, p1));
                checkEquals(9L, c.position(p0), "resumed position p0");
                checkEquals(1L, c.position(p1), "resumed position p1");
            }

            admin.deleteConsumerGroups(List.of(group)).all().get();
            Collection<GroupListing> after = admin.listGroups().all().get();
            check(after.stream().noneMatch(g -> g.groupId().equals(group)), "deleted group still listed");
            Map<TopicPartition, OffsetAndMetadata> gone = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get();
            check(gone.isEmpty() || gone.values().stream().allMatch(v -> v == null),
                    "offsets survived the group's deletion: " + gone);
        }
    }
}

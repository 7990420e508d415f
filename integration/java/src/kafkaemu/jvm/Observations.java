package kafkaemu.jvm;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * What the Java client sees, for the differential suite (integration/test_differential_clients.py):
 * each case runs one scenario against the broker at BOOTSTRAP, naming its topics and groups after NAME,
 * and prints its observations as one line "OBSERVED {json}", the same scenario against Apache Kafka
 * and against kafkaemu, for the suite to compare. The observations hold what the client reports
 * (offsets, partitions, records, states, exception classes), never a judgement: a case fails only when
 * it cannot finish.
 *
 * Usage: java kafkaemu.jvm.Observations CASE BOOTSTRAP NAME   (or "list")
 */
public final class Observations {
    private static final int RECORDS = 12;
    private static final int PARTITIONS = 3;
    private static final long WAIT_MS = 60_000;

    interface Case {
        Map<String, Object> observe(String bootstrap, String name) throws Exception;
    }

    static Map<String, Case> cases() {
        Map<String, Case> c = new LinkedHashMap<>();
        c.put("produce-consume-commit", Observations::produceConsumeCommit);
        c.put("share-group", Observations::shareGroup);
        c.put("transactions", Observations::transactions);
        return c;
    }

    public static void main(String[] args) {
        Runner.main("Observations", "BOOTSTRAP NAME", cases(), args, (c, a) -> {
            Map<String, Object> seen = c.observe(a[0], a[1]);
            System.out.println("OBSERVED " + new ObjectMapper().writeValueAsString(seen));
        });
    }

    static Admin admin(String bootstrap) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
    }

    /** The exception class a failed admin call reports (the cause of its ExecutionException). */
    static String failure(Admin admin, String topic) {
        try {
            admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get();
            return "none";
        } catch (ExecutionException e) {
            return e.getCause().getClass().getSimpleName();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    static Properties producerProps(String bootstrap) {
        Properties p = Support.producerProps(bootstrap);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        return p;
    }

    static List<List<Object>> delivered(List<RecordMetadata> sent) {
        return sent.stream().map(m -> List.<Object>of(m.partition(), m.offset()))
                .sorted(Comparator.comparing((List<Object> l) -> (Integer) l.get(0)).thenComparing(l -> (Long) l.get(1)))
                .collect(Collectors.toList());
    }

    static List<RecordMetadata> produceKeyed(KafkaProducer<String, String> producer, String topic, int from)
            throws Exception {
        List<RecordMetadata> sent = new ArrayList<>();
        for (int i = from; i < from + RECORDS; i++) {
            sent.add(producer.send(new ProducerRecord<>(topic, i % PARTITIONS, "k" + i % 4, "v" + i)).get());
        }
        return sent;
    }

    static List<String> records(List<ConsumerRecord<String, String>> read) {
        return read.stream().map(r -> r.partition() + "@" + r.offset() + " " + r.key() + "=" + r.value())
                .sorted().collect(Collectors.toList());
    }

    static List<ConsumerRecord<String, String>> readAll(KafkaConsumer<String, String> consumer, int count) {
        List<ConsumerRecord<String, String>> read = new ArrayList<>();
        long deadline = System.currentTimeMillis() + WAIT_MS;
        while (read.size() < count && System.currentTimeMillis() < deadline) {
            consumer.poll(Duration.ofMillis(200)).forEach(read::add);
        }
        return read;
    }

    /** Polls until every partition's position has reached its end offset (past any control records). */
    static void untilAtEnd(KafkaConsumer<String, String> consumer, String topic) {
        Map<TopicPartition, Long> ends = consumer.endOffsets(partitions(topic));
        long deadline = System.currentTimeMillis() + WAIT_MS;
        while (System.currentTimeMillis() < deadline
                && ends.entrySet().stream().anyMatch(e -> consumer.position(e.getKey()) < e.getValue())) {
            consumer.poll(Duration.ofMillis(200));
        }
    }

    static Set<TopicPartition> partitions(String topic) {
        return IntStream.range(0, PARTITIONS).mapToObj(p -> new TopicPartition(topic, p)).collect(Collectors.toSet());
    }

    static Map<String, Object> byPartition(Map<TopicPartition, ?> values, java.util.function.Function<Object, Object> f) {
        Map<String, Object> out = new TreeMap<>();
        values.forEach((tp, v) -> out.put(tp.toString(), f.apply(v)));
        return out;
    }

    static Object committed(Object offset) {
        if (offset == null) return null;
        OffsetAndMetadata o = (OffsetAndMetadata) offset;
        return Map.of("offset", o.offset(), "metadata", o.metadata(), "leader epoch", o.leaderEpoch().orElse(-1));
    }

    static Map<String, Object> consumerGroup(Admin admin, String group) throws Exception {
        ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("state", d.groupState().toString());
        out.put("type", d.type().toString());
        out.put("simple", d.isSimpleConsumerGroup());
        out.put("assignor", d.partitionAssignor());
        out.put("members", d.members().stream().map(m -> {
            Map<String, Object> member = new LinkedHashMap<>();
            member.put("client id", m.clientId());
            member.put("host", m.host());
            member.put("instance id", m.groupInstanceId().orElse(null));
            member.put("assignment", partitionNames(m.assignment().topicPartitions()));
            member.put("target assignment", m.targetAssignment().map(a -> partitionNames(a.topicPartitions()))
                    .orElse(null));
            member.put("epoch", m.memberEpoch().orElse(-1));
            member.put("upgraded", m.upgraded().orElse(null));
            return member;
        }).collect(Collectors.toList()));
        out.put("coordinator", d.coordinator().id());
        out.put("group epoch", d.groupEpoch().orElse(-1));
        out.put("target assignment epoch", d.targetAssignmentEpoch().orElse(-1));
        out.put("offsets", byPartition(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(),
                Observations::committed));
        return out;
    }

    static List<String> partitionNames(java.util.Collection<TopicPartition> partitions) {
        return partitions.stream().map(TopicPartition::toString).sorted().collect(Collectors.toList());
    }

    /** Admin creates a topic (twice), an idempotent producer writes keyed records to chosen partitions, a
     *  KIP-848 consumer reads them all and commits, and Admin describes the group once it has left. */
    static Map<String, Object> produceConsumeCommit(String bootstrap, String name) throws Exception {
        String topic = "client-java-" + name, group = "client-java-group-" + name;
        Map<String, Object> seen = new LinkedHashMap<>();
        try (Admin admin = admin(bootstrap)) {
            admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get();
            seen.put("create again", failure(admin, topic));
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps(bootstrap))) {
                seen.put("delivered", delivered(produceKeyed(producer, topic, 0)));
            }
            Properties props = Support.consumerProps(bootstrap, group, null);
            props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
                consumer.subscribe(List.of(topic));
                seen.put("consumed", records(readAll(consumer, RECORDS)));
                seen.put("assignment", consumer.assignment().stream().map(TopicPartition::toString).sorted()
                        .collect(Collectors.toList()));
                seen.put("group while member", consumerGroup(admin, group));
                consumer.commitSync();
                seen.put("committed", byPartition(consumer.committed(partitions(topic)), Observations::committed));
                seen.put("end offsets", byPartition(consumer.endOffsets(partitions(topic)), o -> o));
                seen.put("positions", partitions(topic).stream().sorted(Comparator.comparing(TopicPartition::partition))
                        .map(consumer::position).collect(Collectors.toList()));
            }
            seen.put("group", consumerGroup(admin, group));
        }
        return seen;
    }

    static Map<String, Object> shareGroupDescription(Admin admin, String group) throws Exception {
        ShareGroupDescription d = admin.describeShareGroups(List.of(group)).all().get().get(group);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("state", d.groupState().toString());
        out.put("members", d.members().stream().map(m -> {
            Map<String, Object> member = new LinkedHashMap<>();
            member.put("client id", m.clientId());
            member.put("host", m.host());
            member.put("epoch", m.memberEpoch());
            member.put("assignment", partitionNames(m.assignment().topicPartitions()));
            return member;
        }).collect(Collectors.toList()));
        out.put("coordinator", d.coordinator().id());
        out.put("group epoch", d.groupEpoch());
        out.put("target assignment epoch", d.targetAssignmentEpoch());
        return out;
    }

    /** A share group (KIP-932) set to read from the earliest offset through IncrementalAlterConfigs on
     *  its GROUP resource: one share consumer reads every record, accepts each explicitly, commits the
     *  acknowledgements; Admin describes the group while it is a member and after it has left. */
    static Map<String, Object> shareGroup(String bootstrap, String name) throws Exception {
        String topic = "client-java-share-" + name, group = "client-java-share-group-" + name;
        Map<String, Object> seen = new LinkedHashMap<>();
        try (Admin admin = admin(bootstrap)) {
            admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get();
            ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
            admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(
                    new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET)))).all().get();
            ConfigEntry reset = admin.describeConfigs(List.of(resource)).all().get().get(resource)
                    .get("share.auto.offset.reset");
            seen.put("group config", List.of(reset.value(), reset.source().toString()));
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps(bootstrap))) {
                seen.put("delivered", delivered(produceKeyed(producer, topic, 0)));
            }
            Properties props = Support.consumerProps(bootstrap, group, null);
            props.remove(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG);
            props.remove(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG);
            props.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
            Map<String, Object> acknowledged = new TreeMap<>();
            try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(props)) {
                consumer.setAcknowledgementCommitCallback((offsets, error) -> offsets.forEach((tip, committed) -> {
                    String outcome = error == null ? "ok" : error.getClass().getSimpleName();
                    for (long offset : committed) acknowledged.put(tip.topicPartition() + "@" + offset, outcome);
                }));
                consumer.subscribe(List.of(topic));
                List<ConsumerRecord<String, String>> read = new ArrayList<>();
                List<Integer> deliveryCounts = new ArrayList<>();
                long deadline = System.currentTimeMillis() + WAIT_MS;
                while (read.size() < RECORDS && System.currentTimeMillis() < deadline) {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                        read.add(r);
                        deliveryCounts.add((int) r.deliveryCount().orElse((short) -1));
                        consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                    }
                }
                seen.put("consumed", records(read));
                seen.put("delivery counts", deliveryCounts);
                consumer.commitSync();
                seen.put("group while member", shareGroupDescription(admin, group));
            }
            // every acknowledgement is committed by close(); which poll or commit carried each is timing
            seen.put("acknowledged", acknowledged);
            seen.put("group after leaving", shareGroupDescription(admin, group));
            seen.put("offsets", byPartition(admin.listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()))
                    .partitionsToOffsetInfo(group).get(), o -> {
                        SharePartitionOffsetInfo info = (SharePartitionOffsetInfo) o;
                        Map<String, Object> offset = new LinkedHashMap<>();
                        offset.put("start offset", info.startOffset());
                        offset.put("leader epoch", info.leaderEpoch().orElse(-1));
                        offset.put("lag", info.lag().orElse(-1L));
                        return offset;
                    }));
        }
        return seen;
    }

    /** A transactional producer commits one transaction and aborts another; a read_committed consumer
     *  (assigned, no group) reads only the committed records, a read_uncommitted one all of them. */
    static Map<String, Object> transactions(String bootstrap, String name) throws Exception {
        String topic = "client-java-txn-" + name;
        Map<String, Object> seen = new LinkedHashMap<>();
        try (Admin admin = admin(bootstrap)) {
            admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get();
        }
        Properties props = producerProps(bootstrap);
        String transactionalId = "client-java-txn-" + name;
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            producer.initTransactions();
            producer.beginTransaction();
            seen.put("committed delivered", delivered(produceKeyed(producer, topic, 0)));
            producer.commitTransaction();
            producer.beginTransaction();
            seen.put("aborted delivered", delivered(produceKeyed(producer, topic, RECORDS)));
            producer.abortTransaction();
            try (Admin admin = admin(bootstrap)) {
                TransactionDescription d = admin.describeTransactions(List.of(transactionalId)).all().get()
                        .get(transactionalId);
                Map<String, Object> described = new LinkedHashMap<>();
                described.put("state", d.state().toString());
                described.put("producer epoch", d.producerEpoch());
                described.put("timeout", d.transactionTimeoutMs());
                described.put("transaction_start_time_ms", d.transactionStartTimeMs().orElse(-1));
                described.put("partitions", partitionNames(d.topicPartitions()));
                seen.put("described", described);
            }
            // a second producer with the same transactional id fences this one
            try (KafkaProducer<String, String> successor = new KafkaProducer<>(props)) {
                successor.initTransactions();
                String fenced = "none";
                try {
                    producer.beginTransaction();
                    producer.send(new ProducerRecord<>(topic, 0, "k", "fenced")).get();
                    producer.commitTransaction();
                } catch (Exception e) {
                    fenced = (e instanceof ExecutionException ? e.getCause() : e).getClass().getSimpleName();
                }
                seen.put("fenced producer", fenced);
            }
        }
        for (String isolation : List.of("read_committed", "read_uncommitted")) {
            Properties c = Support.consumerProps(bootstrap, null, null);
            c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
                consumer.assign(partitions(topic));
                consumer.seekToBeginning(partitions(topic));
                int expected = isolation.equals("read_committed") ? RECORDS : 2 * RECORDS;
                seen.put(isolation, records(readAll(consumer, expected)));
                untilAtEnd(consumer, topic);
                seen.put(isolation + " end offsets", byPartition(consumer.endOffsets(partitions(topic)), o -> o));
                seen.put(isolation + " positions", partitions(topic).stream()
                        .sorted(Comparator.comparing(TopicPartition::partition)).map(consumer::position)
                        .collect(Collectors.toList()));
            }
        }
        return seen;
    }
}

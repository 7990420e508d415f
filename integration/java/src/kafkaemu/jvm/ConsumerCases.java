package kafkaemu.jvm;

import static kafkaemu.jvm.Support.*;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

/** KafkaConsumer usage patterns: Spark's executors, commit/resume, Spark's deprecated driver mode. */
final class ConsumerCases {
    private ConsumerCases() {}

    /**
     * Spark executors: a consumer with a throw-away group id that never joins, assign() one partition,
     * find the available range with seekToBeginning/seekToEnd + position, then seek() and poll() a slice.
     */
    static void executorAssignSeekPoll(String bootstrap) throws Exception {
        String topic = unique("jvm-executor");
        long t0 = System.currentTimeMillis() - 10_000;
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, topic, 2);
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps(bootstrap))) {
                for (int i = 0; i < 200; i++) {
                    List<Header> headers = List.of(new RecordHeader("h", ("hv" + i).getBytes(StandardCharsets.UTF_8)));
                    producer.send(new ProducerRecord<>(topic, 1, t0 + i, "k" + i, "v" + i, headers));
                }
                producer.flush();
            }
        }
        Properties props = sparkConsumerProps(bootstrap, "spark-kafka-source-" + UUID.randomUUID() + "-executor");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "50");
        TopicPartition tp = new TopicPartition(topic, 1);
        try (KafkaConsumer<byte[], byte[]> c = consumer(props)) {
            c.assign(List.of(tp));
            c.seekToBeginning(Set.of(tp));
            long earliest = c.position(tp);
            c.seekToEnd(Set.of(tp));
            long latest = c.position(tp);
            checkEquals(0L, earliest, "available range start");
            checkEquals(200L, latest, "available range end");

            // Read [120, 170) the way KafkaDataConsumer.get does: seek, poll, walk the records.
            c.seek(tp, 120);
            List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
            long deadline = System.currentTimeMillis() + 10_000;
            while (got.size() < 50 && System.currentTimeMillis() < deadline) {
                ConsumerRecords<byte[], byte[]> batch = c.poll(Duration.ofMillis(512));
                got.addAll(batch.records(tp));
            }
            check(got.size() >= 50, "polled only " + got.size() + " records from offset 120");
            for (int i = 0; i < 50; i++) {
                ConsumerRecord<byte[], byte[]> r = got.get(i);
                int n = 120 + i;
                checkEquals((long) n, r.offset(), "offset of record " + i);
                checkEquals("k" + n, new String(r.key(), StandardCharsets.UTF_8), "key at " + n);
                checkEquals("v" + n, new String(r.value(), StandardCharsets.UTF_8), "value at " + n);
                checkEquals(t0 + n, r.timestamp(), "timestamp at " + n);
                Header h = r.headers().lastHeader("h");
                check(h != null, "header missing at " + n);
                checkEquals("hv" + n, new String(h.value(), StandardCharsets.UTF_8), "header at " + n);
            }

            // Seeking backwards and past what was read works on the same consumer.
            c.seek(tp, 5);
            ConsumerRecord<byte[], byte[]> first = null;
            deadline = System.currentTimeMillis() + 10_000;
            while (first == null && System.currentTimeMillis() < deadline) {
                List<ConsumerRecord<byte[], byte[]>> rs = c.poll(Duration.ofMillis(512)).records(tp);
                if (!rs.isEmpty()) first = rs.get(0);
            }
            check(first != null && first.offset() == 5, "after seek(5) the first record is " + (first == null ? null : first.offset()));

            // Spark's startingTimestamp: offsetsForTimes.
            Map<TopicPartition, OffsetAndTimestamp> byTime = c.offsetsForTimes(Map.of(tp, t0 + 77));
            checkEquals(77L, byTime.get(tp).offset(), "offsetsForTimes");

            // The end offset moves while the consumer is assigned.
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps(bootstrap))) {
                producer.send(new ProducerRecord<>(topic, 1, "late", "late")).get();
            }
            checkEquals(201L, c.endOffsets(Set.of(tp)).get(tp), "end offset after one more record");
            check(c.assignment().equals(Set.of(tp)), "assignment changed: " + c.assignment());
        }
    }

    /** Consume part of a topic in a group, commit, close; a new member resumes at the commit. */
    static void commitAndResume(String bootstrap) throws Exception {
        String topic = unique("jvm-resume");
        String group = unique("jvm-resume-group");
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, topic, 2);
        }
        produce(bootstrap, topic, 2, 100);
        TopicPartition p0 = new TopicPartition(topic, 0);
        TopicPartition p1 = new TopicPartition(topic, 1);
        Properties props = consumerProps(bootstrap, group, "C1");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "10");
        Map<TopicPartition, Long> consumed = new HashMap<>();
        try (KafkaConsumer<String, String> c = consumer(props)) {
            c.subscribe(List.of(topic));
            long deadline = System.currentTimeMillis() + 15_000;
            while ((consumed.getOrDefault(p0, 0L) < 20 || consumed.getOrDefault(p1, 0L) < 20)
                    && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    checkEquals(consumed.getOrDefault(tp, 0L), r.offset(), "in-order offset on " + tp);
                    consumed.put(tp, r.offset() + 1);
                }
            }
            check(consumed.getOrDefault(p0, 0L) >= 20 && consumed.getOrDefault(p1, 0L) >= 20, "consumed too little: " + consumed);
            c.commitSync(Map.of(p0, new OffsetAndMetadata(20, "half"), p1, new OffsetAndMetadata(30)));
            Map<TopicPartition, OffsetAndMetadata> committed = c.committed(Set.of(p0, p1));
            checkEquals(20L, committed.get(p0).offset(), "committed p0");
            checkEquals("half", committed.get(p0).metadata(), "committed metadata p0");
            checkEquals(30L, committed.get(p1).offset(), "committed p1");
        }
        try (KafkaConsumer<String, String> c = consumer(consumerProps(bootstrap, group, "C2"))) {
            c.subscribe(List.of(topic));
            Map<TopicPartition, Long> firstSeen = new HashMap<>();
            long deadline = System.currentTimeMillis() + 15_000;
            while (firstSeen.size() < 2 && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
                    firstSeen.putIfAbsent(new TopicPartition(r.topic(), r.partition()), r.offset());
                }
            }
            checkEquals(20L, firstSeen.get(p0), "resumed first offset p0");
            checkEquals(30L, firstSeen.get(p1), "resumed first offset p1");
            c.commitSync(); // commits positions of everything polled so far
            Map<TopicPartition, OffsetAndMetadata> committed = c.committed(Set.of(p0, p1));
            checkEquals(c.position(p0), committed.get(p0).offset(), "commitSync() commits the position p0");
            checkEquals(c.position(p1), committed.get(p1).offset(), "commitSync() commits the position p1");
        }
    }

    /**
     * Spark's driver with useDeprecatedOffsetFetching=true: subscribe, ONE poll of 500 ms, then it
     * needs a non-empty assignment() and reads offsets with pause + seekToEnd + position.
     */
    static void deprecatedOffsetFetching(String bootstrap) throws Exception {
        String topic = unique("jvm-deprecated");
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, topic, 3);
        }
        produce(bootstrap, topic, 3, 30);
        String group = "spark-kafka-source-" + UUID.randomUUID() + "-driver-0";
        // Twice in the same group: a batch query leaves right after the first poll, the next must join as fast.
        for (int round = 1; round <= 2; round++) {
            driverRound(bootstrap, group, topic, false, round);
        }
        driverRound(bootstrap, "spark-kafka-source-" + UUID.randomUUID() + "-driver-0", topic, true, 3);
    }

    private static void driverRound(String bootstrap, String group, String topic, boolean pattern, int round) {
        Properties props = sparkConsumerProps(bootstrap, group);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "1");
        String what = (pattern ? "subscribePattern" : "subscribe") + " round " + round;
        try (KafkaConsumer<byte[], byte[]> c = consumer(props)) {
            if (pattern) {
                c.subscribe(Pattern.compile(Pattern.quote(topic.substring(0, topic.length() - 4)) + ".*"));
            } else {
                c.subscribe(List.of(topic));
            }
            long start = System.nanoTime();
            c.poll(Duration.ofMillis(500));
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            Set<TopicPartition> assigned = c.assignment();
            if (assigned.isEmpty()) {
                // Diagnose: how much longer would the join have needed?
                long more = System.nanoTime();
                while (c.assignment().isEmpty() && System.nanoTime() - more < 15_000_000_000L) c.poll(Duration.ofMillis(50));
                throw new CheckFailed(what + ": assignment() empty after one 500 ms poll (poll took " + tookMs
                        + " ms); assigned " + (System.nanoTime() - more) / 1_000_000 + " ms later: " + c.assignment());
            }
            checkEquals(3, assigned.size(), what + ": partitions assigned");
            c.pause(assigned);
            c.seekToEnd(assigned);
            for (TopicPartition tp : assigned) {
                checkEquals(10L, c.position(tp), what + ": latest position of " + tp);
            }
            c.seekToBeginning(assigned);
            for (TopicPartition tp : assigned) {
                checkEquals(0L, c.position(tp), what + ": earliest position of " + tp);
            }
            check(c.paused().equals(assigned), what + ": paused set changed");
            System.err.println(what + ": joined and assigned within the first poll (" + tookMs + " ms)");
        }
    }
}

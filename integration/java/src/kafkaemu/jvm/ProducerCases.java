package kafkaemu.jvm;

import static kafkaemu.jvm.Support.*;

import java.time.Duration;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/** The producer Spark's Kafka sink uses: idempotent, acks=all. */
final class ProducerCases {
    private ProducerCases() {}

    static final int RECORDS = 10_000;
    static final int PARTITIONS = 3;

    static void idempotentTenThousand(String bootstrap) throws Exception {
        String topic = unique("jvm-idempotent");
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, topic, PARTITIONS);

            Properties p = producerProps(bootstrap);
            p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
            p.put(ProducerConfig.ACKS_CONFIG, "all");
            p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
            p.put(ProducerConfig.BATCH_SIZE_CONFIG, "16384");
            p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
            Map<Integer, List<Long>> offsets = new ConcurrentHashMap<>();
            ConcurrentLinkedQueue<Exception> errors = new ConcurrentLinkedQueue<>();
            AtomicInteger acked = new AtomicInteger();
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
                for (int i = 0; i < RECORDS; i++) {
                    // keys decide the partition, so each partition gets an interleaved share
                    producer.send(new ProducerRecord<>(topic, "key-" + i, "value-" + i), (md, err) -> {
                        if (err != null) {
                            errors.add(err);
                        } else {
                            offsets.computeIfAbsent(md.partition(), k -> java.util.Collections.synchronizedList(new java.util.ArrayList<>()))
                                    .add(md.offset());
                            acked.incrementAndGet();
                        }
                    });
                }
                producer.flush();
            }
            check(errors.isEmpty(), "send errors: " + errors.peek());
            checkEquals(RECORDS, acked.get(), "acknowledged records");

            // Offsets per partition are exactly 0..n-1: no gaps, no duplicates.
            Map<TopicPartition, OffsetSpec> latestSpec = new HashMap<>();
            for (int i = 0; i < PARTITIONS; i++) latestSpec.put(new TopicPartition(topic, i), OffsetSpec.latest());
            var latest = admin.listOffsets(latestSpec).all().get();
            long total = 0;
            for (int i = 0; i < PARTITIONS; i++) {
                List<Long> got = offsets.getOrDefault(i, List.of());
                BitSet seen = new BitSet();
                for (long o : got) {
                    check(!seen.get((int) o), "partition " + i + ": offset " + o + " acknowledged twice");
                    seen.set((int) o);
                }
                checkEquals(got.size(), seen.cardinality(), "partition " + i + " distinct offsets");
                checkEquals(got.size(), seen.nextClearBit(0), "partition " + i + " offsets contiguous from 0");
                checkEquals((long) got.size(), latest.get(new TopicPartition(topic, i)).offset(), "partition " + i + " end offset");
                total += got.size();
            }
            checkEquals((long) RECORDS, total, "records over all partitions");

            // Read everything back: every key exactly once, values intact.
            BitSet keys = new BitSet(RECORDS);
            int read = 0;
            try (KafkaConsumer<String, String> c = consumer(consumerProps(bootstrap, null, "jvm-readback"))) {
                List<TopicPartition> tps = new java.util.ArrayList<>(latestSpec.keySet());
                c.assign(tps);
                c.seekToBeginning(tps);
                long deadline = System.currentTimeMillis() + 30_000;
                while (read < RECORDS && System.currentTimeMillis() < deadline) {
                    for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                        int k = Integer.parseInt(r.key().substring(4));
                        check(!keys.get(k), "key " + r.key() + " read twice");
                        checkEquals("value-" + k, r.value(), "value of " + r.key());
                        keys.set(k);
                        read++;
                    }
                }
            }
            checkEquals(RECORDS, read, "records read back");
        }
    }
}

package kafkaemu.jvm;

import static kafkaemu.jvm.Support.*;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.AbortTransactionSpec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeProducersResult;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;

/** KafkaProducer with transactional.id, read_committed KafkaConsumer, the transaction admin APIs. */
final class TransactionCases {
    private TransactionCases() {}

    static KafkaProducer<String, String> transactional(String bootstrap, String transactionalId) {
        Properties p = producerProps(bootstrap);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        KafkaProducer<String, String> producer = new KafkaProducer<>(p);
        producer.initTransactions();
        return producer;
    }

    /** Every record a consumer with this isolation level sees, read until its position reaches the end
     *  offsets it is told (the last stable offset under read_committed). */
    static List<ConsumerRecord<String, String>> readAll(String bootstrap, String topic, int partitions,
                                                        String isolation) throws Exception {
        Properties props = consumerProps(bootstrap, null, null);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        try (KafkaConsumer<String, String> c = consumer(props)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 0; i < partitions; i++) tps.add(new TopicPartition(topic, i));
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            waitUntil(30_000, "reading " + topic + " to " + end, () -> {
                for (ConsumerRecord<String, String> r : c.poll(ms(200))) out.add(r);
                return tps.stream().allMatch(tp -> c.position(tp) >= end.get(tp));
            });
        }
        return out;
    }

    static List<String> values(Collection<ConsumerRecord<String, String>> records) {
        return records.stream().map(ConsumerRecord::value).sorted().collect(Collectors.toList());
    }

    static void commitAndAbort(String bootstrap) throws Exception {
        String topic = unique("jvm-txn");
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, topic, 2);
        }
        List<String> committed = new ArrayList<>();
        List<String> all = new ArrayList<>();
        try (KafkaProducer<String, String> producer = transactional(bootstrap, unique("jvm-tid"))) {
            producer.beginTransaction();
            for (int i = 0; i < 10; i++) {
                producer.send(new ProducerRecord<>(topic, i % 2, "k" + i, "committed-" + i));
                committed.add("committed-" + i);
            }
            producer.commitTransaction();
            producer.beginTransaction();
            for (int i = 0; i < 10; i++) {
                producer.send(new ProducerRecord<>(topic, i % 2, "k" + i, "aborted-" + i));
                all.add("aborted-" + i);
            }
            producer.flush();
            producer.abortTransaction();
        }
        all.addAll(committed);
        checkEquals(committed.stream().sorted().collect(Collectors.toList()),
                values(readAll(bootstrap, topic, 2, "read_committed")), "read_committed values");
        List<ConsumerRecord<String, String>> uncommitted = readAll(bootstrap, topic, 2, "read_uncommitted");
        checkEquals(all.stream().sorted().collect(Collectors.toList()), values(uncommitted), "read_uncommitted values");
        // offsets 0-4 committed, marker 5, 6-10 aborted, marker 11: the markers leave gaps
        List<Long> offsets = uncommitted.stream().filter(r -> r.partition() == 0).map(ConsumerRecord::offset)
                .collect(Collectors.toList());
        checkEquals(List.of(0L, 1L, 2L, 3L, 4L, 6L, 7L, 8L, 9L, 10L), offsets, "partition 0 offsets");
    }

    static void consumeTransformProduce(String bootstrap) throws Exception {
        String source = unique("jvm-ctp-in");
        String sink = unique("jvm-ctp-out");
        String group = unique("jvm-ctp-group");
        int total = 300;
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, source, 3);
            createTopic(admin, sink, 3);
        }
        produce(bootstrap, source, 3, total);
        Properties cp = consumerProps(bootstrap, group, "ctp");
        cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        cp.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "40");
        Set<TopicPartition> inputs = Set.of(new TopicPartition(source, 0), new TopicPartition(source, 1),
                new TopicPartition(source, 2));
        try (KafkaConsumer<String, String> consumer = consumer(cp);
             KafkaProducer<String, String> producer = transactional(bootstrap, unique("jvm-ctp-tid"))) {
            consumer.subscribe(List.of(source));
            Map<TopicPartition, Long> ends = consumer.endOffsets(inputs);
            int[] batches = {0};
            boolean[] aborted = {false};
            waitUntil(60_000, "all input committed", () -> {
                var records = consumer.poll(ms(200));
                if (!records.isEmpty()) {
                    // read before the transaction: a read_committed consumer's committed() waits while
                    // offsets are pending in one (UNSTABLE_OFFSET_COMMIT)
                    Map<TopicPartition, OffsetAndMetadata> before = consumer.committed(inputs);
                    producer.beginTransaction();
                    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                    for (ConsumerRecord<String, String> r : records) {
                        producer.send(new ProducerRecord<>(sink, r.partition(), r.key(), "out-" + r.value()));
                        offsets.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                    }
                    producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                    batches[0]++;
                    if (batches[0] == 2 && !aborted[0]) {
                        producer.flush();   // the attempt's records reach the log before the abort
                        producer.abortTransaction();
                        aborted[0] = true;
                        check(before.equals(consumer.committed(inputs)), "offsets of the aborted transaction visible");
                        for (TopicPartition tp : inputs) {
                            OffsetAndMetadata c = before.get(tp);
                            consumer.seek(tp, c == null ? 0 : c.offset());
                        }
                    } else {
                        producer.commitTransaction();
                    }
                }
                Map<TopicPartition, OffsetAndMetadata> now = consumer.committed(inputs);
                return inputs.stream().allMatch(tp -> now.get(tp) != null && now.get(tp).offset() == ends.get(tp));
            });
            check(aborted[0], "no transaction was aborted");
        }
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < total; i++) expected.add("out-v" + i);
        expected.sort(null);
        checkEquals(expected, values(readAll(bootstrap, sink, 3, "read_committed")), "output exactly once");
    }

    static void fencing(String bootstrap) throws Exception {
        String topic = unique("jvm-fence");
        String tid = unique("jvm-fence-tid");
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, topic, 1);
        }
        KafkaProducer<String, String> zombie = transactional(bootstrap, tid);
        zombie.beginTransaction();
        zombie.send(new ProducerRecord<>(topic, 0, "k", "zombie")).get();
        try (KafkaProducer<String, String> live = transactional(bootstrap, tid)) {
            boolean fenced = false;
            try {
                zombie.commitTransaction();
            } catch (ProducerFencedException e) {
                fenced = true;
            }
            check(fenced, "the first producer was not fenced");
            live.beginTransaction();
            live.send(new ProducerRecord<>(topic, 0, "k", "live"));
            live.commitTransaction();
        } finally {
            zombie.close(ms(1000));
        }
        checkEquals(List.of("live"), values(readAll(bootstrap, topic, 1, "read_committed")), "visible records");
    }

    static void adminApis(String bootstrap) throws Exception {
        String topic = unique("jvm-txn-admin");
        String tid = unique("jvm-admin-tid");
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, topic, 2);
            try (KafkaProducer<String, String> producer = transactional(bootstrap, tid)) {
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(topic, 1, "k", "open")).get();

                Collection<TransactionListing> listed = admin.listTransactions().all().get();
                TransactionListing mine = listed.stream().filter(l -> l.transactionalId().equals(tid)).findFirst()
                        .orElseThrow(() -> new CheckFailed(tid + " not listed in " + listed));
                checkEquals("ONGOING", mine.state().name(), "listed state");
                Collection<TransactionListing> completed = admin.listTransactions(new ListTransactionsOptions()
                        .filterStates(List.of(org.apache.kafka.clients.admin.TransactionState.COMPLETE_COMMIT)))
                        .all().get();
                check(completed.stream().noneMatch(l -> l.transactionalId().equals(tid)), "state filter ignored");

                TransactionDescription d = admin.describeTransactions(List.of(tid)).description(tid).get();
                checkEquals("ONGOING", d.state().name(), "described state");
                checkEquals(mine.producerId(), d.producerId(), "described producer id");
                checkEquals(Set.of(new TopicPartition(topic, 1)), d.topicPartitions(), "described partitions");

                TopicPartition tp = new TopicPartition(topic, 1);
                DescribeProducersResult.PartitionProducerState producers =
                        admin.describeProducers(List.of(tp)).partitionResult(tp).get();
                List<ProducerState> active = producers.activeProducers();
                checkEquals(1, active.size(), "active producers");
                checkEquals(d.producerId(), active.get(0).producerId(), "active producer id");
                check(active.get(0).currentTransactionStartOffset().isPresent()
                        && active.get(0).currentTransactionStartOffset().getAsLong() == 0L,
                        "open transaction start offset: " + active.get(0));

                producer.commitTransaction();
                TransactionDescription after = admin.describeTransactions(List.of(tid)).description(tid).get();
                checkEquals("COMPLETE_COMMIT", after.state().name(), "state after commit");
                ProducerState done = admin.describeProducers(List.of(tp)).partitionResult(tp).get()
                        .activeProducers().get(0);
                check(done.currentTransactionStartOffset().isEmpty(), "transaction still open: " + done);
            }
        }
    }

    /** Admin.abortTransaction (kafka-transactions.sh abort): WriteTxnMarkers ends a transaction on a
     *  partition from what DescribeProducers shows, without the coordinator. */
    static void abortHanging(String bootstrap) throws Exception {
        String topic = unique("jvm-hanging");
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, topic, 1);
            TopicPartition tp = new TopicPartition(topic, 0);
            try (KafkaProducer<String, String> producer = transactional(bootstrap, unique("jvm-hanging-tid"))) {
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(topic, 0, "k", "hanging")).get();
                ProducerState open = admin.describeProducers(List.of(tp)).partitionResult(tp).get()
                        .activeProducers().get(0);
                check(open.currentTransactionStartOffset().isPresent(), "no open transaction: " + open);
                admin.abortTransaction(new AbortTransactionSpec(tp, open.producerId(), (short) open.producerEpoch(),
                        open.coordinatorEpoch().orElse(-1))).all().get();
                ProducerState after = admin.describeProducers(List.of(tp)).partitionResult(tp).get()
                        .activeProducers().get(0);
                check(after.currentTransactionStartOffset().isEmpty(), "still open after abortTransaction: " + after);
                checkEquals(List.of(), values(readAll(bootstrap, topic, 1, "read_committed")), "visible records");
                producer.abortTransaction();
            }
        }
    }

    /** Transactions V2 (KIP-890 part 2) when the cluster finalizes transaction.version 2: every
     *  commit and abort bumps the producer epoch (DescribeTransactions shows it, and the partition
     *  saw it in the marker); capped below 2 (V1), the epoch stays where InitProducerId put it. */
    static void epochPerTransaction(String bootstrap) throws Exception {
        String topic = unique("jvm-txn-epoch");
        String tid = unique("jvm-tid");
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, topic, 1);
            FinalizedVersionRange tv = admin.describeFeatures().featureMetadata().get()
                    .finalizedFeatures().get("transaction.version");
            boolean v2 = tv != null && tv.maxVersionLevel() >= 2;
            List<Short> epochs = new ArrayList<>();
            long producerId;
            try (KafkaProducer<String, String> producer = transactional(bootstrap, tid)) {
                TransactionDescription initial = admin.describeTransactions(List.of(tid)).description(tid).get();
                producerId = initial.producerId();
                epochs.add((short) initial.producerEpoch());
                for (int i = 0; i < 3; i++) {
                    producer.beginTransaction();
                    producer.send(new ProducerRecord<>(topic, 0, "k", "v" + i));
                    if (i == 1) {
                        producer.flush();
                        producer.abortTransaction();
                    } else {
                        producer.commitTransaction();
                    }
                    TransactionDescription d = admin.describeTransactions(List.of(tid)).description(tid).get();
                    checkEquals(producerId, d.producerId(), "producer id after transaction " + i);
                    epochs.add((short) d.producerEpoch());
                }
            }
            short e0 = epochs.get(0);
            List<Short> expected = v2 ? List.of(e0, (short) (e0 + 1), (short) (e0 + 2), (short) (e0 + 3))
                                      : List.of(e0, e0, e0, e0);
            checkEquals(expected, epochs, "producer epochs (transaction.version " + tv + ")");
            TopicPartition tp = new TopicPartition(topic, 0);
            ProducerState state = admin.describeProducers(List.of(tp)).partitionResult(tp).get()
                    .activeProducers().get(0);
            checkEquals(expected.get(3), (short) state.producerEpoch(), "the partition's last producer epoch");
        }
        checkEquals(List.of("v0", "v2"), values(readAll(bootstrap, topic, 1, "read_committed")),
                "read_committed values");
    }

    static TransactionDescription describe(Admin admin, String tid) throws Exception {
        return admin.describeTransactions(List.of(tid)).description(tid).get();
    }

    static void setTransactionVersion(Admin admin, int level, FeatureUpdate.UpgradeType kind) throws Exception {
        admin.updateFeatures(Map.of("transaction.version", new FeatureUpdate((short) level, kind)), new org.apache.kafka.clients.admin.UpdateFeaturesOptions()).all().get();
    }

    /** Commits two transactions on a new producer; the epochs DescribeTransactions shows before
     *  and after each. */
    static List<Short> twoCommits(Admin admin, String bootstrap, String topic) throws Exception {
        String tid = unique("jvm-tid");
        List<Short> epochs = new ArrayList<>();
        try (KafkaProducer<String, String> producer = transactional(bootstrap, tid)) {
            epochs.add((short) describe(admin, tid).producerEpoch());
            for (int i = 0; i < 2; i++) {
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(topic, 0, "k", tid + "-" + i));
                producer.commitTransaction();
                epochs.add((short) describe(admin, tid).producerEpoch());
            }
        }
        return epochs;
    }

    /** A transaction left open until the coordinator times it out (transaction.timeout.ms 1 s);
     *  the epoch it had, then the one the coordinator's abort left. */
    static List<Short> timedOut(Admin admin, String bootstrap, String topic) throws Exception {
        String tid = unique("jvm-tid");
        Properties p = producerProps(bootstrap);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, tid);
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "1000");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, "k", "hanging")).get();
            short before = (short) describe(admin, tid).producerEpoch();
            waitUntil(30_000, "the coordinator aborting " + tid, () -> {
                try {
                    return describe(admin, tid).state() == TransactionState.COMPLETE_ABORT;
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            return List.of(before, (short) describe(admin, tid).producerEpoch());
        }
    }

    /** transaction.version changed while the cluster runs (Admin.updateFeatures): a producer
     *  started after a downgrade to 1 runs V1 (its epoch kept across transactions) and the
     *  coordinator's own timeout abort is V1's (one bump); after the upgrade back to 2, V2 (an
     *  epoch bump per transaction, a timeout fencing then bumping again). */
    static void versionChange(String bootstrap) throws Exception {
        String topic = unique("jvm-txn-version");
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, topic, 1);
            List<Short> v2 = twoCommits(admin, bootstrap, topic);
            checkEquals(List.of(v2.get(0), (short) (v2.get(0) + 1), (short) (v2.get(0) + 2)), v2, "epochs under V2");

            setTransactionVersion(admin, 1, FeatureUpdate.UpgradeType.SAFE_DOWNGRADE);
            checkEquals((short) 1, admin.describeFeatures().featureMetadata().get().finalizedFeatures()
                    .get("transaction.version").maxVersionLevel(), "finalized transaction.version");
            List<Short> v1 = twoCommits(admin, bootstrap, topic);
            checkEquals(List.of(v1.get(0), v1.get(0), v1.get(0)), v1, "epochs under V1");
            List<Short> abortV1 = timedOut(admin, bootstrap, topic);
            checkEquals((short) (abortV1.get(0) + 1), abortV1.get(1), "epoch after a timeout under V1");

            setTransactionVersion(admin, 2, FeatureUpdate.UpgradeType.UPGRADE);
            List<Short> again = twoCommits(admin, bootstrap, topic);
            checkEquals(List.of(again.get(0), (short) (again.get(0) + 1), (short) (again.get(0) + 2)), again,
                        "epochs under V2 again");
            List<Short> abortV2 = timedOut(admin, bootstrap, topic);
            checkEquals((short) (abortV2.get(0) + 2), abortV2.get(1), "epoch after a timeout under V2");
        }
    }
}

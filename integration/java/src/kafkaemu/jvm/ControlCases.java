package kafkaemu.jvm;

import static kafkaemu.jvm.Support.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Future;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * The Java client against an emulator driven only through its HTTP control API (ControlApi).
 *
 * Usage: java kafkaemu.jvm.ControlCases CASE BOOTSTRAP CONTROL_URL   (or "list")
 * Prints "PASS CASE (N ms)" and exits 0, or "FAIL CASE: reason" and exits 1.
 */
public final class ControlCases {
    private ControlCases() {}

    interface Case {
        void run(String bootstrap, ControlApi api) throws Exception;
    }

    static Map<String, Case> cases() {
        Map<String, Case> c = new LinkedHashMap<>();
        c.put("control-expire-member", ControlCases::expireMember);
        c.put("control-partition-fault", ControlCases::partitionFault);
        c.put("control-node-failover", ControlCases::nodeFailover);
        c.put("control-version-cap", ControlCases::versionCap);
        c.put("control-snapshot-restore", ControlCases::snapshotRestore);
        return c;
    }

    static final long MINUTE = 60_000;

    /** A consumer polling on its own thread until closed; while paused it neither polls nor rejoins. */
    static final class Member implements Runnable {
        final String clientId;
        final KafkaConsumer<String, String> consumer;
        final Thread thread;
        volatile boolean paused;
        volatile boolean stop;
        volatile Throwable error;
        final List<String> values = new ArrayList<>();

        Member(String bootstrap, String group, String clientId, String topic, boolean sticky, boolean autoCommit) {
            this.clientId = clientId;
            Properties p = consumerProps(bootstrap, group, clientId);
            p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "200");
            p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
            if (sticky) p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
            if (autoCommit) {
                p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "true");
                p.put(ConsumerConfig.AUTO_COMMIT_INTERVAL_MS_CONFIG, "100");
            }
            consumer = new KafkaConsumer<>(p);
            consumer.subscribe(List.of(topic));
            thread = new Thread(this, "member-" + clientId);
            thread.setDaemon(true);
            thread.start();
        }

        @Override public void run() {
            try {
                while (!stop) {
                    if (paused) { Thread.sleep(20); continue; }
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(50))) {
                        synchronized (values) { values.add(r.value()); }
                    }
                }
            } catch (Throwable t) {
                error = t;
            } finally {
                consumer.close(Duration.ofSeconds(5));
            }
        }

        void close() throws InterruptedException {
            stop = true;
            thread.join(20_000);
            check(error == null, clientId + " failed: " + error);
        }
    }

    static KafkaProducer<String, String> producer(String bootstrap, String clientId, int lingerMs) {
        Properties p = producerProps(bootstrap);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        p.put(ProducerConfig.LINGER_MS_CONFIG, String.valueOf(lingerMs));
        p.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, "50");
        return new KafkaProducer<>(p);
    }

    static void send(KafkaProducer<String, String> producer, String topic, String prefix, int count, int partitions)
            throws Exception {
        List<Future<?>> acks = new ArrayList<>();
        for (int i = 0; i < count; i++) acks.add(producer.send(new ProducerRecord<>(topic, i % partitions, null, prefix + i)));
        producer.flush();
        for (Future<?> f : acks) f.get();
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> current(Object awaited) {
        return (Map<String, Object>) ((Map<String, Object>) awaited).get("current");
    }

    @SuppressWarnings("unchecked")
    static Map<String, Set<Long>> assignments(Map<String, Object> group) {
        Map<String, Set<Long>> out = new TreeMap<>();
        for (Object m : (List<Object>) group.get("members")) {
            Map<String, Object> member = (Map<String, Object>) m;
            Set<Long> parts = new HashSet<>();
            for (Object a : (List<Object>) member.get("assignment")) {
                for (Object p : (List<Object>) ((Map<String, Object>) a).get("partitions")) parts.add((Long) p);
            }
            out.put((String) member.get("client_id"), parts);
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> list(Object json, String key) {
        return (List<Map<String, Object>>) ((Map<String, Object>) json).get(key);
    }

    static void awaitLag(ControlApi api, String group, String topic) throws Exception {
        api.post("/api/await/lag", "group", group, "topic", topic, "lag", 0, "timeout_ms", MINUTE);
    }

    // -- cases -------------------------------------------------------------------------------
    /** A member expired by the member-scoped control hands its partitions to the others; they keep theirs. */
    static void expireMember(String bootstrap, ControlApi api) throws Exception {
        String topic = unique("jexpire"), group = unique("jg");
        api.post("/api/topics", "name", topic, "partitions", 6);
        List<Member> members = new ArrayList<>();
        for (String id : List.of("victim", "survivor-0", "survivor-1")) {
            members.add(new Member(bootstrap, group, id, topic, true, false));
        }
        try {
            Object settled = api.post("/api/await/group", "group", group, "state", "Stable", "members", 3,
                                      "assigned", true, "timeout_ms", MINUTE);
            long returnedAt = System.currentTimeMillis();
            long stableAt = 0;
            for (Map<String, Object> e : list(api.get("/api/journal?group=" + ControlApi.enc(group)), "entries")) {
                if ("Stable".equals(e.get("to"))) stableAt = Math.max(stableAt, (Long) e.get("at_ms"));
            }
            // the await answered when the group became Stable, not at its timeout
            System.out.println("await returned " + (returnedAt - stableAt) + " ms after the group became Stable");
            check(stableAt > 0 && returnedAt - stableAt < 5000, "await returned " + (returnedAt - stableAt) + " ms late");
            Map<String, Set<Long>> before = assignments(current(settled));
            checkEquals(3, before.size(), "members before");
            members.get(0).paused = true;   // stops polling: it will not rejoin
            Map<String, Object> expired = api.map(api.post("/api/groups/" + ControlApi.enc(group) + "/expire",
                                                           "client_id", "victim"));
            checkEquals(1, ((List<?>) expired.get("expired")).size(), "expired members");
            long generation = (Long) current(settled).get("generation");
            Map<String, Set<Long>> after = assignments(current(api.post(
                "/api/await/group", "group", group, "state", "Stable", "members", 2, "assigned", true,
                "generation", generation + 1, "timeout_ms", MINUTE)));
            checkEquals(Set.of("survivor-0", "survivor-1"), after.keySet(), "members after");
            Set<Long> union = new HashSet<>();
            for (String id : after.keySet()) {
                check(after.get(id).containsAll(before.get(id)), id + " kept " + before.get(id) + ", has " + after.get(id));
                union.addAll(after.get(id));
            }
            checkEquals(Set.of(0L, 1L, 2L, 3L, 4L, 5L), union, "partitions held");
        } finally {
            for (Member m : members) m.close();
        }
    }

    /** A fault scoped to one partition makes the producer retry only that partition. */
    @SuppressWarnings("unchecked")
    static void partitionFault(String bootstrap, ControlApi api) throws Exception {
        String topic = unique("jpfault");
        api.post("/api/topics", "name", topic, "partitions", 3);
        for (int p = 0; p < 3; p++) api.post("/api/topics/" + topic + "/partitions/" + p + "/leader", "node", 0);
        api.put("/api/requests/config", "enabled", true, "bodies", true);
        api.post("/api/faults", "api", "Produce", "error", "NOT_LEADER_OR_FOLLOWER", "topic", topic, "partition", 1,
                 "count", 2);
        try (KafkaProducer<String, String> producer = producer(bootstrap, "jpfault-producer", 200)) {
            send(producer, topic, "value-", 3, 3);
        }
        int[] named = new int[3];
        for (Map<String, Object> e : list(api.get("/api/requests?api=Produce&client_id=jpfault-producer"), "entries")) {
            for (Object td : (List<Object>) ((Map<String, Object>) e.get("request")).get("topic_data")) {
                for (Object pd : (List<Object>) ((Map<String, Object>) td).get("partition_data")) {
                    named[((Long) ((Map<String, Object>) pd).get("index")).intValue()]++;
                }
            }
        }
        checkEquals(List.of(1, 3, 1), List.of(named[0], named[1], named[2]), "requests naming partitions 0, 1, 2");
        checkEquals(2L, list(api.get("/api/faults"), "faults").get(0).get("fired"), "fault fired");
        for (Map<String, Object> p : list(api.get("/api/topics/" + topic), "partitions")) {
            checkEquals(1L, p.get("high_watermark"), "high watermark of partition " + p.get("partition"));
        }
    }

    /** Stopping the coordinator's node makes the clients fail over; once started, they use it again. */
    @SuppressWarnings("unchecked")
    static void nodeFailover(String bootstrap, ControlApi api) throws Exception {
        String topic = unique("jfailover"), group = unique("jg");
        api.post("/api/topics", "name", topic, "partitions", 3);
        Member consumer = new Member(bootstrap, group, "jfo-consumer", topic, false, true);
        try (KafkaProducer<String, String> producer = producer(bootstrap, "jfo-producer", 5)) {
            api.post("/api/await/group", "group", group, "state", "Stable", "members", 1, "assigned", true,
                     "timeout_ms", MINUTE);
            send(producer, topic, "a", 30, 3);
            awaitLag(api, group, topic);
            long node = (Long) api.map(api.get("/api/groups/" + group)).get("coordinator");
            api.post("/api/nodes/" + node + "/stop");
            send(producer, topic, "b", 30, 3);
            awaitLag(api, group, topic);
            check(!Long.valueOf(node).equals(api.map(api.get("/api/groups/" + group)).get("coordinator")),
                  "the coordinator moved off the stopped node");
            api.put("/api/requests/config", "enabled", true);
            long seq = (Long) api.map(api.get("/api/requests")).get("next_seq") - 1;
            api.post("/api/nodes/" + node + "/start");
            checkEquals(node, api.map(api.get("/api/groups/" + group)).get("coordinator"), "coordinator back");
            send(producer, topic, "c", 30, 3);
            awaitLag(api, group, topic);
            check(!list(api.get("/api/requests?node=" + node + "&after=" + seq), "entries").isEmpty(),
                  "clients reached the restarted node");
        } finally {
            consumer.close();
        }
    }

    static Set<Long> produceVersions(String bootstrap, ControlApi api, String topic, String clientId) throws Exception {
        try (KafkaProducer<String, String> producer = producer(bootstrap, clientId, 0)) {
            send(producer, topic, "x", 1, 1);
        }
        Set<Long> versions = new HashSet<>();
        for (Map<String, Object> e : list(api.get("/api/requests?api=Produce&client_id=" + clientId), "entries")) {
            versions.add((Long) e.get("version"));
        }
        return versions;
    }

    /** An API version cap makes the client fall back to an older Produce version. */
    static void versionCap(String bootstrap, ControlApi api) throws Exception {
        String topic = unique("jcaps");
        api.post("/api/topics", "name", topic, "partitions", 1);
        api.put("/api/requests/config", "enabled", true);
        Set<Long> uncapped = produceVersions(bootstrap, api, topic, "juncapped");
        long highest = uncapped.stream().mapToLong(Long::longValue).max().orElseThrow();
        check(highest > 4, "uncapped Produce version " + highest);
        api.put("/api/api-versions/Produce", "max_version", highest - 2);
        Set<Long> capped = produceVersions(bootstrap, api, topic, "jcapped");
        check(!capped.isEmpty() && capped.stream().allMatch(v -> v <= highest - 2), "capped versions " + capped);
    }

    static Map<Integer, List<String>> readAll(String bootstrap, String topic, int partitions) {
        Map<Integer, List<String>> out = new TreeMap<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(consumerProps(bootstrap, null, "jreader"))) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < partitions; p++) { tps.add(new TopicPartition(topic, p)); out.put(p, new ArrayList<>()); }
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            while (tps.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) out.get(r.partition()).add(r.value());
            }
        }
        return out;
    }

    /** snapshot, produce and commit, restore: the exact offsets and records are back; clients continue. */
    static void snapshotRestore(String bootstrap, ControlApi api) throws Exception {
        String topic = unique("jsnap"), group = unique("jg");
        api.post("/api/topics", "name", topic, "partitions", 2);
        Member consumer = new Member(bootstrap, group, "jsnap-consumer", topic, false, true);
        try {
            api.post("/api/await/group", "group", group, "state", "Stable", "members", 1, "assigned", true,
                     "timeout_ms", MINUTE);
            try (KafkaProducer<String, String> producer = producer(bootstrap, "jsnap-producer", 5)) {
                send(producer, topic, "kept-", 10, 2);
                awaitLag(api, group, topic);
                api.put("/api/snapshots/jbase");
                Object savedTopic = api.map(api.get("/api/topics/" + topic)).get("partitions");
                Object savedOffsets = api.map(api.get("/api/groups/" + group)).get("offsets");
                Map<Integer, List<String>> savedRecords = readAll(bootstrap, topic, 2);
                send(producer, topic, "lost-", 6, 2);
                awaitLag(api, group, topic);
                api.post("/api/snapshots/jbase/restore");
                checkEquals(savedTopic, api.map(api.get("/api/topics/" + topic)).get("partitions"), "partitions");
                checkEquals(committed(savedOffsets), committed(api.map(api.get("/api/groups/" + group)).get("offsets")),
                            "committed offsets");
                checkEquals(savedRecords, readAll(bootstrap, topic, 2), "records");
            }
            // the consumer reconnects and continues; a new producer (an idempotent one's sequences are ahead)
            try (KafkaProducer<String, String> producer = producer(bootstrap, "jsnap-producer-2", 5)) {
                send(producer, topic, "after-", 4, 2);
            }
            awaitLag(api, group, topic);
            for (Map<String, Object> p : list(api.get("/api/topics/" + topic), "partitions")) {
                checkEquals(7L, p.get("high_watermark"), "high watermark");
            }
        } finally {
            consumer.close();
        }
    }

    @SuppressWarnings("unchecked")
    static Map<Long, Object> committed(Object offsets) {
        Map<Long, Object> out = new TreeMap<>();
        for (Object o : (List<Object>) offsets) {
            Map<String, Object> m = (Map<String, Object>) o;
            out.put((Long) m.get("partition"), m.get("committed_offset"));
        }
        return out;
    }

    public static void main(String[] args) {
        Runner.main("ControlCases", "BOOTSTRAP CONTROL_URL", cases(), args, (c, a) -> c.run(a[0], new ControlApi(a[1])));
    }
}

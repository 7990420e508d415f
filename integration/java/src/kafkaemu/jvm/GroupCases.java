package kafkaemu.jvm;

import static kafkaemu.jvm.Support.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.MemberToRemove;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.common.TopicPartition;

/** Three consumers in one group: assignors, rebalance on close, static membership. */
final class GroupCases {
    private GroupCases() {}

    /** One group member polling on its own thread (KafkaConsumer is single-threaded). */
    static final class Member implements Runnable {
        final String clientId;
        final KafkaConsumer<String, String> consumer;
        final Thread thread;
        volatile Set<TopicPartition> assignment = Set.of();
        volatile int generation = -1;
        volatile String memberId = "";
        volatile boolean stop;
        volatile CloseOptions closeOptions = CloseOptions.timeout(Duration.ofSeconds(10));
        volatile Throwable error;
        final AtomicInteger callbacks = new AtomicInteger();

        Member(String bootstrap, String group, String clientId, String assignor, String instanceId, List<String> topics) {
            this.clientId = clientId;
            Properties p = consumerProps(bootstrap, group, clientId);
            p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, assignor);
            p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "200");
            p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
            if (instanceId != null) p.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, instanceId);
            consumer = new KafkaConsumer<>(p);
            consumer.subscribe(topics, new ConsumerRebalanceListener() {
                @Override public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    if (!partitions.isEmpty()) callbacks.incrementAndGet();
                }
                @Override public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    callbacks.incrementAndGet();
                }
            });
            thread = new Thread(this, "member-" + clientId);
            thread.setDaemon(true);
            thread.start();
        }

        @Override public void run() {
            try {
                while (!stop) {
                    consumer.poll(Duration.ofMillis(50));
                    assignment = Set.copyOf(consumer.assignment());
                    generation = consumer.groupMetadata().generationId();
                    memberId = consumer.groupMetadata().memberId();
                }
            } catch (Throwable t) {
                error = t;
            } finally {
                consumer.close(closeOptions);
            }
        }

        void close(CloseOptions options) throws InterruptedException {
            closeOptions = options;
            stop = true;
            thread.join(20_000);
            check(!thread.isAlive(), clientId + " did not close");
            check(error == null, clientId + " failed: " + error);
        }
    }

    static Set<TopicPartition> partitions(String topic, int n) {
        Set<TopicPartition> out = new HashSet<>();
        for (int i = 0; i < n; i++) out.add(new TopicPartition(topic, i));
        return out;
    }

    /** True when the members agree on one generation and own every partition exactly once. */
    static boolean settled(List<Member> members, Set<TopicPartition> all) {
        Set<TopicPartition> union = new HashSet<>();
        int generation = members.get(0).generation;
        for (Member m : members) {
            if (m.error != null) throw new CheckFailed(m.clientId + " failed: " + m.error);
            if (m.generation != generation || generation < 1) return false;
            for (TopicPartition tp : m.assignment) {
                if (!union.add(tp)) return false;
            }
        }
        return union.equals(all);
    }

    static Map<String, Set<TopicPartition>> snapshot(List<Member> members) {
        Map<String, Set<TopicPartition>> out = new TreeMap<>();
        for (Member m : members) out.put(m.clientId, m.assignment);
        return out;
    }

    static Set<TopicPartition> tps(Object... topicAndPartitions) {
        Set<TopicPartition> out = new HashSet<>();
        for (int i = 0; i < topicAndPartitions.length; i += 2) {
            out.add(new TopicPartition((String) topicAndPartitions[i], (Integer) topicAndPartitions[i + 1]));
        }
        return out;
    }

    interface Expectation {
        void verify(String t1, String t2, Map<String, Set<TopicPartition>> three, Map<String, Set<TopicPartition>> two);
    }

    /** Start C1, C2, C3 (in that order, so member ids sort C1 < C2 < C3), settle, close C3, settle again. */
    static void runGroup(String bootstrap, String assignor, Expectation expectation) throws Exception {
        String t1 = unique("jvm-t1");
        String t2 = unique("jvm-t2");
        String group = unique("jvm-group");
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, t1, 3);
            createTopic(admin, t2, 4);
        }
        Set<TopicPartition> all = new HashSet<>(partitions(t1, 3));
        all.addAll(partitions(t2, 4));
        List<Member> members = new ArrayList<>();
        try {
            for (String id : List.of("C1", "C2", "C3")) {
                members.add(new Member(bootstrap, group, id, assignor, null, List.of(t1, t2)));
                List<Member> joined = List.copyOf(members);
                waitUntil(30_000, "group of " + joined.size() + " never settled: " + snapshot(joined), () -> settled(joined, all));
            }
            Map<String, Set<TopicPartition>> three = snapshot(members);
            int generation = members.get(0).generation;
            for (Member m : members) check(m.memberId.startsWith(m.clientId + "-"), "member id " + m.memberId + " does not start with " + m.clientId);

            members.remove(2).close(CloseOptions.timeout(Duration.ofSeconds(10)));
            waitUntil(30_000, "group did not rebalance after C3 closed: " + snapshot(members), () -> settled(members, all));
            check(members.get(0).generation > generation, "generation did not advance after C3 left");
            expectation.verify(t1, t2, three, snapshot(members));
        } finally {
            for (Member m : members) m.stop = true;
            for (Member m : members) m.thread.join(15_000);
        }
    }

    static void range(String bootstrap) throws Exception {
        runGroup(bootstrap, RangeAssignor.class.getName(), (t1, t2, three, two) -> {
            // Range: per topic, consecutive blocks; the first members get one more when it does not divide.
            checkEquals(tps(t1, 0, t2, 0, t2, 1), three.get("C1"), "range C1 of three");
            checkEquals(tps(t1, 1, t2, 2), three.get("C2"), "range C2 of three");
            checkEquals(tps(t1, 2, t2, 3), three.get("C3"), "range C3 of three");
            checkEquals(tps(t1, 0, t1, 1, t2, 0, t2, 1), two.get("C1"), "range C1 of two");
            checkEquals(tps(t1, 2, t2, 2, t2, 3), two.get("C2"), "range C2 of two");
        });
    }

    static void roundRobin(String bootstrap) throws Exception {
        runGroup(bootstrap, RoundRobinAssignor.class.getName(), (t1, t2, three, two) -> {
            // RoundRobin: every partition of every topic, sorted, dealt to members in member-id order.
            String a = t1.compareTo(t2) < 0 ? t1 : t2;
            String b = a.equals(t1) ? t2 : t1;
            List<TopicPartition> order = new ArrayList<>();
            for (String t : List.of(a, b)) for (int i = 0; i < (t.equals(t1) ? 3 : 4); i++) order.add(new TopicPartition(t, i));
            for (int n : new int[] {3, 2}) {
                Map<String, Set<TopicPartition>> got = n == 3 ? three : two;
                for (int m = 0; m < n; m++) {
                    Set<TopicPartition> expected = new HashSet<>();
                    for (int i = m; i < order.size(); i += n) expected.add(order.get(i));
                    checkEquals(expected, got.get("C" + (m + 1)), "roundrobin C" + (m + 1) + " of " + n);
                }
            }
        });
    }

    static void cooperativeSticky(String bootstrap) throws Exception {
        runGroup(bootstrap, CooperativeStickyAssignor.class.getName(), (t1, t2, three, two) -> {
            for (Map<String, Set<TopicPartition>> a : List.of(three, two)) {
                int min = a.values().stream().mapToInt(Set::size).min().orElse(0);
                int max = a.values().stream().mapToInt(Set::size).max().orElse(0);
                check(max - min <= 1, "cooperative-sticky unbalanced: " + a);
            }
            // Sticky: the members that stayed keep everything they had.
            check(two.get("C1").containsAll(three.get("C1")), "C1 lost partitions: " + three.get("C1") + " -> " + two.get("C1"));
            check(two.get("C2").containsAll(three.get("C2")), "C2 lost partitions: " + three.get("C2") + " -> " + two.get("C2"));
        });
    }

    /**
     * group.instance.id: a static member that restarts within its session timeout gets its old
     * assignment back without a rebalance; removing it by instance id rebalances at once.
     */
    static void staticMembership(String bootstrap) throws Exception {
        String topic = unique("jvm-static");
        String group = unique("jvm-static-group");
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, topic, 6);
            Set<TopicPartition> all = partitions(topic, 6);
            String assignor = RangeAssignor.class.getName();
            List<Member> members = new ArrayList<>();
            try {
                for (String id : List.of("C1", "C2", "C3")) {
                    members.add(new Member(bootstrap, group, id, assignor, "instance-" + id, List.of(topic)));
                    List<Member> joined = List.copyOf(members);
                    waitUntil(30_000, "static group never settled: " + snapshot(joined), () -> settled(joined, all));
                }
                Map<String, Set<TopicPartition>> before = snapshot(members);
                int generation = members.get(0).generation;
                int c1Callbacks = members.get(0).callbacks.get();
                int c3Callbacks = members.get(2).callbacks.get();
                String oldC2 = members.get(1).memberId;

                // C2 goes away without leaving the group: nothing happens to the others.
                members.get(1).close(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.REMAIN_IN_GROUP));
                Thread.sleep(1000);
                checkEquals(generation, members.get(0).generation, "generation while static C2 is away");
                checkEquals(before.get("C1"), members.get(0).assignment, "C1 assignment while C2 is away");

                Member back = new Member(bootstrap, group, "C2", assignor, "instance-C2", List.of(topic));
                members.set(1, back);
                waitUntil(20_000, "restarted static member never got its assignment", () -> !back.assignment.isEmpty());
                checkEquals(before.get("C2"), back.assignment, "restarted static member's assignment");
                check(!back.memberId.equals(oldC2), "restarted member kept its old member id " + oldC2);
                checkEquals(generation, back.generation, "generation after the static rejoin (no rebalance)");
                Thread.sleep(500);
                checkEquals(c1Callbacks, members.get(0).callbacks.get(), "C1 rebalance callbacks after static rejoin");
                checkEquals(c3Callbacks, members.get(2).callbacks.get(), "C3 rebalance callbacks after static rejoin");
                checkEquals(generation, members.get(0).generation, "C1 generation after static rejoin");

                // LeaveGroup by instance id (admin) removes C3 at once and the rest take its partitions.
                Member c3 = members.get(2);
                admin.removeMembersFromConsumerGroup(group, new RemoveMembersFromConsumerGroupOptions(
                        List.of(new MemberToRemove("instance-C3")))).all().get();
                c3.stop = true;
                c3.thread.join(15_000);
                members.remove(2);
                waitUntil(30_000, "group did not rebalance after removing instance-C3: " + snapshot(members),
                        () -> settled(members, all));
                check(members.get(0).generation > generation, "generation did not advance after removing instance-C3");
            } finally {
                for (Member m : members) m.stop = true;
                for (Member m : members) m.thread.join(15_000);
            }
        }
    }
}

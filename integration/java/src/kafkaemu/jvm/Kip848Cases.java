package kafkaemu.jvm;

import static kafkaemu.jvm.Support.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;

/** KIP-848: consumers with group.protocol=consumer, assigned by kafkaemu's server-side assignor. */
final class Kip848Cases {
    private Kip848Cases() {}

    static final class Member implements Runnable {
        final String clientId;
        final KafkaConsumer<String, String> consumer;
        final Thread thread;
        volatile Set<TopicPartition> assignment = Set.of();
        volatile boolean stop;
        volatile Throwable error;
        volatile Map<TopicPartition, OffsetAndMetadata> toCommit;

        Member(String bootstrap, String group, String clientId, String topic) {
            this(bootstrap, group, clientId, topic, null, null);
        }

        /** Subscribes to ``topic``, or with a broker-side regex (SubscriptionPattern) when ``regex`` is set. */
        Member(String bootstrap, String group, String clientId, String topic, String regex, String instanceId) {
            this(bootstrap, group, clientId, topic, regex, instanceId, "consumer");
        }

        /** ``protocol``: the group.protocol, consumer (KIP-848) or classic. */
        Member(String bootstrap, String group, String clientId, String topic, String regex, String instanceId,
               String protocol) {
            this.clientId = clientId;
            Properties p = consumerProps(bootstrap, group, clientId);
            p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
            if (instanceId != null) p.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, instanceId);
            consumer = new KafkaConsumer<>(p);
            if (regex != null) consumer.subscribe(new SubscriptionPattern(regex));
            else consumer.subscribe(List.of(topic));
            thread = new Thread(this, "kip848-" + clientId);
            thread.setDaemon(true);
            thread.start();
        }

        @Override public void run() {
            try {
                while (!stop) {
                    consumer.poll(Duration.ofMillis(50));
                    assignment = Set.copyOf(consumer.assignment());
                    Map<TopicPartition, OffsetAndMetadata> commit = toCommit;
                    if (commit != null) {
                        consumer.commitSync(commit);
                        toCommit = null;
                    }
                }
            } catch (Throwable t) {
                error = t;
            } finally {
                consumer.close();
            }
        }

        void close() throws InterruptedException {
            stop = true;
            thread.join(20_000);
            check(!thread.isAlive(), clientId + " did not close");
            check(error == null, clientId + " failed: " + error);
        }
    }

    static boolean split(List<Member> members, Set<TopicPartition> all, int each) {
        Set<TopicPartition> union = new HashSet<>();
        for (Member m : members) {
            if (m.error != null) throw new CheckFailed(m.clientId + " failed: " + m.error);
            if (m.assignment.size() != each) return false;
            for (TopicPartition tp : m.assignment) if (!union.add(tp)) return false;
        }
        return union.equals(all);
    }

    static Map<String, Set<TopicPartition>> snapshot(List<Member> members) {
        Map<String, Set<TopicPartition>> out = new TreeMap<>();
        for (Member m : members) out.put(m.clientId, m.assignment);
        return out;
    }

    /** Three consumers split six partitions 2/2/2; one closes and the others take 3/3, keeping theirs;
     *  a commit with the member epoch succeeds; the admin client describes a CONSUMER group. */
    static void consumerProtocol(String bootstrap) throws Exception {
        String topic = unique("jvm-kip848");
        String group = unique("jvm-kip848-group");
        Set<TopicPartition> all = new HashSet<>();
        for (int i = 0; i < 6; i++) all.add(new TopicPartition(topic, i));
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, topic, 6);
            List<Member> members = new ArrayList<>();
            try {
                for (String id : List.of("C1", "C2", "C3")) members.add(new Member(bootstrap, group, id, topic));
                waitUntil(60_000, "no 2/2/2 split: " + snapshot(members), () -> split(members, all, 2));

                ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
                checkEquals(GroupType.CONSUMER, d.type(), "group type");
                checkEquals(GroupState.STABLE, d.groupState(), "group state");
                checkEquals(3, d.members().size(), "described members");
                for (MemberDescription m : d.members()) {
                    check(m.assignment().topicPartitions().size() == 2, "described assignment " + m);
                }

                Member c1 = members.get(0);
                TopicPartition mine = c1.assignment.iterator().next();
                c1.toCommit = Map.of(mine, new OffsetAndMetadata(3));
                waitUntil(20_000, "commit did not complete", () -> c1.toCommit == null || c1.error != null);
                check(c1.error == null, "commit failed: " + c1.error);
                Map<TopicPartition, OffsetAndMetadata> committed =
                        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
                checkEquals(3L, committed.get(mine).offset(), "committed offset");

                Map<String, Set<TopicPartition>> before = snapshot(members);
                members.remove(2).close();
                waitUntil(60_000, "no 3/3 split after C3 closed: " + snapshot(members), () -> split(members, all, 3));
                for (Member m : members) {
                    check(m.assignment.containsAll(before.get(m.clientId)), m.clientId + " lost partitions: "
                            + before.get(m.clientId) + " -> " + m.assignment);
                }
            } finally {
                for (Member m : members) m.stop = true;
                for (Member m : members) m.thread.join(15_000);
            }
        }
    }

    /** Static members subscribed with a broker-side regex: a new matching topic is split between them;
     *  a static member that closes and restarts gets its partitions back while the other keeps its own. */
    static void staticRegex(String bootstrap) throws Exception {
        String prefix = unique("jvm-kip848re");
        String group = unique("jvm-kip848re-group");
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, prefix + "-a", 4);
            Set<TopicPartition> all = new HashSet<>();
            for (int i = 0; i < 4; i++) all.add(new TopicPartition(prefix + "-a", i));
            List<Member> members = new ArrayList<>();
            try {
                for (String id : List.of("C1", "C2")) {
                    members.add(new Member(bootstrap, group, id, null, prefix + "-.*", "instance-" + id));
                }
                waitUntil(60_000, "no 2/2 split: " + snapshot(members), () -> split(members, all, 2));
                createTopic(admin, prefix + "-b", 2);
                for (int i = 0; i < 2; i++) all.add(new TopicPartition(prefix + "-b", i));
                waitUntil(60_000, "new topic not split 3/3: " + snapshot(members), () -> split(members, all, 3));

                Map<String, Set<TopicPartition>> before = snapshot(members);
                members.remove(1).close();
                Thread.sleep(1000);
                checkEquals(before.get("C1"), members.get(0).assignment, "C1 while static C2 is away");
                members.add(new Member(bootstrap, group, "C2", null, prefix + "-.*", "instance-C2"));
                waitUntil(30_000, "restarted static member did not get its partitions back: " + snapshot(members),
                        () -> before.get("C2").equals(members.get(1).assignment));
                checkEquals(before.get("C1"), members.get(0).assignment, "C1 after C2 restarted");
            } finally {
                for (Member m : members) m.stop = true;
                for (Member m : members) m.thread.join(15_000);
            }
        }
    }

    static GroupType groupType(Admin admin, String group) {
        try {
            return admin.describeConsumerGroups(List.of(group)).describedGroups().get(group).get().type();
        } catch (Exception e) {
            return null;
        }
    }

    /** Online migration (group.consumer.migration.policy=bidirectional): a classic consumer's group
     *  becomes a consumer group when a consumer-protocol member joins, the two share the partitions,
     *  and it is classic again once that member leaves. */
    static void migration(String bootstrap) throws Exception {
        String topic = unique("jvm-migrate");
        String group = unique("jvm-migrate-g");
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, topic, 4);
            Member classic = new Member(bootstrap, group, "classic", topic, null, null, "classic");
            waitUntil(60_000, "the classic member's assignment", () -> classic.assignment.size() == 4);
            checkEquals(GroupType.CLASSIC, groupType(admin, group), "group type before the upgrade");
            Member modern = new Member(bootstrap, group, "modern", topic);
            waitUntil(60_000, "the partitions shared", () -> classic.assignment.size() == 2
                    && modern.assignment.size() == 2 && !classic.assignment.equals(modern.assignment));
            checkEquals(GroupType.CONSUMER, groupType(admin, group), "group type after the upgrade");
            modern.close();
            waitUntil(60_000, "the classic group again", () -> classic.assignment.size() == 4
                    && groupType(admin, group) == GroupType.CLASSIC);
            classic.close();
        }
    }
}

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * The Java KafkaShareConsumer and share-group Admin calls of an unprivileged user ("alice") against
 * kafkaemu's authorizer over SASL/SCRAM, as Kafka's KafkaApis answers them. The super user "admin"
 * creates a topic with records and grants alice ACLs step by step: with DESCRIBE on the group and
 * the topic, the share consumer gets GroupAuthorizationException (ShareGroupHeartbeat needs READ on
 * the group); with READ on the group, TopicAuthorizationException (ShareFetch needs READ on the
 * topic); with READ on the topic it consumes every record. Alice's Admin may describe her group and its offsets (READ implies DESCRIBE) but
 * not another group, and may not delete her group's offsets without DELETE.
 *
 * Usage: ShareAclClient BOOTSTRAP ADMIN_PASSWORD ALICE_PASSWORD. Prints "PASS" or "FAIL reason".
 */
public final class ShareAclClient {
    static Properties props(String bootstrap, String user, String password) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("security.protocol", "SASL_PLAINTEXT");
        p.put("sasl.mechanism", "SCRAM-SHA-256");
        p.put("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required username=\""
            + user + "\" password=\"" + password + "\";");
        p.put("key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        p.put("value.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        p.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        p.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        p.put("default.api.timeout.ms", "30000");
        p.put("max.block.ms", "10000");
        return p;
    }

    static AclBinding allow(ResourceType type, String name, AclOperation op) {
        return new AclBinding(new ResourcePattern(type, name, PatternType.LITERAL),
            new AccessControlEntry("User:alice", "*", op, AclPermissionType.ALLOW));
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    static Throwable cause(Throwable e) {
        return e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
    }

    /** The records alice's share consumer receives within 20 s, or the exception its poll throws. */
    static Object consume(Properties alice, String group, String topic, int expected) {
        Properties p = (Properties) alice.clone();
        p.put("group.id", group);
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(p)) {
            consumer.subscribe(List.of(topic));
            int got = 0;
            long deadline = System.currentTimeMillis() + 20_000;
            while (got < expected && System.currentTimeMillis() < deadline) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(500));
                got += records.count();
            }
            consumer.commitSync();
            return got;
        } catch (RuntimeException e) {
            return e;
        }
    }

    static void expect(Class<? extends Throwable> type, Object outcome, String what) {
        Throwable thrown = outcome instanceof Throwable ? cause((Throwable) outcome) : null;
        check(type.isInstance(thrown), what + ": expected " + type.getSimpleName() + ", got " + outcome);
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        Properties admin = props(bootstrap, "admin", args[1]);
        Properties alice = props(bootstrap, "alice", args[2]);
        String run = Long.toString(System.nanoTime());
        String topic = "jshare-acl-" + run, group = "jshare-acl-g-" + run, other = "jshare-acl-other-" + run;
        try (Admin a = Admin.create(admin); Admin mine = Admin.create(alice)) {
            a.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            a.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), List.of(
                new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET))))
                .all().get();
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(admin)) {
                for (int i = 0; i < 3; i++) {
                    producer.send(new ProducerRecord<>(topic, "v" + i)).get();
                }
            }
            a.createAcls(List.of(allow(ResourceType.GROUP, group, AclOperation.DESCRIBE),
                                 allow(ResourceType.TOPIC, topic, AclOperation.DESCRIBE))).all().get();
            expect(GroupAuthorizationException.class, consume(alice, group, topic, 3), "DESCRIBE on the group");
            a.createAcls(List.of(allow(ResourceType.GROUP, group, AclOperation.READ))).all().get();
            expect(TopicAuthorizationException.class, consume(alice, group, topic, 3), "DESCRIBE on the topic");
            a.createAcls(List.of(allow(ResourceType.TOPIC, topic, AclOperation.READ))).all().get();
            Object got = consume(alice, group, topic, 3);
            check(Integer.valueOf(3).equals(got), "with READ on the group and the topic: " + got);

            ShareGroupDescription d = mine.describeShareGroups(List.of(group)).all().get().get(group);
            check(d.groupId().equals(group), "alice describes her group: " + d);
            // the start offset is the one the last state write carried, from before that write's
            // acknowledgements moved it (Kafka's SharePartition); with them, nothing is left to read
            var offsets = mine.listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()))
                .partitionsToOffsetInfo(group).get().get(new TopicPartition(topic, 0));
            check(offsets.startOffset() < 3 && offsets.lag().equals(java.util.Optional.of(0L)),
                  "alice lists her group's offsets: " + offsets);
            try {
                mine.describeShareGroups(List.of(other)).all().get();
                check(false, "alice described a group she has no ACL for");
            } catch (ExecutionException e) {
                check(cause(e) instanceof GroupAuthorizationException, "describe another group: " + cause(e));
            }
            try {
                mine.deleteShareGroupOffsets(group, Set.of(topic)).all().get();
                check(false, "alice deleted share offsets without DELETE on the group");
            } catch (ExecutionException e) {
                check(cause(e) instanceof GroupAuthorizationException, "delete offsets: " + cause(e));
            }
            System.out.println("PASS");
        } catch (Throwable e) {
            StringBuilder why = new StringBuilder(cause(e).toString());
            for (Throwable c = cause(e).getCause(); c != null; c = c.getCause()) {
                why.append(" <- ").append(c);
            }
            System.out.println("FAIL " + why);
        }
        System.out.flush();
        Runtime.getRuntime().halt(0);
    }
}

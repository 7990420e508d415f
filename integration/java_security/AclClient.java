import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;

/**
 * The Java client against kafkaemu's authorizer over SASL/SCRAM: the super user "admin" creates
 * two topics and ACLs for "alice" with the AdminClient (createAcls, describeAcls by filter,
 * deleteAcls); alice may write and read topic A in group G but gets Kafka's exceptions for topic B,
 * for a group without READ and for a transactional id without WRITE.
 *
 * Usage: AclClient BOOTSTRAP ADMIN_PASSWORD ALICE_PASSWORD. Prints "PASS" or "FAIL reason".
 */
public final class AclClient {
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

    static AclBinding allow(ResourceType type, String name, PatternType pattern, AclOperation op) {
        return new AclBinding(new ResourcePattern(type, name, pattern),
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

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        Properties admin = props(bootstrap, "admin", args[1]);
        Properties alice = props(bootstrap, "alice", args[2]);
        String run = Long.toString(System.nanoTime());
        String topicA = "java-a-" + run, topicB = "java-b-" + run, group = "java-g-" + run;
        try (Admin a = Admin.create(admin)) {
            a.createTopics(List.of(new NewTopic(topicA, 1, (short) 1), new NewTopic(topicB, 1, (short) 1))).all().get();
            a.createAcls(List.of(
                allow(ResourceType.TOPIC, "java-a-", PatternType.PREFIXED, AclOperation.WRITE),
                allow(ResourceType.TOPIC, topicA, PatternType.LITERAL, AclOperation.READ),
                allow(ResourceType.GROUP, group, PatternType.LITERAL, AclOperation.READ))).all().get();
            Collection<AclBinding> matching = a.describeAcls(new AclBindingFilter(
                new ResourcePatternFilter(ResourceType.TOPIC, topicA, PatternType.MATCH),
                AccessControlEntryFilter.ANY)).values().get();
            check(matching.size() == 2, "describeAcls MATCH found " + matching);

            try (KafkaProducer<String, String> producer = new KafkaProducer<>(alice)) {
                producer.send(new ProducerRecord<>(topicA, "a0")).get();
                try {
                    producer.send(new ProducerRecord<>(topicB, "b0")).get();
                    check(false, "produce to B succeeded");
                } catch (Exception e) {
                    check(cause(e) instanceof TopicAuthorizationException, "produce to B: " + cause(e));
                }
            }
            Properties consumerProps = (Properties) alice.clone();
            consumerProps.put("group.id", group);
            consumerProps.put("auto.offset.reset", "earliest");
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps)) {
                consumer.subscribe(List.of(topicA));
                int got = 0;
                long deadline = System.currentTimeMillis() + 20_000;
                while (got == 0 && System.currentTimeMillis() < deadline) {
                    ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(500));
                    got += records.count();
                }
                check(got == 1, "consumed " + got + " records of A");
                consumer.commitSync();
            }
            consumerProps.put("group.id", group + "-no-acl");
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps)) {
                consumer.subscribe(List.of(topicA));
                try {
                    consumer.poll(Duration.ofSeconds(10));
                    check(false, "a group without READ joined");
                } catch (GroupAuthorizationException expected) {
                    // Kafka's answer to a member without group READ
                }
            }
            Properties txn = (Properties) alice.clone();
            txn.put("transactional.id", "java-tid-" + run);
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(txn)) {
                producer.initTransactions();
                check(false, "initTransactions without TRANSACTIONAL_ID WRITE succeeded");
            } catch (TransactionalIdAuthorizationException expected) {
                // Kafka's answer
            }
            Collection<AclBinding> deleted = a.deleteAcls(List.of(new AclBindingFilter(
                new ResourcePatternFilter(ResourceType.ANY, null, PatternType.ANY),
                new AccessControlEntryFilter("User:alice", null, AclOperation.ANY, AclPermissionType.ANY))))
                .all().get();
            check(deleted.size() == 3, "deleteAcls removed " + deleted);
            check(a.describeAcls(AclBindingFilter.ANY).values().get().isEmpty(), "ACLs left after deleteAcls");
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

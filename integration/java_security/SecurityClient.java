import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The Java client through a SASL and/or TLS listener: create a topic, produce three records,
 * consume them in a group. Run as a single-file program (java -cp 'lib/*' SecurityClient.java).
 *
 * Usage: SecurityClient BOOTSTRAP SECURITY_PROTOCOL MECHANISM USER PASSWORD CA_PEM
 * Prints "GOT [v0, v1, v2]", or "ERROR exception" when the admin client fails (wrong password).
 */
public final class SecurityClient {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], protocol = args[1], mechanism = args[2], user = args[3], password = args[4];
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("security.protocol", protocol);
        if (protocol.startsWith("SASL")) {
            String module = mechanism.equals("PLAIN") ? "org.apache.kafka.common.security.plain.PlainLoginModule"
                                                      : "org.apache.kafka.common.security.scram.ScramLoginModule";
            props.put("sasl.mechanism", mechanism);
            props.put("sasl.jaas.config", module + " required username=\"" + user + "\" password=\"" + password + "\";");
        }
        if (protocol.endsWith("SSL")) {
            props.put("ssl.truststore.type", "PEM");
            props.put("ssl.truststore.location", args[5]);
        }
        String topic = "java-sec-" + System.nanoTime();
        try (Admin admin = Admin.create(props)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        } catch (Exception e) {
            System.out.println("ERROR " + (e.getCause() != null ? e.getCause() : e));
            System.out.flush();
            Runtime.getRuntime().halt(3);
        }
        Properties producerProps = (Properties) props.clone();
        producerProps.put("key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        producerProps.put("value.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps)) {
            for (int i = 0; i < 3; i++) {
                producer.send(new ProducerRecord<>(topic, "v" + i)).get();
            }
        }
        Properties consumerProps = (Properties) props.clone();
        consumerProps.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        consumerProps.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        consumerProps.put("group.id", topic);
        consumerProps.put("auto.offset.reset", "earliest");
        List<String> got = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps)) {
            consumer.subscribe(List.of(topic));
            long deadline = System.currentTimeMillis() + 20_000;
            while (got.size() < 3 && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    got.add(record.value());
                }
            }
        }
        System.out.println("GOT " + got);
        System.out.flush();
        Runtime.getRuntime().halt(0);  // client threads must not keep the JVM alive
    }
}

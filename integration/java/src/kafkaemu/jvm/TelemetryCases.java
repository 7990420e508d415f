package kafkaemu.jvm;

import static kafkaemu.jvm.Support.check;
import static kafkaemu.jvm.Support.checkEquals;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * KIP-714 with kafka-clients 4.4.0: the Admin client creates a CLIENT_METRICS subscription (and is
 * refused a push interval out of range), reads it back; a consumer that lags behind its topic
 * pushes its metrics while it polls. Prints "INSTANCE <client instance id>" for the Python test,
 * which reads what the consumer pushed from the control API, then PASS.
 */
public final class TelemetryCases {
    private TelemetryCases() {}

    static final String CLIENT_ID = "telemetry-java";

    public static void main(String[] args) {
        if (args.length == 1 && args[0].equals("list")) {
            System.out.println("consumer-telemetry");
            return;
        }
        if (args.length != 2 || !args[0].equals("consumer-telemetry")) {
            System.err.println("usage: TelemetryCases consumer-telemetry BOOTSTRAP");
            System.exit(2);
        }
        int status;
        try {
            consumerTelemetry(args[1]);
            System.out.println("PASS consumer-telemetry");
            status = 0;
        } catch (Support.CheckFailed e) {
            System.out.println("FAIL consumer-telemetry: " + e.getMessage());
            status = 1;
        } catch (Throwable e) {
            System.out.println("FAIL consumer-telemetry: " + e);
            e.printStackTrace(System.err);
            status = 1;
        }
        System.out.flush();
        Runtime.getRuntime().halt(status);
    }

    static void set(Admin admin, ConfigResource resource, String name, String value) throws Exception {
        admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(new ConfigEntry(name, value),
            AlterConfigOp.OpType.SET)))).all().get();
    }

    static void consumerTelemetry(String bootstrap) throws Exception {
        String topic = Support.unique("telemetry");
        ConfigResource subscription = new ConfigResource(ConfigResource.Type.CLIENT_METRICS, "java-consumers");
        try (Admin admin = Support.admin(bootstrap)) {
            Support.createTopic(admin, topic, 1);
            try {
                set(admin, subscription, "interval.ms", "50");
                throw new Support.CheckFailed("an interval of 50 ms was accepted");
            } catch (ExecutionException e) {
                check(e.getCause() instanceof InvalidRequestException, "interval.ms=50: " + e.getCause());
            }
            set(admin, subscription, "metrics", "org.apache.kafka.consumer.");
            set(admin, subscription, "interval.ms", "500");
            set(admin, subscription, "match", "client_id=" + CLIENT_ID + ",client_software_name=apache-kafka-java");
            Config described = admin.describeConfigs(List.of(subscription)).all().get().get(subscription);
            Map<String, String> values = described.entries().stream()
                .collect(Collectors.toMap(ConfigEntry::name, ConfigEntry::value));
            checkEquals(Map.of("metrics", "org.apache.kafka.consumer.", "interval.ms", "500",
                "match", "client_id=" + CLIENT_ID + ",client_software_name=apache-kafka-java"), values, "the subscription");
        }
        Properties pp = Support.producerProps(bootstrap);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            for (int i = 0; i < 2000; i++) producer.send(new ProducerRecord<>(topic, "k" + i, "v" + i));
            producer.flush();
        }
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, CLIENT_ID);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, Support.unique("telemetry-group"));
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "20");
        p.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, "2048");
        p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, "2048");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            consumer.subscribe(List.of(topic));
            long end = System.nanoTime() + 4_000_000_000L;
            int seen = 0;
            while (System.nanoTime() < end) {
                seen += consumer.poll(Duration.ofMillis(100)).count();
                Thread.sleep(50);   // stay behind the log end: the consumer reports a lag
            }
            Uuid instance = consumer.clientInstanceId(Duration.ofSeconds(10));
            check(seen > 0, "the consumer read nothing");
            System.out.println("INSTANCE " + instance);
        }
    }
}

package kafkaemu.jvm;

import static kafkaemu.jvm.Support.check;
import static kafkaemu.jvm.Support.checkEquals;

import io.confluent.kafka.schemaregistry.avro.AvroSchema;
import io.confluent.kafka.schemaregistry.client.CachedSchemaRegistryClient;
import io.confluent.kafka.schemaregistry.client.SchemaMetadata;
import io.confluent.kafka.schemaregistry.client.rest.exceptions.RestClientException;
import io.confluent.kafka.serializers.KafkaAvroDeserializer;
import io.confluent.kafka.serializers.KafkaAvroSerializer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Confluent's Java Avro serializer and registry client (7.0.16) against kafkaemu's broker and
 * built-in schema registry.
 *
 * Usage: java kafkaemu.jvm.SchemaRegistryMain CASE BOOTSTRAP REGISTRY_URL   (or "list")
 * Prints "PASS CASE (N ms)" and exits 0, or "FAIL CASE: reason" and exits 1.
 */
public final class SchemaRegistryMain {
    static final String USER = "{\"type\":\"record\",\"name\":\"User\",\"namespace\":\"com.acme\",\"fields\":["
        + "{\"name\":\"name\",\"type\":\"string\"},{\"name\":\"age\",\"type\":\"int\"}]}";
    static final String USER_V2 = "{\"type\":\"record\",\"name\":\"User\",\"namespace\":\"com.acme\",\"fields\":["
        + "{\"name\":\"name\",\"type\":\"string\"},{\"name\":\"age\",\"type\":\"int\"},"
        + "{\"name\":\"email\",\"type\":[\"null\",\"string\"],\"default\":null}]}";
    static final String USER_BAD = "{\"type\":\"record\",\"name\":\"User\",\"namespace\":\"com.acme\",\"fields\":["
        + "{\"name\":\"name\",\"type\":\"string\"},{\"name\":\"age\",\"type\":\"string\"}]}";

    /** 50 GenericRecords through KafkaAvroSerializer (auto-registration) and back with KafkaAvroDeserializer. */
    static void avroRoundTrip(String bootstrap, String registry) throws Exception {
        String topic = Support.unique("java-avro");
        Schema schema = new Schema.Parser().parse(USER);
        Properties p = Support.producerProps(bootstrap);
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, KafkaAvroSerializer.class.getName());
        p.put("schema.registry.url", registry);
        List<GenericRecord> sent = new ArrayList<>();
        try (KafkaProducer<String, Object> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < 50; i++) {
                GenericRecord user = new GenericData.Record(schema);
                user.put("name", "user-" + i);
                user.put("age", i);
                sent.add(user);
                producer.send(new ProducerRecord<>(topic, "k" + i, user)).get();
            }
        }
        Properties c = Support.consumerProps(bootstrap, null, null);
        c.put("value.deserializer", KafkaAvroDeserializer.class.getName());
        c.put("schema.registry.url", registry);
        List<Object> got = new ArrayList<>();
        try (KafkaConsumer<String, Object> consumer = new KafkaConsumer<>(c)) {
            consumer.assign(List.of(new TopicPartition(topic, 0)));
            consumer.seekToBeginning(List.of(new TopicPartition(topic, 0)));
            long deadline = System.currentTimeMillis() + 60_000;
            while (got.size() < sent.size() && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, Object> r : consumer.poll(Duration.ofMillis(500))) {
                    got.add(r.value());
                }
            }
        }
        checkEquals(sent.size(), got.size(), "records read back");
        for (int i = 0; i < sent.size(); i++) {
            checkEquals(sent.get(i).toString(), got.get(i).toString(), "record " + i);
        }
        CachedSchemaRegistryClient client = new CachedSchemaRegistryClient(registry, 10);
        SchemaMetadata latest = client.getLatestSchemaMetadata(topic + "-value");
        checkEquals(1, latest.getVersion(), "registered version");
        checkEquals(schema, new Schema.Parser().parse(latest.getSchema()), "registered schema");
    }

    /** CachedSchemaRegistryClient's calls, with Confluent's error codes for the refused ones. */
    static void registryClient(String bootstrap, String registry) throws Exception {
        CachedSchemaRegistryClient client = new CachedSchemaRegistryClient(registry, 10);
        String subject = Support.unique("java-client");
        int id = client.register(subject, new AvroSchema(USER));
        checkEquals(id, client.register(subject, new AvroSchema(USER)), "same schema, same id");
        check(client.getAllSubjects().contains(subject), "subject listed");
        checkEquals(id, client.getId(subject, new AvroSchema(USER)), "id lookup");
        checkEquals(1, client.getVersion(subject, new AvroSchema(USER)), "version lookup");
        check(client.testCompatibility(subject, new AvroSchema(USER_V2)), "v2 is backward compatible");
        check(!client.testCompatibility(subject, new AvroSchema(USER_BAD)), "an int turned string is not");
        int v2 = client.register(subject, new AvroSchema(USER_V2));
        check(v2 != id, "v2 has a new id");
        checkEquals(List.of(1, 2), client.getAllVersions(subject), "versions");
        checkEquals("BACKWARD", client.getCompatibility(null), "global compatibility");
        try {
            client.register(subject, new AvroSchema(USER_BAD));
            throw new Support.CheckFailed("an incompatible schema was registered");
        } catch (RestClientException e) {
            checkEquals(409, e.getErrorCode(), "incompatible schema error code");
        }
        try {
            client.getSchemaMetadata(subject, 7);
            throw new Support.CheckFailed("a missing version was found");
        } catch (RestClientException e) {
            checkEquals(40402, e.getErrorCode(), "missing version error code");
        }
        try {
            client.getLatestSchemaMetadata(Support.unique("nobody"));
            throw new Support.CheckFailed("a missing subject was found");
        } catch (RestClientException e) {
            checkEquals(40401, e.getErrorCode(), "missing subject error code");
        }
        client.updateCompatibility(subject, "NONE");
        checkEquals("NONE", client.getCompatibility(subject), "subject compatibility");
        client.register(subject, new AvroSchema(USER_BAD));
        checkEquals(List.of(1, 2, 3), client.deleteSubject(subject), "deleted versions");
        check(!client.getAllSubjects().contains(subject), "deleted subject not listed");
    }

    interface Case {
        void run(String bootstrap, String registry) throws Exception;
    }

    static Map<String, Case> cases() {
        Map<String, Case> c = new LinkedHashMap<>();
        c.put("avro-serializer", SchemaRegistryMain::avroRoundTrip);
        c.put("registry-client", SchemaRegistryMain::registryClient);
        return c;
    }

    public static void main(String[] args) {
        Runner.main("SchemaRegistryMain", "BOOTSTRAP REGISTRY_URL", cases(), args, (c, a) -> c.run(a[0], a[1]));
    }
}

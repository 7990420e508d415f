package kafkaemu.jvm;

import static kafkaemu.jvm.Support.check;
import static kafkaemu.jvm.Support.checkEquals;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Client quotas with kafka-clients 4.4.0: the Admin client sets (and is refused an out-of-range)
 * producer_byte_rate for a client id, describes it, the producer runs under it and then without
 * it. Prints "RESULT throttled_rate=B/s free_rate=B/s throttle_max_ms=ms" for the Python test to
 * judge, then PASS.
 */
public final class QuotaCases {
    private QuotaCases() {}

    static final String CLIENT_ID = "quota-java";
    static final String KEY = "producer_byte_rate";
    static final double QUOTA = 1_048_576.0;

    public static void main(String[] args) {
        if (args.length == 1 && args[0].equals("list")) {
            System.out.println("produce-quota");
            return;
        }
        if (args.length != 2 || !args[0].equals("produce-quota")) {
            System.err.println("usage: QuotaCases produce-quota BOOTSTRAP");
            System.exit(2);
        }
        int status;
        try {
            produceQuota(args[1]);
            System.out.println("PASS produce-quota");
            status = 0;
        } catch (Support.CheckFailed e) {
            System.out.println("FAIL produce-quota: " + e.getMessage());
            status = 1;
        } catch (Throwable e) {
            System.out.println("FAIL produce-quota: " + e);
            e.printStackTrace(System.err);
            status = 1;
        }
        System.out.flush();
        Runtime.getRuntime().halt(status);
    }

    static void alter(Admin admin, ClientQuotaEntity entity, Double value) throws Exception {
        admin.alterClientQuotas(List.of(new ClientQuotaAlteration(entity,
            List.of(new ClientQuotaAlteration.Op(KEY, value))))).all().get();
    }

    static void produceQuota(String bootstrap) throws Exception {
        String topic = Support.unique("quota");
        ClientQuotaEntity entity = new ClientQuotaEntity(Map.of(ClientQuotaEntity.CLIENT_ID, CLIENT_ID));
        try (Admin admin = Support.admin(bootstrap)) {
            Support.createTopic(admin, topic, 1);
            try {
                alter(admin, entity, -1.0);
                throw new Support.CheckFailed("a negative quota was accepted");
            } catch (ExecutionException e) {
                check(e.getCause() instanceof InvalidRequestException, "a negative quota: " + e.getCause());
            }
            alter(admin, entity, QUOTA);
            Map<ClientQuotaEntity, Map<String, Double>> described = admin.describeClientQuotas(
                ClientQuotaFilter.containsOnly(List.of(ClientQuotaFilterComponent.ofEntity(
                    ClientQuotaEntity.CLIENT_ID, CLIENT_ID)))).entities().get();
            checkEquals(Map.of(entity, Map.of(KEY, QUOTA)), described, "the described quotas");

            Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ProducerConfig.CLIENT_ID_CONFIG, CLIENT_ID);
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            p.put(ProducerConfig.ACKS_CONFIG, "1");
            p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
            p.put(ProducerConfig.BATCH_SIZE_CONFIG, "65536");
            p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, "1048576");
            p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "60000");
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
                double throttled = measure(producer, topic, 2000, 6000);
                double throttleMax = metric(producer, "produce-throttle-time-max");
                alter(admin, entity, null);
                double free = measure(producer, topic, 1000, 3000);
                System.out.println("RESULT throttled_rate=" + throttled + " free_rate=" + free
                    + " throttle_max_ms=" + throttleMax);
            }
        }
    }

    /** Bytes per second acknowledged between fromMs and toMs after the start, sending all along. */
    static double measure(KafkaProducer<byte[], byte[]> producer, String topic, long fromMs, long toMs) {
        byte[] value = new byte[10_000];
        AtomicLong bytes = new AtomicLong();
        long start = System.nanoTime();
        while ((System.nanoTime() - start) / 1_000_000 < toMs) {
            producer.send(new ProducerRecord<>(topic, value), (metadata, error) -> {
                long at = (System.nanoTime() - start) / 1_000_000;
                if (error == null && at >= fromMs && at < toMs) bytes.addAndGet(value.length);
            });
        }
        return bytes.get() * 1000.0 / (toMs - fromMs);
    }

    static double metric(KafkaProducer<byte[], byte[]> producer, String name) {
        for (Map.Entry<MetricName, ? extends Metric> e : producer.metrics().entrySet()) {
            if (e.getKey().name().equals(name) && e.getKey().group().equals("producer-metrics")) {
                Object v = e.getValue().metricValue();
                return v instanceof Double ? (Double) v : Double.NaN;
            }
        }
        return Double.NaN;
    }
}

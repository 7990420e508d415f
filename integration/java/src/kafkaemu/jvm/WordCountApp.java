package kafkaemu.jvm;

import java.util.Arrays;
import java.util.Properties;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * A Kafka Streams 4.4 word count, the application integration/test_streams_app.py runs twice and
 * kills one of: lines from INPUT are split into words, re-keyed by word (through the repartition
 * topic {@code <app>-words-repartition}) and counted in the state store {@code word-counts} (changelog
 * {@code <app>-word-counts-changelog}); every new count goes to OUTPUT. It joins its streams group
 * with {@code group.protocol=streams} (KIP-1071), exactly-once, with the record cache off so each
 * count is written.
 *
 * Prints {@code STATE <state>} on every state change and {@code TASKS <active task ids>} whenever its
 * active tasks change, until it is stopped (SIGTERM closes it cleanly).
 *
 * With GROUP_INSTANCE_ID it is a static member: {@code group.instance.id} (Kafka Streams gives its
 * one stream thread {@code <GROUP_INSTANCE_ID>-1}), and a clean stop leaves the group with epoch -2,
 * so a restart with the same id and state directory takes its tasks back.
 *
 * Usage: java kafkaemu.jvm.WordCountApp BOOTSTRAP APPLICATION_ID INPUT OUTPUT STATE_DIR [GROUP_INSTANCE_ID]
 */
public final class WordCountApp {
    private WordCountApp() {}

    static Topology topology(String input, String output) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
               .flatMapValues(line -> Arrays.asList(line.toLowerCase().split("\\W+")))
               .filter((key, word) -> !word.isEmpty())
               .groupBy((key, word) -> word, Grouped.with("words", Serdes.String(), Serdes.String()))
               .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("word-counts"))
               .toStream()
               .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        return builder.build();
    }

    static Properties config(String bootstrap, String applicationId, String stateDir) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        // A killed instance's open transaction blocks its partitions until the broker aborts it.
        p.put(StreamsConfig.producerPrefix("transaction.timeout.ms"), 5000);
        return p;
    }

    static String activeTasks(KafkaStreams streams) {
        TreeSet<String> tasks = new TreeSet<>();
        for (ThreadMetadata thread : streams.metadataForLocalThreads()) {
            for (TaskMetadata task : thread.activeTasks()) tasks.add(task.taskId().toString());
        }
        return String.join(",", tasks);
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length != 5 && args.length != 6) {
            System.err.println("usage: WordCountApp BOOTSTRAP APPLICATION_ID INPUT OUTPUT STATE_DIR [GROUP_INSTANCE_ID]");
            System.exit(2);
        }
        Properties config = config(args[0], args[1], args[4]);
        if (args.length == 6) config.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, args[5]);
        KafkaStreams streams = new KafkaStreams(topology(args[2], args[3]), config);
        CountDownLatch stopped = new CountDownLatch(1);
        streams.setStateListener((now, before) -> {
            System.out.println("STATE " + now);
            if (now == KafkaStreams.State.NOT_RUNNING || now == KafkaStreams.State.ERROR) stopped.countDown();
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close();
            stopped.countDown();
        }));
        streams.start();
        String reported = null;
        while (stopped.getCount() > 0) {
            String tasks = activeTasks(streams);
            if (!tasks.equals(reported)) {
                System.out.println("TASKS " + tasks);
                reported = tasks;
            }
            stopped.await(50, java.util.concurrent.TimeUnit.MILLISECONDS);
        }
    }
}

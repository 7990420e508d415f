package kafkaemu.jvm;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Runs one Java-client conformance case against a kafkaemu bootstrap address.
 *
 * Usage: java kafkaemu.jvm.Main CASE BOOTSTRAP   (or "list" to print the case names)
 * Prints "PASS CASE (N ms)" and exits 0, or "FAIL CASE: reason" and exits 1.
 */
public final class Main {
    interface Case {
        void run(String bootstrap) throws Exception;
    }

    static Map<String, Case> cases() {
        Map<String, Case> c = new LinkedHashMap<>();
        c.put("admin-topics", AdminCases::topics);
        c.put("admin-list-offsets", AdminCases::listOffsets);
        c.put("admin-consumer-groups", AdminCases::consumerGroups);
        c.put("idempotent-producer", ProducerCases::idempotentTenThousand);
        c.put("executor-assign-seek-poll", ConsumerCases::executorAssignSeekPoll);
        c.put("group-range", GroupCases::range);
        c.put("group-roundrobin", GroupCases::roundRobin);
        c.put("group-cooperative-sticky", GroupCases::cooperativeSticky);
        c.put("commit-and-resume", ConsumerCases::commitAndResume);
        c.put("static-membership", GroupCases::staticMembership);
        c.put("deprecated-offset-fetching", ConsumerCases::deprecatedOffsetFetching);
        c.put("transactions-commit-abort", TransactionCases::commitAndAbort);
        c.put("transactions-consume-transform-produce", TransactionCases::consumeTransformProduce);
        c.put("transactions-fencing", TransactionCases::fencing);
        c.put("transactions-admin", TransactionCases::adminApis);
        c.put("transactions-abort-hanging", TransactionCases::abortHanging);
        c.put("group-consumer-protocol", Kip848Cases::consumerProtocol);
        c.put("group-consumer-protocol-static-regex", Kip848Cases::staticRegex);
        return c;
    }

    public static void main(String[] args) {
        if (args.length == 1 && args[0].equals("list")) {
            cases().keySet().forEach(System.out::println);
            return;
        }
        if (args.length != 2 || !cases().containsKey(args[0])) {
            System.err.println("usage: Main {" + String.join("|", cases().keySet()) + "} BOOTSTRAP");
            System.exit(2);
        }
        String name = args[0];
        long start = System.nanoTime();
        int status;
        try {
            cases().get(name).run(args[1]);
            System.out.println("PASS " + name + " (" + (System.nanoTime() - start) / 1_000_000 + " ms)");
            status = 0;
        } catch (Support.CheckFailed e) {
            System.out.println("FAIL " + name + ": " + e.getMessage());
            status = 1;
        } catch (Throwable e) {
            System.out.println("FAIL " + name + ": " + e);
            e.printStackTrace(System.err);
            status = 1;
        }
        System.out.flush();
        // Client threads (heartbeats, network) must not keep a failed case alive.
        Runtime.getRuntime().halt(status);
    }
}

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
        c.put("transactions-epoch-per-transaction", TransactionCases::epochPerTransaction);
        c.put("group-consumer-protocol", Kip848Cases::consumerProtocol);
        c.put("group-consumer-protocol-static-regex", Kip848Cases::staticRegex);
        c.put("group-migration", Kip848Cases::migration);
        c.put("transactions-version-change", TransactionCases::versionChange);
        return c;
    }

    public static void main(String[] args) {
        Runner.main("Main", "BOOTSTRAP", cases(), args, (c, a) -> c.run(a[0]));
    }
}

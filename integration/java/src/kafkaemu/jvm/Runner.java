package kafkaemu.jvm;

import java.util.Arrays;
import java.util.Map;

/**
 * The command line every case program shares (Main, ShareCases, ControlCases, SchemaRegistryMain):
 * "list" prints the case names; "CASE OPERAND..." runs one case and prints "PASS CASE (N ms)",
 * exiting 0, or "FAIL CASE: reason", exiting 1; anything else prints the usage and exits 2.
 */
final class Runner {
    private Runner() {}

    /** Runs one case with the operands that follow its name on the command line. */
    interface Call<C> {
        void run(C testCase, String[] operands) throws Exception;
    }

    /** {@code operands} names what follows CASE in the usage line, e.g. "BOOTSTRAP CONTROL_URL". */
    static <C> void main(String program, String operands, Map<String, C> cases, String[] args, Call<C> call) {
        if (args.length == 1 && args[0].equals("list")) {
            cases.keySet().forEach(System.out::println);
            return;
        }
        if (args.length != operands.split(" ").length + 1 || !cases.containsKey(args[0])) {
            System.err.println("usage: " + program + " {" + String.join("|", cases.keySet()) + "} " + operands);
            System.exit(2);
        }
        String name = args[0];
        long start = System.nanoTime();
        int status;
        try {
            call.run(cases.get(name), Arrays.copyOfRange(args, 1, args.length));
            System.out.println("PASS " + name + " (" + (System.nanoTime() - start) / 1_000_000 + " ms)");
            status = 0;
        } catch (Support.CheckFailed | ControlApi.Refused e) {
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

import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.common.errors.SaslAuthenticationException;

/**
 * SCRAM users managed with the Java AdminClient: the user "admin" adds a user with both SCRAM
 * mechanisms (alterUserScramCredentials), describes it, the new user connects with each
 * mechanism, then one credential is deleted and that mechanism is refused.
 *
 * Usage: ScramClient BOOTSTRAP ADMIN_PASSWORD. Prints "PASS" or "FAIL reason".
 */
public final class ScramClient {
    static Properties props(String bootstrap, String mechanism, String user, String password) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("security.protocol", "SASL_PLAINTEXT");
        p.put("sasl.mechanism", mechanism);
        p.put("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required username=\""
            + user + "\" password=\"" + password + "\";");
        p.put("default.api.timeout.ms", "60000");
        return p;
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    static boolean connects(String bootstrap, String mechanism, String user, String password) throws Exception {
        try (Admin a = Admin.create(props(bootstrap, mechanism, user, password))) {
            a.listTopics().names().get();
            return true;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof SaslAuthenticationException) {
                return false;
            }
            throw e;
        }
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String user = "java-user-" + System.nanoTime();
        try (Admin admin = Admin.create(props(bootstrap, "SCRAM-SHA-256", "admin", args[1]))) {
            admin.alterUserScramCredentials(List.of(
                new UserScramCredentialUpsertion(user, new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), "p256"),
                new UserScramCredentialUpsertion(user, new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), "p512")))
                .all().get();
        } catch (Throwable e) {
            // two alterations of one user in a request: Kafka answers DUPLICATE_RESOURCE
            check(e.getCause() != null && e.getCause().getClass().getSimpleName().equals("DuplicateResourceException"),
                "two upsertions of one user: " + e);
        }
        try (Admin admin = Admin.create(props(bootstrap, "SCRAM-SHA-256", "admin", args[1]))) {
            admin.alterUserScramCredentials(List.of(
                new UserScramCredentialUpsertion(user, new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), "p256")))
                .all().get();
            admin.alterUserScramCredentials(List.of(
                new UserScramCredentialUpsertion(user, new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), "p512")))
                .all().get();
            Map<String, UserScramCredentialsDescription> described =
                admin.describeUserScramCredentials(List.of(user)).all().get();
            check(described.get(user).credentialInfos().size() == 2, "described " + described);
            check(connects(bootstrap, "SCRAM-SHA-256", user, "p256"), "SCRAM-SHA-256 refused");
            check(connects(bootstrap, "SCRAM-SHA-512", user, "p512"), "SCRAM-SHA-512 refused");
            check(!connects(bootstrap, "SCRAM-SHA-512", user, "p256"), "a wrong password accepted");
            admin.alterUserScramCredentials(List.of(new UserScramCredentialDeletion(user, ScramMechanism.SCRAM_SHA_512)))
                .all().get();
            check(!connects(bootstrap, "SCRAM-SHA-512", user, "p512"), "a deleted credential accepted");
            check(connects(bootstrap, "SCRAM-SHA-256", user, "p256"), "the other credential refused");
            System.out.println("PASS");
        } catch (Throwable e) {
            System.out.println("FAIL " + e + (e.getCause() != null ? " <- " + e.getCause() : ""));
        }
        System.out.flush();
        Runtime.getRuntime().halt(0);
    }
}

import java.util.Properties;

import org.apache.kafka.clients.admin.Admin;

/**
 * The Java client with SASL/OAUTHBEARER and an unsecured token (OAuthBearerLoginModule's
 * development login: unsecuredLoginStringClaim_sub): the admin client lists topics.
 *
 * Usage: OAuthClient BOOTSTRAP SUBJECT. Prints "PASS" or "FAIL reason".
 */
public final class OAuthClient {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", args[0]);
        p.put("security.protocol", "SASL_PLAINTEXT");
        p.put("sasl.mechanism", "OAUTHBEARER");
        p.put("sasl.jaas.config", "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
            + "unsecuredLoginStringClaim_sub=\"" + args[1] + "\";");
        p.put("default.api.timeout.ms", "60000");
        try (Admin admin = Admin.create(p)) {
            admin.listTopics().names().get();
            System.out.println("PASS");
        } catch (Throwable e) {
            StringBuilder why = new StringBuilder(e.toString());
            for (Throwable c = e.getCause(); c != null; c = c.getCause()) {
                why.append(" <- ").append(c);
            }
            System.out.println("FAIL " + why);
        }
        System.out.flush();
        Runtime.getRuntime().halt(0);
    }
}

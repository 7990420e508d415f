import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.Base64;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreateDelegationTokenOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.UnsupportedByAuthenticationException;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.token.delegation.DelegationToken;

/**
 * Delegation tokens with the Java client: alice (SCRAM) creates a token, a producer authenticates
 * with it (ScramLoginModule tokenauth="true") and writes as alice; a token-authenticated client may
 * not create tokens; after "ADVANCE" the test moves the broker's manual clock past the token's
 * expiry and answers a line, and the token no longer authenticates.
 *
 * Usage: TokenClient BOOTSTRAP ALICE_PASSWORD TOPIC. Prints "PASS" or "FAIL reason".
 */
public final class TokenClient {
    static Properties props(String bootstrap, String user, String password, boolean token) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("security.protocol", "SASL_PLAINTEXT");
        p.put("sasl.mechanism", "SCRAM-SHA-512");
        p.put("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required username=\""
            + user + "\" password=\"" + password + "\"" + (token ? " tokenauth=\"true\"" : "") + ";");
        p.put("key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        p.put("value.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        p.put("max.block.ms", "10000");
        return p;
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[2];
        try (Admin alice = Admin.create(props(bootstrap, "alice", args[1], false))) {
            DelegationToken token = alice.createDelegationToken(new CreateDelegationTokenOptions()
                .renewers(List.of(new KafkaPrincipal("User", "bob")))).delegationToken().get();
            check(token.tokenInfo().owner().getName().equals("alice"), "owner " + token.tokenInfo().owner());
            check(alice.describeDelegationToken().delegationTokens().get().size() == 1, "describe");
            String tokenId = token.tokenInfo().tokenId(), hmac = token.hmacAsBase64String();
            Properties withToken = props(bootstrap, tokenId, hmac, true);
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(withToken)) {
                producer.send(new ProducerRecord<>(topic, "by-token")).get();
            }
            try (Admin byToken = Admin.create(withToken)) {
                byToken.createDelegationToken().delegationToken().get();
                check(false, "a token-authenticated client created a token");
            } catch (ExecutionException e) {
                check(e.getCause() instanceof UnsupportedByAuthenticationException, "create by token: " + e.getCause());
            }
            System.out.println("ADVANCE");
            System.out.flush();
            new BufferedReader(new InputStreamReader(System.in)).readLine();
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(withToken)) {
                producer.send(new ProducerRecord<>(topic, "expired")).get();
                check(false, "an expired token authenticated");
            } catch (ExecutionException e) {
                check(e.getCause() instanceof SaslAuthenticationException, "expired token: " + e.getCause());
            } catch (SaslAuthenticationException expected) {
                // thrown from send when metadata cannot be fetched
            } catch (org.apache.kafka.common.errors.TimeoutException e) {
                check(false, "expired token: a timeout, not an authentication error");
            }
            System.out.println("PASS");
        } catch (Throwable e) {
            System.out.println("FAIL " + e + (e.getCause() != null ? " <- " + e.getCause() : ""));
        }
        System.out.flush();
        Runtime.getRuntime().halt(0);
    }
}

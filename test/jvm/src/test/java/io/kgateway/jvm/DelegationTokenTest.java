package io.kgateway.jvm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreateDelegationTokenOptions;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.errors.DelegationTokenNotFoundException;
import org.apache.kafka.common.errors.UnsupportedByAuthenticationException;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.token.delegation.DelegationToken;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Delegation tokens (KIP-48) with the Java Admin and producer: alice
 * creates a token naming bob a renewer and describes it; a producer logs
 * in with the token (ScramLoginModule with tokenauth=true) and produces;
 * a connection authenticated by the token may not describe tokens; alice
 * renews and expires it, after which it is not found.
 */
@Tag("core")
class DelegationTokenTest {
    static Properties scram(KGateway kg, String user, String password, boolean token) {
        Properties p = new Properties();
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, kg.bootstrap("SASL_PLAINTEXT"));
        p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        p.put(SaslConfigs.SASL_MECHANISM, "SCRAM-SHA-256");
        p.put(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.scram.ScramLoginModule required "
            + "username=\"" + user + "\" password=\"" + password + "\"" + (token ? " tokenauth=\"true\"" : "") + ";");
        return p;
    }

    @Test
    void createDescribeAuthenticateRenewExpire() throws Exception {
        try (KGateway kg = KGateway.start(Map.of(
                "listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
                "sasl.enabled.mechanisms", "SCRAM-SHA-256",
                "delegation.token.secret.key", "jvm-test-secret"))) {
            try (Admin admin = kg.admin()) {
                Clients.get(admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("alice",
                    new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), "alice-pw"))).all());
            }
            try (Admin alice = Admin.create(scram(kg, "alice", "alice-pw", false))) {
                KafkaPrincipal bob = new KafkaPrincipal(KafkaPrincipal.USER_TYPE, "bob");
                DelegationToken token = Clients.get(alice.createDelegationToken(
                    new CreateDelegationTokenOptions().renewers(List.of(bob))).delegationToken());
                assertEquals("User:alice", token.tokenInfo().ownerAsString());
                assertEquals(List.of(bob), token.tokenInfo().renewers());
                List<DelegationToken> described = Clients.get(alice.describeDelegationToken().delegationTokens());
                assertEquals(1, described.size());
                assertEquals(token.tokenInfo().tokenId(), described.get(0).tokenInfo().tokenId());
                assertArrayEquals(token.hmac(), described.get(0).hmac());

                Properties byToken = scram(kg, token.tokenInfo().tokenId(), token.hmacAsBase64String(), true);
                Map<String, Object> pc = Map.of("key.serializer", StringSerializer.class.getName(),
                    "value.serializer", StringSerializer.class.getName());
                byToken.putAll(pc);
                try (KafkaProducer<String, String> p = new KafkaProducer<>(byToken)) {
                    p.send(new ProducerRecord<>(Clients.unique("dt"), "v")).get();
                }
                try (Admin overToken = Admin.create(scram(kg, token.tokenInfo().tokenId(), token.hmacAsBase64String(), true))) {
                    ExecutionException e = assertThrows(ExecutionException.class,
                        () -> overToken.describeDelegationToken().delegationTokens().get());
                    assertInstanceOf(UnsupportedByAuthenticationException.class, e.getCause());
                }

                long expiry = Clients.get(alice.renewDelegationToken(token.hmac()).expiryTimestamp());
                assertEquals(true, expiry > token.tokenInfo().issueTimestamp());
                Clients.get(alice.expireDelegationToken(token.hmac(),
                    new org.apache.kafka.clients.admin.ExpireDelegationTokenOptions().expiryTimePeriodMs(-1)).expiryTimestamp());
                ExecutionException e = assertThrows(ExecutionException.class,
                    () -> alice.renewDelegationToken(token.hmac()).expiryTimestamp().get());
                assertInstanceOf(DelegationTokenNotFoundException.class, e.getCause());
            }
        }
    }
}

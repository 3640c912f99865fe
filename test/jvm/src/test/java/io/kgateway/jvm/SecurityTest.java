package io.kgateway.jvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The Java client over SASL_SSL (SCRAM-SHA-512) and over SSL with a client
 * certificate. A CA, a server and a client certificate are made at test
 * time with the openssl command; the client reads them as PEM
 * (ssl.keystore.type=PEM). kgateway authorizes by ACLs, so a produce that
 * works proves the principal the handshake established.
 */
@Tag("core")
class SecurityTest {
    static final String SCRAM_USER = "scram-alice";
    static final String SCRAM_PASSWORD = "s3cr3t-pw";
    static final String CERT_PRINCIPAL = "User:CN=cert-alice,O=kgateway-test";
    private static Path dir;
    private static KGateway kg;

    @BeforeAll
    static void start() throws Exception {
        dir = Files.createTempDirectory("kgateway-tls-");
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
            "-days", "2", "-subj", "/CN=kgateway-test-ca");
        issue("server", "/CN=localhost", "subjectAltName=IP:127.0.0.1,DNS:localhost");
        issue("client", "/O=kgateway-test/CN=cert-alice", "extendedKeyUsage=clientAuth");
        Files.writeString(dir.resolve("server.pem"), Files.readString(dir.resolve("server.key"))
            + Files.readString(dir.resolve("server.crt")) + Files.readString(dir.resolve("ca.pem")));
        Map<String, String> cfg = new HashMap<>();
        cfg.put("listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_SSL://127.0.0.1:0");
        cfg.put("ssl.keystore.location", dir.resolve("server.pem").toString());
        cfg.put("ssl.truststore.location", dir.resolve("ca.pem").toString());
        cfg.put("listener.name.ssl.ssl.client.auth", "required");
        cfg.put("sasl.enabled.mechanisms", "SCRAM-SHA-512");
        cfg.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
        cfg.put("super.users", "User:ANONYMOUS"); // the PLAINTEXT listener, for the setup below
        kg = KGateway.start(cfg);
        try (Admin admin = plaintextAdmin()) {
            Clients.get(admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(SCRAM_USER,
                new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), SCRAM_PASSWORD))).all());
            List<AclBinding> acls = new ArrayList<>();
            for (String principal : List.of("User:" + SCRAM_USER, CERT_PRINCIPAL)) {
                acls.add(new AclBinding(new ResourcePattern(ResourceType.TOPIC, "sec-", PatternType.PREFIXED),
                    new AccessControlEntry(principal, "*", AclOperation.ALL, AclPermissionType.ALLOW)));
                acls.add(new AclBinding(new ResourcePattern(ResourceType.GROUP, "sec-", PatternType.PREFIXED),
                    new AccessControlEntry(principal, "*", AclOperation.ALL, AclPermissionType.ALLOW)));
            }
            Clients.get(admin.createAcls(acls).all());
        }
    }

    @AfterAll
    static void stop() throws IOException {
        if (kg != null) {
            kg.close();
        }
        if (dir != null) {
            try (var s = Files.walk(dir)) {
                s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    static Admin plaintextAdmin() {
        Properties p = new Properties();
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, kg.bootstrap("PLAINTEXT"));
        return Admin.create(p);
    }

    /** Signs a key pair for subject with the test CA, with the given X.509 extension. */
    static void issue(String name, String subject, String ext) throws Exception {
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".csr", "-subj", subject);
        Files.writeString(dir.resolve(name + ".ext"), ext + "\n");
        openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", name + ".crt", "-days", "2", "-extfile", name + ".ext");
    }

    static void openssl(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("openssl"));
        cmd.addAll(List.of(args));
        Path log = dir.resolve("openssl.log");
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new AssertionError(String.join(" ", cmd) + " failed:\n" + Files.readString(log));
        }
    }

    static Properties tls(String listener) throws IOException {
        Properties p = new Properties();
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, kg.bootstrap(listener));
        p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, listener);
        p.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PEM");
        p.put(SslConfigs.SSL_TRUSTSTORE_CERTIFICATES_CONFIG, Files.readString(dir.resolve("ca.pem")));
        return p;
    }

    static Properties sasl(String password) throws IOException {
        Properties p = tls("SASL_SSL");
        p.put(SaslConfigs.SASL_MECHANISM, "SCRAM-SHA-512");
        p.put(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.scram.ScramLoginModule required "
            + "username=\"" + SCRAM_USER + "\" password=\"" + password + "\";");
        return p;
    }

    static Properties clientCert() throws IOException {
        Properties p = tls("SSL");
        p.put(SslConfigs.SSL_KEYSTORE_TYPE_CONFIG, "PEM");
        p.put(SslConfigs.SSL_KEYSTORE_CERTIFICATE_CHAIN_CONFIG, Files.readString(dir.resolve("client.crt")));
        p.put(SslConfigs.SSL_KEYSTORE_KEY_CONFIG, Files.readString(dir.resolve("client.key")));
        return p;
    }

    /** Produces 100 records and consumes them in a group, all through the given security settings. */
    static void produceConsume(Properties security) throws Exception {
        String topic = Clients.unique("sec-topic");
        Properties pp = new Properties();
        pp.putAll(security);
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.ACKS_CONFIG, "all");
        List<String> sent = new ArrayList<>();
        try (KafkaProducer<String, String> p = new KafkaProducer<>(pp)) {
            for (int i = 0; i < 100; i++) {
                sent.add("secret-" + i);
                p.send(new ProducerRecord<>(topic, 0, "k", "secret-" + i)).get();
            }
        }
        Properties cp = new Properties();
        cp.putAll(security);
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        cp.put(ConsumerConfig.GROUP_ID_CONFIG, Clients.unique("sec-group"));
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<String> got = new ArrayList<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(cp)) {
            c.subscribe(List.of(topic));
            Await.until("100 records", () -> {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    got.add(r.value());
                }
                return got.size() >= 100;
            });
            c.commitSync();
            assertEquals(100, c.committed(java.util.Set.of(new TopicPartition(topic, 0))).get(new TopicPartition(topic, 0)).offset());
        }
        assertEquals(sent, got);
    }

    /** SASL_SSL with SCRAM-SHA-512: a user made with AlterUserScramCredentials produces and consumes. */
    @Test
    void saslSslScramSha512() throws Exception {
        produceConsume(sasl(SCRAM_PASSWORD));
    }

    /** A wrong SCRAM password fails with SaslAuthenticationException. */
    @Test
    void saslWrongPasswordIsRefused() throws Exception {
        Properties p = sasl("wrong");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 20_000);
        try (KafkaProducer<String, String> prod = new KafkaProducer<>(p)) {
            ExecutionException e = assertThrows(ExecutionException.class,
                () -> prod.send(new ProducerRecord<>(Clients.unique("sec-denied"), "v")).get());
            assertInstanceOf(SaslAuthenticationException.class, e.getCause());
        }
    }

    /** SSL with a client certificate: the principal is the certificate's subject. */
    @Test
    void sslClientCertificate() throws Exception {
        produceConsume(clientCert());
    }

    /**
     * The ACLs are what let the two principals in: the certificate's
     * principal may not write a topic outside its prefix.
     */
    @Test
    void sslPrincipalIsTheCertificateSubject() throws Exception {
        Properties p = clientCert();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 20_000);
        try (KafkaProducer<String, String> prod = new KafkaProducer<>(p)) {
            ExecutionException e = assertThrows(ExecutionException.class,
                () -> prod.send(new ProducerRecord<>(Clients.unique("other"), "v")).get());
            assertInstanceOf(TopicAuthorizationException.class, e.getCause());
        }
    }
}

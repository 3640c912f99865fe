package io.kgateway.jvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.errors.InvalidReplicaAssignmentException;
import org.apache.kafka.common.errors.InvalidUpdateVersionException;
import org.apache.kafka.common.errors.LogDirNotFoundException;
import org.apache.kafka.common.errors.NoReassignmentInProgressException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import java.util.Optional;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.admin.UserScramCredentialAlteration;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ResourceNotFoundException;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The Admin client against kgateway: each call's result as Kafka's Admin documentation describes it. */
@Tag("core")
class AdminTest {
    private static KGateway kg;
    private static Admin admin;

    @BeforeAll
    static void start() {
        // An authorizer for the ACL calls; the PLAINTEXT principal
        // User:ANONYMOUS is a super user, so every other call is allowed.
        kg = KGateway.start(Map.of(
            "authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users", "User:ANONYMOUS",
            "group.share.heartbeat.interval.ms", "500",
            "group.consumer.min.heartbeat.interval.ms", "500",
            "group.consumer.heartbeat.interval.ms", "500"));
        admin = kg.admin();
    }

    @AfterAll
    static void stop() {
        if (admin != null) {
            admin.close();
        }
        if (kg != null) {
            kg.close();
        }
    }

    static String topic(int partitions) {
        String t = Clients.unique("admin");
        Clients.createTopic(admin, t, partitions);
        return t;
    }

    static void produce(String topic, int partition, int n, Map<String, Object> extra) throws Exception {
        try (KafkaProducer<String, String> p = Clients.producer(kg, extra)) {
            for (int i = 0; i < n; i++) {
                p.send(new ProducerRecord<>(topic, partition, 1_000L * (i + 1), "k" + i, "v" + i));
            }
            p.flush();
        }
    }

    /** describeCluster: the one node, at the address the client dialed, with a cluster id and a controller. */
    @Test
    void describeCluster() {
        DescribeClusterResult r = admin.describeCluster();
        Collection<Node> nodes = Clients.get(r.nodes());
        assertEquals(1, nodes.size());
        Node n = nodes.iterator().next();
        assertEquals(kg.bootstrap(), n.host() + ":" + n.port());
        String id = Clients.get(r.clusterId());
        assertNotNull(id);
        assertFalse(id.isEmpty());
        assertEquals(n.id(), Clients.get(r.controller()).id());
    }

    /**
     * describeTopics: the 4.x Admin asks DescribeTopicPartitions (key 75)
     * by name and Metadata by id; either way the partitions, their leader
     * and the topic id are described.
     */
    @Test
    void describeTopics() {
        String t = topic(3);
        TopicDescription d = Clients.get(admin.describeTopics(List.of(t)).topicNameValues().get(t));
        assertEquals(t, d.name());
        assertEquals(3, d.partitions().size());
        assertFalse(d.isInternal());
        assertNotNull(d.topicId());
        assertFalse(d.topicId().equals(org.apache.kafka.common.Uuid.ZERO_UUID));
        d.partitions().forEach(p -> {
            assertNotNull(p.leader(), "leader of " + p.partition());
            assertEquals(List.of(p.leader()), p.replicas());
            assertEquals(List.of(p.leader()), p.isr());
        });
        TopicDescription byId = Clients.get(admin.describeTopics(
            org.apache.kafka.common.TopicCollection.ofTopicIds(List.of(d.topicId()))).topicIdValues().get(d.topicId()));
        assertEquals(t, byId.name());
    }

    /**
     * describeLogDirs: the data directory as the one log dir, with its file
     * system's total and usable bytes, and each partition with its bytes on
     * disk; describeReplicaLogDirs names the same dir; alterReplicaLogDirs
     * to that dir is a no-op, to any other LogDirNotFoundException.
     */
    @Test
    void describeLogDirs() throws Exception {
        String t = topic(2);
        produce(t, 0, 10, Map.of());
        int node = Clients.get(admin.describeCluster().nodes()).iterator().next().id();
        Map<String, LogDirDescription> dirs = Clients.get(admin.describeLogDirs(List.of(node)).allDescriptions()).get(node);
        assertEquals(1, dirs.size());
        String path = dirs.keySet().iterator().next();
        assertEquals(kg.dataDir().toAbsolutePath().toString(), path);
        LogDirDescription d = dirs.get(path);
        assertTrue(d.totalBytes().isPresent() && d.totalBytes().getAsLong() > 0);
        assertTrue(d.usableBytes().isPresent() && d.usableBytes().getAsLong() <= d.totalBytes().getAsLong());
        assertTrue(d.replicaInfos().get(new TopicPartition(t, 0)).size() > 0);
        assertEquals(0, d.replicaInfos().get(new TopicPartition(t, 1)).size());

        TopicPartitionReplica r = new TopicPartitionReplica(t, 0, node);
        assertEquals(path, Clients.get(admin.describeReplicaLogDirs(List.of(r)).all()).get(r).getCurrentReplicaLogDir());
        Clients.get(admin.alterReplicaLogDirs(Map.of(r, path)).all());
        ExecutionException e = assertThrows(ExecutionException.class,
            () -> admin.alterReplicaLogDirs(Map.of(r, path + "-elsewhere")).all().get());
        assertInstanceOf(LogDirNotFoundException.class, e.getCause());
    }

    /**
     * describeTopics by name pages through DescribeTopicPartitions (KIP-966)
     * with its partition limit: a limit below the topics' partitions still
     * describes every partition, and a missing topic fails on its own.
     */
    @Test
    void describeTopicsPaged() throws Exception {
        String a = topic(5);
        String b = topic(3);
        double before = requests("DescribeTopicPartitions");
        Map<String, TopicDescription> ds = Clients.get(admin.describeTopics(List.of(a, b),
            new DescribeTopicsOptions().partitionSizeLimitPerResponse(2)).allTopicNames());
        assertEquals(5, ds.get(a).partitions().size());
        assertEquals(3, ds.get(b).partitions().size());
        // 8 partitions at 2 a response: 4 DescribeTopicPartitions requests.
        assertEquals(4, requests("DescribeTopicPartitions") - before, "DescribeTopicPartitions pages");
        for (TopicDescription d : ds.values()) {
            for (int i = 0; i < d.partitions().size(); i++) {
                assertEquals(i, d.partitions().get(i).partition());
                assertNotNull(d.partitions().get(i).leader());
            }
        }
        ExecutionException e = assertThrows(ExecutionException.class,
            () -> admin.describeTopics(List.of(a, "admin-missing-topic")).topicNameValues().get("admin-missing-topic").get());
        assertInstanceOf(UnknownTopicOrPartitionException.class, e.getCause());
    }

    /** The count of requests kgateway handled of one API (its /metrics). */
    static double requests(String api) throws Exception {
        java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(
            java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://" + kg.metricsAddr() + "/metrics")).build(),
            java.net.http.HttpResponse.BodyHandlers.ofString());
        String prefix = "kgateway_requests_total{api=\"" + api + "\"} ";
        for (String line : r.body().split("\n")) {
            if (line.startsWith(prefix)) {
                return Double.parseDouble(line.substring(prefix.length()));
            }
        }
        return 0;
    }

    /**
     * electLeaders: a single-replica partition needs no election
     * (ElectionNotNeededException), preferred or unclean; a missing one is
     * unknown.
     */
    @Test
    void electLeaders() {
        String t = topic(1);
        TopicPartition tp = new TopicPartition(t, 0);
        for (ElectionType type : ElectionType.values()) {
            Map<TopicPartition, Optional<Throwable>> r = Clients.get(admin.electLeaders(type, Set.of(tp)).partitions());
            assertTrue(r.get(tp).isPresent(), type + ": no error");
            assertInstanceOf(ElectionNotNeededException.class, r.get(tp).get(), type.toString());
        }
        TopicPartition missing = new TopicPartition(t, 7);
        Map<TopicPartition, Optional<Throwable>> r = Clients.get(admin.electLeaders(ElectionType.PREFERRED, Set.of(missing)).partitions());
        assertInstanceOf(UnknownTopicOrPartitionException.class, r.get(missing).get());
    }

    /**
     * listPartitionReassignments finds none; alterPartitionReassignments to
     * the partition's own replica succeeds and leaves none in progress, to
     * a broker that does not exist fails InvalidReplicaAssignmentException,
     * and a cancel finds none to cancel.
     */
    @Test
    void partitionReassignments() {
        String t = topic(1);
        TopicPartition tp = new TopicPartition(t, 0);
        int node = Clients.get(admin.describeCluster().nodes()).iterator().next().id();
        assertTrue(Clients.get(admin.listPartitionReassignments().reassignments()).isEmpty());
        Clients.get(admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(node))))).all());
        assertTrue(Clients.get(admin.listPartitionReassignments(Set.of(tp)).reassignments()).isEmpty());
        ExecutionException e = assertThrows(ExecutionException.class, () -> admin.alterPartitionReassignments(
            Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(node + 100))))).all().get());
        assertInstanceOf(InvalidReplicaAssignmentException.class, e.getCause());
        e = assertThrows(ExecutionException.class,
            () -> admin.alterPartitionReassignments(Map.of(tp, Optional.empty())).all().get());
        assertInstanceOf(NoReassignmentInProgressException.class, e.getCause());
    }

    /**
     * updateFeatures changes what describeFeatures (ApiVersions) finalizes:
     * validateOnly does not; a safe downgrade of transaction.version to 1
     * does, and an upgrade takes it back; turning share groups off validates
     * (as in Kafka 4.4); an unknown feature and a share.version above the
     * supported range are InvalidUpdateVersionException.
     */
    @Test
    void updateFeatures() {
        java.util.function.Supplier<Short> tv = () ->
            Clients.get(admin.describeFeatures().featureMetadata()).finalizedFeatures().get("transaction.version").maxVersionLevel();
        try {
            Clients.get(admin.updateFeatures(Map.of("transaction.version",
                new FeatureUpdate((short) 1, FeatureUpdate.UpgradeType.SAFE_DOWNGRADE)), new UpdateFeaturesOptions().validateOnly(true)).all());
            assertEquals((short) 2, tv.get());
            Clients.get(admin.updateFeatures(Map.of("transaction.version",
                new FeatureUpdate((short) 1, FeatureUpdate.UpgradeType.SAFE_DOWNGRADE)), new UpdateFeaturesOptions()).all());
            assertEquals((short) 1, tv.get());
        } finally {
            Clients.get(admin.updateFeatures(Map.of("transaction.version",
                new FeatureUpdate((short) 2, FeatureUpdate.UpgradeType.UPGRADE)), new UpdateFeaturesOptions()).all());
        }
        assertEquals((short) 2, tv.get());
        // Turning share groups off is allowed, as in Kafka 4.4: validated
        // only here, so share.version stays at 2 for the other tests.
        Clients.get(admin.updateFeatures(Map.of("share.version",
            new FeatureUpdate((short) 0, FeatureUpdate.UpgradeType.SAFE_DOWNGRADE)), new UpdateFeaturesOptions().validateOnly(true)).all());
        assertEquals((short) 2, Clients.get(admin.describeFeatures().featureMetadata()).finalizedFeatures().get("share.version").maxVersionLevel());
        for (Map.Entry<String, FeatureUpdate> bad : Map.of(
                "admin.unknown.version", new FeatureUpdate((short) 1, FeatureUpdate.UpgradeType.SAFE_DOWNGRADE),
                "share.version", new FeatureUpdate((short) 3, FeatureUpdate.UpgradeType.UPGRADE)).entrySet()) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> admin.updateFeatures(Map.of(bad.getKey(),
                bad.getValue()), new UpdateFeaturesOptions()).all().get());
            assertInstanceOf(InvalidUpdateVersionException.class, e.getCause(), bad.getKey());
        }
    }

    @Test
    void clientQuotas() {
        ClientQuotaEntity e = new ClientQuotaEntity(Map.of(ClientQuotaEntity.USER, "alice"));
        Clients.get(admin.alterClientQuotas(List.of(new ClientQuotaAlteration(e,
            List.of(new ClientQuotaAlteration.Op("producer_byte_rate", 1024.0))))).all());
        assertEquals(Map.of("producer_byte_rate", 1024.0),
            Clients.get(admin.describeClientQuotas(ClientQuotaFilter.all()).entities()).get(e));
        // Removing the last quota removes the entity.
        Clients.get(admin.alterClientQuotas(List.of(new ClientQuotaAlteration(e,
            List.of(new ClientQuotaAlteration.Op("producer_byte_rate", null))))).all());
        assertFalse(Clients.get(admin.describeClientQuotas(ClientQuotaFilter.all()).entities()).containsKey(e));
    }

    /** describeFeatures: the finalized transaction.version 2, share.version 2 and group.version 1 the README documents. */
    @Test
    void describeFeatures() {
        FeatureMetadata f = Clients.get(admin.describeFeatures().featureMetadata());
        assertEquals(2, f.finalizedFeatures().get("transaction.version").maxVersionLevel());
        assertEquals(2, f.finalizedFeatures().get("share.version").maxVersionLevel());
        assertEquals(1, f.finalizedFeatures().get("group.version").maxVersionLevel());
        assertTrue(f.supportedFeatures().get("transaction.version").maxVersion() >= 2);
    }

    /** listOffsets: earliest, latest, a timestamp, and max-timestamp. */
    @Test
    void listOffsets() throws Exception {
        String t = topic(1);
        TopicPartition tp = new TopicPartition(t, 0);
        produce(t, 0, 10, Map.of()); // timestamps 1000..10000
        assertEquals(0, offset(tp, OffsetSpec.earliest()).offset());
        assertEquals(10, offset(tp, OffsetSpec.latest()).offset());
        ListOffsetsResult.ListOffsetsResultInfo at = offset(tp, OffsetSpec.forTimestamp(4_500));
        assertEquals(4, at.offset());
        assertEquals(5_000, at.timestamp());
        ListOffsetsResult.ListOffsetsResultInfo max = offset(tp, OffsetSpec.maxTimestamp());
        assertEquals(9, max.offset());
        assertEquals(10_000, max.timestamp());
    }

    static ListOffsetsResult.ListOffsetsResultInfo offset(TopicPartition tp, OffsetSpec spec) {
        return Clients.get(admin.listOffsets(Map.of(tp, spec)).partitionResult(tp));
    }

    /** deleteRecords: the low watermark moves to the offset given; consumers start there. */
    @Test
    void deleteRecords() throws Exception {
        String t = topic(1);
        TopicPartition tp = new TopicPartition(t, 0);
        produce(t, 0, 100, Map.of());
        long low = Clients.get(admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(40))).lowWatermarks().get(tp)).lowWatermark();
        assertEquals(40, low);
        assertEquals(40, offset(tp, OffsetSpec.earliest()).offset());
        List<ConsumerRecord<String, String>> got = Clients.readN(kg, List.of(tp), 60, Map.of());
        assertEquals(40, got.get(0).offset());
        assertEquals("v40", got.get(0).value());
    }

    /**
     * describeConfigs and incrementalAlterConfigs: SET makes a dynamic topic
     * config, DELETE returns to the default; a broker's configs are described.
     */
    @Test
    void describeAndIncrementallyAlterConfigs() {
        String t = topic(1);
        ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, t);
        ConfigEntry before = config(res, "retention.ms");
        assertEquals("604800000", before.value());
        assertEquals(ConfigEntry.ConfigSource.DEFAULT_CONFIG, before.source());
        Clients.get(admin.incrementalAlterConfigs(Map.of(res, List.of(
            new AlterConfigOp(new ConfigEntry("retention.ms", "123456"), AlterConfigOp.OpType.SET),
            new AlterConfigOp(new ConfigEntry("cleanup.policy", "compact"), AlterConfigOp.OpType.APPEND)))).all());
        ConfigEntry set = config(res, "retention.ms");
        assertEquals("123456", set.value());
        assertEquals(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, set.source());
        assertEquals(Set.of("delete", "compact"), Set.of(config(res, "cleanup.policy").value().split(",")));
        Clients.get(admin.incrementalAlterConfigs(Map.of(res, List.of(
            new AlterConfigOp(new ConfigEntry("retention.ms", ""), AlterConfigOp.OpType.DELETE)))).all());
        assertEquals("604800000", config(res, "retention.ms").value());
        ExecutionException e = assertThrows(ExecutionException.class, () -> admin.incrementalAlterConfigs(Map.of(res,
            List.of(new AlterConfigOp(new ConfigEntry("retention.ms", "soon"), AlterConfigOp.OpType.SET)))).all().get());
        assertInstanceOf(org.apache.kafka.common.errors.InvalidConfigurationException.class, e.getCause());
        ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, "0");
        assertEquals("1048588", config(broker, "message.max.bytes").value());
    }

    static ConfigEntry config(ConfigResource res, String name) {
        Config c = Clients.get(admin.describeConfigs(List.of(res)).values().get(res));
        ConfigEntry e = c.get(name);
        assertNotNull(e, name + " of " + res);
        return e;
    }

    /** ACLs: created bindings are described by a matching filter and removed by deleteAcls. */
    @Test
    void acls() {
        String t = Clients.unique("acl");
        AclBinding read = new AclBinding(new ResourcePattern(ResourceType.TOPIC, t, PatternType.LITERAL),
            new AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW));
        AclBinding write = new AclBinding(new ResourcePattern(ResourceType.TOPIC, t + "-", PatternType.PREFIXED),
            new AccessControlEntry("User:alice", "*", AclOperation.WRITE, AclPermissionType.DENY));
        Clients.get(admin.createAcls(List.of(read, write)).all());
        AclBindingFilter alice = new AclBindingFilter(ResourcePatternFilter.ANY,
            new AccessControlEntryFilter("User:alice", null, AclOperation.ANY, AclPermissionType.ANY));
        Set<AclBinding> described = new HashSet<>(Clients.get(admin.describeAcls(alice).values()));
        assertTrue(described.containsAll(Set.of(read, write)), described.toString());
        AclBindingFilter onlyLiteral = new AclBindingFilter(
            new ResourcePatternFilter(ResourceType.TOPIC, t, PatternType.LITERAL), AccessControlEntryFilter.ANY);
        assertEquals(List.of(read), List.copyOf(Clients.get(admin.describeAcls(onlyLiteral).values())));
        Collection<AclBinding> deleted = Clients.get(admin.deleteAcls(List.of(alice)).all());
        assertEquals(Set.of(read, write), new HashSet<>(deleted));
        assertTrue(Clients.get(admin.describeAcls(alice).values()).isEmpty());
    }

    /** SCRAM users: an upsert is described with its mechanism and iterations; a deleted user is not found. */
    @Test
    void scramCredentials() {
        String user = Clients.unique("user");
        Clients.get(admin.alterUserScramCredentials(List.<UserScramCredentialAlteration>of(
            new UserScramCredentialUpsertion(user, new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192), "pw1"),
            new UserScramCredentialUpsertion(user, new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), "pw2"))).all());
        UserScramCredentialsDescription d = Clients.get(admin.describeUserScramCredentials(List.of(user)).description(user));
        assertEquals(Set.of(new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192),
            new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096)), new HashSet<>(d.credentialInfos()));
        assertTrue(Clients.get(admin.describeUserScramCredentials().users()).contains(user));
        Clients.get(admin.alterUserScramCredentials(List.<UserScramCredentialAlteration>of(
            new UserScramCredentialDeletion(user, ScramMechanism.SCRAM_SHA_256),
            new UserScramCredentialDeletion(user, ScramMechanism.SCRAM_SHA_512))).all());
        ExecutionException e = assertThrows(ExecutionException.class,
            () -> admin.describeUserScramCredentials(List.of(user)).description(user).get());
        assertInstanceOf(ResourceNotFoundException.class, e.getCause());
    }

    /** describeProducers: an idempotent producer's id, epoch and last sequence on the partition. */
    @Test
    void describeProducers() throws Exception {
        String t = topic(1);
        TopicPartition tp = new TopicPartition(t, 0);
        produce(t, 0, 7, Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.ACKS_CONFIG, "all"));
        List<ProducerState> ps = Clients.get(admin.describeProducers(List.of(tp)).partitionResult(tp)).activeProducers();
        assertEquals(1, ps.size());
        assertTrue(ps.get(0).producerId() >= 0);
        assertEquals(6, ps.get(0).lastSequence());
        assertFalse(ps.get(0).currentTransactionStartOffset().isPresent());
    }

    /**
     * listTransactions and describeTransactions: an open transaction is
     * Ongoing with its partition and start offset; after commit it is
     * CompleteCommit with no partitions.
     */
    @Test
    void describeAndListTransactions() throws Exception {
        String t = topic(1);
        TopicPartition tp = new TopicPartition(t, 0);
        String txnId = Clients.unique("txn");
        try (KafkaProducer<String, String> p = Clients.producer(kg, Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId))) {
            p.initTransactions();
            p.beginTransaction();
            p.send(new ProducerRecord<>(t, 0, "k", "v")).get();
            TransactionDescription d = Clients.get(admin.describeTransactions(List.of(txnId)).description(txnId));
            assertEquals(TransactionState.ONGOING, d.state());
            assertEquals(Set.of(tp), d.topicPartitions());
            Collection<TransactionListing> listed = Clients.get(admin.listTransactions().all());
            assertTrue(listed.stream().anyMatch(l -> l.transactionalId().equals(txnId)
                && l.state() == TransactionState.ONGOING && l.producerId() == d.producerId()), listed.toString());
            List<ProducerState> ps = Clients.get(admin.describeProducers(List.of(tp)).partitionResult(tp)).activeProducers();
            assertEquals(0L, ps.get(0).currentTransactionStartOffset().orElse(-1));
            p.commitTransaction();
            // The commit is answered once decided; the transaction
            // completes after its markers, as on Apache Kafka.
            TransactionDescription done = Await.value("the transaction complete", () -> {
                TransactionDescription x = Clients.get(admin.describeTransactions(List.of(txnId)).description(txnId));
                return x.state() == TransactionState.COMPLETE_COMMIT ? x : null;
            });
            assertTrue(done.topicPartitions().isEmpty());
        }
    }

    /**
     * fenceProducers: the fenced producer can commit nothing more. Its next
     * send fails with InvalidProducerEpochException (Kafka answers a
     * fenced epoch's Produce INVALID_PRODUCER_EPOCH), its commit fails, the
     * transactional id's epoch moved past its own, and read_committed
     * readers never see what it sent after the fence.
     */
    @Test
    void fenceProducers() throws Exception {
        String t = topic(1);
        TopicPartition tp = new TopicPartition(t, 0);
        String txnId = Clients.unique("fence");
        try (KafkaProducer<String, String> p = Clients.producer(kg, Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId))) {
            p.initTransactions();
            p.beginTransaction();
            p.send(new ProducerRecord<>(t, 0, "k", "one")).get();
            p.commitTransaction();
            int epoch = Clients.get(admin.describeTransactions(List.of(txnId)).description(txnId)).producerEpoch();
            Clients.get(admin.fenceProducers(List.of(txnId)).all());
            assertTrue(Clients.get(admin.describeTransactions(List.of(txnId)).description(txnId)).producerEpoch() > epoch,
                "the fence bumped the epoch");
            p.beginTransaction();
            ExecutionException e = assertThrows(ExecutionException.class,
                () -> p.send(new ProducerRecord<>(t, 0, "k", "two")).get());
            assertInstanceOf(org.apache.kafka.common.errors.InvalidProducerEpochException.class, e.getCause());
            assertThrows(org.apache.kafka.common.KafkaException.class, p::commitTransaction);
        }
        List<ConsumerRecord<String, String>> got = Clients.readN(kg, List.of(tp), 1,
            Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"));
        assertEquals(List.of("one"), got.stream().map(ConsumerRecord::value).toList());
        try (KafkaConsumer<String, String> c = Clients.consumer(kg, Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"))) {
            c.assign(List.of(tp));
            c.seekToEnd(List.of(tp));
            long lso = c.position(tp);
            c.seekToBeginning(List.of(tp));
            List<String> all = new ArrayList<>();
            Await.until("read to the LSO", () -> {
                c.poll(Duration.ofMillis(100)).forEach(r -> all.add(r.value()));
                return c.position(tp) >= lso;
            });
            assertEquals(List.of("one"), all, "nothing after the fence is committed");
        }
    }

    /** listGroups with types: a classic, a consumer-protocol and a share group, each under its type. */
    @Test
    void listGroupsWithTypes() throws Exception {
        String t = topic(1);
        produce(t, 0, 1, Map.of());
        String classic = Clients.unique("g-classic"), modern = Clients.unique("g-modern"), share = Clients.unique("g-share");
        try (KafkaConsumer<String, String> c = Clients.consumer(kg, Map.of(ConsumerConfig.GROUP_ID_CONFIG, classic,
                ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic"));
             KafkaConsumer<String, String> m = Clients.consumer(kg, Map.of(ConsumerConfig.GROUP_ID_CONFIG, modern,
                 ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer"));
             KafkaShareConsumer<String, String> s = shareConsumer(share)) {
            c.subscribe(List.of(t));
            m.subscribe(List.of(t));
            s.subscribe(List.of(t));
            Await.until("three groups with members", () -> {
                c.poll(Duration.ofMillis(50));
                m.poll(Duration.ofMillis(50));
                s.poll(Duration.ofMillis(50));
                return !c.assignment().isEmpty() && !m.assignment().isEmpty()
                    && listed(new ListGroupsOptions()).containsAll(Set.of(classic, modern, share));
            });
            Map<String, GroupListing> all = Clients.get(admin.listGroups().all()).stream()
                .collect(Collectors.toMap(GroupListing::groupId, g -> g));
            assertEquals(GroupType.CLASSIC, all.get(classic).type().orElseThrow());
            assertEquals(GroupType.CONSUMER, all.get(modern).type().orElseThrow());
            assertEquals(GroupType.SHARE, all.get(share).type().orElseThrow());
            Set<String> consumerType = listed(new ListGroupsOptions().withTypes(Set.of(GroupType.CONSUMER)));
            assertTrue(consumerType.contains(modern));
            assertFalse(consumerType.contains(classic) || consumerType.contains(share));
            Set<String> shares = listed(ListGroupsOptions.forShareGroups());
            assertTrue(shares.contains(share));
            assertFalse(shares.contains(classic) || shares.contains(modern));
            Set<String> consumers = listed(ListGroupsOptions.forConsumerGroups());
            assertTrue(consumers.containsAll(Set.of(classic, modern)));
            assertFalse(consumers.contains(share));
        }
    }

    static Set<String> listed(ListGroupsOptions o) {
        return Clients.get(admin.listGroups(o).all()).stream().map(GroupListing::groupId).collect(Collectors.toSet());
    }

    static KafkaShareConsumer<String, String> shareConsumer(String group) {
        Properties p = kg.clientProps();
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return new KafkaShareConsumer<>(p);
    }

    /** Consumer group offsets: alter sets them, list reads them, delete removes one partition's. */
    @Test
    void consumerGroupOffsets() {
        String t = topic(2);
        String group = Clients.unique("g-offsets");
        TopicPartition p0 = new TopicPartition(t, 0), p1 = new TopicPartition(t, 1);
        Clients.get(admin.alterConsumerGroupOffsets(group, Map.of(
            p0, new OffsetAndMetadata(5, "meta"), p1, new OffsetAndMetadata(7))).all());
        Map<TopicPartition, OffsetAndMetadata> got = Clients.get(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata());
        assertEquals(5, got.get(p0).offset());
        assertEquals("meta", got.get(p0).metadata());
        assertEquals(7, got.get(p1).offset());
        Clients.get(admin.deleteConsumerGroupOffsets(group, Set.of(p0)).all());
        got = Clients.get(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata());
        assertFalse(got.containsKey(p0) && got.get(p0) != null, got.toString());
        assertEquals(7, got.get(p1).offset());
    }

    /**
     * Share group offsets: list gives the share-partition start offset after
     * a member consumed; with the group empty, alter moves it and delete
     * removes the topic's state.
     */
    @Test
    void shareGroupOffsets() throws Exception {
        String t = topic(1);
        TopicPartition tp = new TopicPartition(t, 0);
        produce(t, 0, 10, Map.of());
        String group = Clients.unique("g-shareoffsets");
        ConfigResource res = new ConfigResource(ConfigResource.Type.GROUP, group);
        Clients.get(admin.incrementalAlterConfigs(Map.of(res, List.of(new AlterConfigOp(
            new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET)))).all());
        try (KafkaShareConsumer<String, String> s = shareConsumer(group)) {
            s.subscribe(List.of(t));
            Set<String> got = new HashSet<>();
            Await.until("10 delivered", () -> {
                s.poll(Duration.ofMillis(100)).forEach(r -> got.add(r.value()));
                return got.size() == 10;
            });
            s.commitSync();
        }
        Map<String, ListShareGroupOffsetsSpec> spec = Map.of(group, new ListShareGroupOffsetsSpec());
        SharePartitionOffsetInfo info = Clients.get(admin.listShareGroupOffsets(spec).partitionsToOffsetInfo(group)).get(tp);
        assertNotNull(info);
        assertEquals(10, info.startOffset());
        Await.until("the share group is empty", () ->
            admin.describeShareGroups(List.of(group)).describedGroups().get(group).get().members().isEmpty());
        Clients.get(admin.alterShareGroupOffsets(group, Map.of(tp, 3L)).all());
        assertEquals(3, Clients.get(admin.listShareGroupOffsets(spec).partitionsToOffsetInfo(group)).get(tp).startOffset());
        Clients.get(admin.deleteShareGroupOffsets(group, Set.of(t)).all());
        Map<TopicPartition, SharePartitionOffsetInfo> after = Clients.get(admin.listShareGroupOffsets(spec).partitionsToOffsetInfo(group));
        assertTrue(after.get(tp) == null, after.toString());
    }
}

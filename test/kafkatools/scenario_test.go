package kafkatools

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTools runs Kafka's command-line tools against kgateway and against a
// real Apache Kafka broker, each step against both at once, and requires
// that every step prints the same on both once normalised (normalise),
// except for the differences listed in accepted.
func TestTools(t *testing.T) {
	if os.Getenv("KGW_KAFKA_TOOLS") != "1" {
		t.Skip("set KGW_KAFKA_TOOLS=1 (make test-kafka-tools): starts Apache Kafka and ~150 tool JVMs")
	}
	tl := newTools(t)
	var kg, ak target
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); ak = startKafka(t) }()
	kg = startKgateway(t)
	wg.Wait()
	if ak.addr == "" || t.Failed() {
		t.FailNow()
	}
	s := &session{t: t, tl: tl, targets: []target{ak, kg}, outputs: map[string][]result{}, dump: os.Getenv("KGW_TOOLS_DUMP")}
	if s.dump != "" {
		os.MkdirAll(s.dump, 0o755)
	}
	tl.buildArchive(t, ak.addr)
	topicSteps(s)
	configSteps(s)
	adminSteps(s)
	groupSteps(s)
	aclSteps(s)
	txnSteps(s)
	shareSteps(s)
	perfSteps(s)
	s.compare()
}

func topicSteps(s *session) {
	bs := []string{"--bootstrap-server", addrArg}
	s.step("topics create", topicCommand, append(bs, "--create", "--topic", "orders", "--partitions", "3", "--replication-factor", "1")...)
	s.step("topics create with config", topicCommand, append(bs, "--create", "--topic", "events", "--partitions", "2", "--config", "retention.ms=3600000", "--config", "cleanup.policy=compact")...)
	s.step("topics create existing", topicCommand, append(bs, "--create", "--topic", "orders", "--partitions", "3")...)
	s.step("topics create if-not-exists", topicCommand, append(bs, "--create", "--if-not-exists", "--topic", "orders", "--partitions", "3")...)
	s.step("topics list", topicCommand, append(bs, "--list")...)
	s.step("topics describe", topicCommand, append(bs, "--describe", "--topic", "orders")...)
	s.step("topics describe with config", topicCommand, append(bs, "--describe", "--topic", "events")...)
	s.step("topics alter partitions", topicCommand, append(bs, "--alter", "--topic", "orders", "--partitions", "5")...)
	s.step("topics describe altered", topicCommand, append(bs, "--describe", "--topic", "orders")...)
	s.step("topics alter same partitions", topicCommand, append(bs, "--alter", "--topic", "orders", "--partitions", "5")...)
	s.step("topics alter fewer partitions", topicCommand, append(bs, "--alter", "--topic", "orders", "--partitions", "2")...)
	s.step("topics delete", topicCommand, append(bs, "--delete", "--topic", "events")...)
	s.step("topics list after delete", topicCommand, append(bs, "--list", "--exclude-internal")...)
	s.step("topics describe missing", topicCommand, append(bs, "--describe", "--topic", "nosuch")...)
}

// adminSteps runs the tools of the admin APIs a single node answers as
// one with a single replica per partition: log dirs, features, leader
// election and reassignments, on the topic "orders" of topicSteps (5
// partitions, no records).
func adminSteps(s *session) {
	bs := []string{"--bootstrap-server", addrArg}
	s.step("logdirs describe", logDirsCommand, append(bs, "--describe", "--topic-list", "orders")...)
	s.step("logdirs describe missing topic", logDirsCommand, append(bs, "--describe", "--topic-list", "nosuch")...)
	s.step("features describe", featureCommand, append(bs, "describe")...)
	s.step("features downgrade dry-run", featureCommand, append(bs, "downgrade", "--feature", "transaction.version=1", "--dry-run")...)
	s.step("features upgrade unsupported", featureCommand, append(bs, "upgrade", "--feature", "transaction.version=3")...)
	s.step("election preferred", electionCommand, append(bs, "--election-type", "preferred", "--topic", "orders", "--partition", "0")...)
	s.step("election unclean all", electionCommand, append(bs, "--election-type", "unclean", "--all-topic-partitions")...)
	plan := filepath.Join(s.t.TempDir(), "reassign.json")
	json := `{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[` + nodeID + `]}]}`
	if err := os.WriteFile(plan, []byte(json), 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.step("reassign list", reassignCommand, append(bs, "--list")...)
	s.step("reassign execute same replicas", reassignCommand, append(bs, "--execute", "--reassignment-json-file", plan)...)
	s.step("reassign verify", reassignCommand, append(bs, "--verify", "--preserve-throttles", "--reassignment-json-file", plan)...)
	bad := filepath.Join(s.t.TempDir(), "reassign-bad.json")
	if err := os.WriteFile(bad, []byte(`{"version":1,"partitions":[{"topic":"orders","partition":1,"replicas":[7]}]}`), 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.step("reassign execute unknown broker", reassignCommand, append(bs, "--execute", "--reassignment-json-file", bad)...)
}

func configSteps(s *session) {
	bs := []string{"--bootstrap-server", addrArg}
	s.step("configs topic alter", configCommand, append(bs, "--alter", "--entity-type", "topics", "--entity-name", "orders",
		"--add-config", "retention.ms=86400000,max.message.bytes=2097152")...)
	s.step("configs topic describe", configCommand, append(bs, "--describe", "--entity-type", "topics", "--entity-name", "orders")...)
	s.step("configs topic delete-config", configCommand, append(bs, "--alter", "--entity-type", "topics", "--entity-name", "orders",
		"--delete-config", "max.message.bytes")...)
	s.step("configs topic describe after delete", configCommand, append(bs, "--describe", "--entity-type", "topics", "--entity-name", "orders")...)
	s.step("configs broker describe", configCommand, append(bs, "--describe", "--entity-type", "brokers", "--entity-name", nodeID)...)
	s.step("configs broker default describe", configCommand, append(bs, "--describe", "--entity-type", "brokers", "--entity-default")...)
	s.step("configs broker alter", configCommand, append(bs, "--alter", "--entity-type", "brokers", "--entity-name", nodeID,
		"--add-config", "log.cleaner.threads=2")...)
	// Dynamic broker configs: the cluster-wide default, then this broker's.
	s.step("configs broker default alter dynamic", configCommand, append(bs, "--alter", "--entity-type", "brokers", "--entity-default",
		"--add-config", "log.retention.ms=7200000")...)
	s.step("configs broker default describe after alter", configCommand, append(bs, "--describe", "--entity-type", "brokers", "--entity-default")...)
	s.step("configs broker alter dynamic", configCommand, append(bs, "--alter", "--entity-type", "brokers", "--entity-name", nodeID,
		"--add-config", "log.segment.bytes=536870912")...)
	s.step("configs broker describe after alter", configCommand, append(bs, "--describe", "--entity-type", "brokers", "--entity-name", nodeID)...)
	s.step("configs broker alter read-only", configCommand, append(bs, "--alter", "--entity-type", "brokers", "--entity-name", nodeID,
		"--add-config", "num.partitions=3")...)
	s.step("configs broker default delete-config", configCommand, append(bs, "--alter", "--entity-type", "brokers", "--entity-default",
		"--delete-config", "log.retention.ms")...)
	s.step("configs broker delete-config", configCommand, append(bs, "--alter", "--entity-type", "brokers", "--entity-name", nodeID,
		"--delete-config", "log.segment.bytes")...)
	// Broker loggers (KIP-412): each side has its own loggers, both a root.
	s.step("configs broker-loggers describe", configCommand, append(bs, "--describe", "--entity-type", "broker-loggers", "--entity-name", nodeID)...)
	s.step("configs broker-loggers alter", configCommand, append(bs, "--alter", "--entity-type", "broker-loggers", "--entity-name", nodeID,
		"--add-config", "root=INFO")...)
	s.step("configs broker-loggers alter bad level", configCommand, append(bs, "--alter", "--entity-type", "broker-loggers", "--entity-name", nodeID,
		"--add-config", "root=LOUD")...)
	s.step("configs broker-loggers delete root", configCommand, append(bs, "--alter", "--entity-type", "broker-loggers", "--entity-name", nodeID,
		"--delete-config", "root")...)
	s.step("configs user scram alter", configCommand, append(bs, "--alter", "--entity-type", "users", "--entity-name", "alice",
		"--add-config", "SCRAM-SHA-512=[password=alice-secret]")...)
	s.step("configs user describe", configCommand, append(bs, "--describe", "--entity-type", "users", "--entity-name", "alice")...)
	s.step("configs client quota alter", configCommand, append(bs, "--alter", "--entity-type", "clients", "--entity-name", "c1",
		"--add-config", "producer_byte_rate=1048576")...)
	s.step("configs client quota describe", configCommand, append(bs, "--describe", "--entity-type", "clients", "--entity-name", "c1")...)
	s.step("configs user quota alter", configCommand, append(bs, "--alter", "--entity-type", "users", "--entity-name", "alice",
		"--add-config", "producer_byte_rate=1048576,consumer_byte_rate=2097152,request_percentage=50")...)
	s.step("configs user quota describe", configCommand, append(bs, "--describe", "--entity-type", "users", "--entity-name", "alice")...)
	s.step("configs user default quota alter", configCommand, append(bs, "--alter", "--entity-type", "users", "--entity-default",
		"--add-config", "consumer_byte_rate=4096")...)
	s.step("configs user default quota describe", configCommand, append(bs, "--describe", "--entity-type", "users", "--entity-default")...)
	s.step("configs user client quota alter", configCommand, append(bs, "--alter", "--entity-type", "users", "--entity-name", "alice",
		"--entity-type", "clients", "--entity-default", "--add-config", "controller_mutation_rate=10")...)
	s.step("configs user client quota describe", configCommand, append(bs, "--describe", "--entity-type", "users", "--entity-name", "alice",
		"--entity-type", "clients", "--entity-default")...)
	s.step("configs user quota delete", configCommand, append(bs, "--alter", "--entity-type", "users", "--entity-name", "alice",
		"--delete-config", "request_percentage")...)
	s.step("configs user quota describe after delete", configCommand, append(bs, "--describe", "--entity-type", "users", "--entity-name", "alice")...)
	// The tools run as User:ANONYMOUS, which the default user's quota
	// applies to: it goes before the steps that move data.
	s.step("configs user default quota delete", configCommand, append(bs, "--alter", "--entity-type", "users", "--entity-default",
		"--delete-config", "consumer_byte_rate")...)
	clientMetricsSteps(s)
}

// clientMetricsSteps: KIP-714 subscriptions, CLIENT_METRICS resources, set
// and described by name with kafka-configs --entity-type client-metrics
// (describing them all lists them with ListConfigResources, not served).
func clientMetricsSteps(s *session) {
	bs := []string{"--bootstrap-server", addrArg}
	cm := append(bs, "--entity-type", "client-metrics", "--entity-name", "java-producers")
	s.step("configs client-metrics alter", configCommand, append(cm, "--alter",
		"--add-config", "metrics=[org.apache.kafka.producer.,org.apache.kafka.consumer.coordinator.],interval.ms=60000,match=[client_software_name=apache-kafka-java,client_id=svc-.*]")...)
	s.step("configs client-metrics describe", configCommand, append(cm, "--describe")...)
	s.step("configs client-metrics alter invalid interval", configCommand, append(cm, "--alter", "--add-config", "interval.ms=10")...)
	s.step("configs client-metrics alter unknown config", configCommand, append(cm, "--alter", "--add-config", "no.such=1")...)
	s.step("configs client-metrics alter invalid match", configCommand, append(cm, "--alter", "--add-config", "match=[client_name=x]")...)
	s.step("configs client-metrics delete-config", configCommand, append(cm, "--alter", "--delete-config", "match")...)
	s.step("configs client-metrics describe after delete", configCommand, append(cm, "--describe")...)
	s.step("configs client-metrics describe unset", configCommand, append(bs, "--describe", "--entity-type", "client-metrics", "--entity-name", "nosuch")...)
}

func groupSteps(s *session) {
	bs := []string{"--bootstrap-server", addrArg}
	s.step("groups topic create", topicCommand, append(bs, "--create", "--topic", "clicks", "--partitions", "3")...)
	s.onEach("produce clicks", func(ctx context.Context, tg target) error { return produce(ctx, tg.addr, "clicks", 30) })
	// A member of group "readers" consumes all 30 and commits, then stays
	// in the group for the describes.
	stops := make([]func(), len(s.targets))
	s.onEach("consume clicks", func(ctx context.Context, tg target) error {
		cl, err := kgo.NewClient(kgo.SeedBrokers(tg.addr), kgo.ConsumerGroup("readers"), kgo.ConsumeTopics("clicks"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(), kgo.ClientID("reader-1"))
		if err != nil {
			return err
		}
		for i := range s.targets {
			if s.targets[i] == tg {
				stops[i] = cl.Close
			}
		}
		for n := 0; n < 30; {
			fs := cl.PollFetches(ctx)
			if err := fs.Err0(); err != nil {
				return err
			}
			n += fs.NumRecords()
		}
		return cl.CommitUncommittedOffsets(ctx)
	})
	s.step("groups list", groupCommand, append(bs, "--list")...)
	s.step("groups list state", groupCommand, append(bs, "--list", "--state")...)
	s.step("groups describe active", groupCommand, append(bs, "--describe", "--group", "readers")...)
	s.step("groups describe members", groupCommand, append(bs, "--describe", "--group", "readers", "--members")...)
	s.step("groups describe state", groupCommand, append(bs, "--describe", "--group", "readers", "--state")...)
	for _, stop := range stops {
		if stop != nil {
			stop()
		}
	}
	s.step("groups describe empty", groupCommand, append(bs, "--describe", "--group", "readers")...)
	s.step("groups reset to-offset dry-run", groupCommand, append(bs, "--reset-offsets", "--group", "readers", "--topic", "clicks",
		"--to-offset", "4", "--dry-run")...)
	s.step("groups reset to-earliest execute", groupCommand, append(bs, "--reset-offsets", "--group", "readers", "--topic", "clicks",
		"--to-earliest", "--execute")...)
	s.step("groups describe after reset", groupCommand, append(bs, "--describe", "--group", "readers")...)
	s.step("groups reset to-offset execute", groupCommand, append(bs, "--reset-offsets", "--group", "readers", "--topic", "clicks:0,1",
		"--to-offset", "7", "--execute")...)
	s.step("groups reset shift-by dry-run", groupCommand, append(bs, "--reset-offsets", "--group", "readers", "--all-topics",
		"--shift-by", "-2", "--dry-run")...)
	s.step("groups describe offsets", groupCommand, append(bs, "--describe", "--group", "readers", "--offsets")...)
	s.step("groups delete offsets", groupCommand, append(bs, "--delete-offsets", "--group", "readers", "--topic", "clicks")...)
	s.step("groups delete", groupCommand, append(bs, "--delete", "--group", "readers")...)
	s.step("groups list after delete", groupCommand, append(bs, "--list")...)
	s.step("groups describe missing", groupCommand, append(bs, "--describe", "--group", "nosuch")...)
}

func aclSteps(s *session) {
	bs := []string{"--bootstrap-server", addrArg}
	s.step("acls add", aclCommand, append(bs, "--add", "--allow-principal", "User:alice", "--operation", "Read", "--operation", "Describe",
		"--topic", "orders")...)
	s.step("acls add prefixed", aclCommand, append(bs, "--add", "--allow-principal", "User:bob", "--producer", "--topic", "logs-",
		"--resource-pattern-type", "prefixed")...)
	s.step("acls add group deny", aclCommand, append(bs, "--add", "--deny-principal", "User:mallory", "--deny-host", "10.0.0.1",
		"--operation", "All", "--group", "readers")...)
	s.step("acls list", aclCommand, append(bs, "--list")...)
	s.step("acls list topic", aclCommand, append(bs, "--list", "--topic", "orders")...)
	s.step("acls list principal", aclCommand, append(bs, "--list", "--principal", "User:bob")...)
	s.step("acls remove", aclCommand, append(bs, "--remove", "--force", "--allow-principal", "User:alice", "--operation", "Read",
		"--topic", "orders")...)
	s.step("acls list after remove", aclCommand, append(bs, "--list", "--topic", "orders")...)
}

func txnSteps(s *session) {
	bs := []string{"--bootstrap-server", addrArg}
	s.step("txn topic create", topicCommand, append(bs, "--create", "--topic", "payments", "--partitions", "1")...)
	s.onEach("produce payments", func(ctx context.Context, tg target) error { return produce(ctx, tg.addr, "payments", 3) })
	// A transaction left open: begun, one record produced, never ended.
	s.onEach("open transaction", func(ctx context.Context, tg target) error {
		cl, err := kgo.NewClient(kgo.SeedBrokers(tg.addr), kgo.TransactionalID("hanging-tx"),
			kgo.TransactionTimeout(2*time.Minute))
		if err != nil {
			return err
		}
		s.t.Cleanup(cl.Close)
		if err := cl.BeginTransaction(); err != nil {
			return err
		}
		return cl.ProduceSync(ctx, &kgo.Record{Topic: "payments", Value: []byte("pending")}).FirstErr()
	})
	s.step("txn list", txnCommand, append(bs, "list")...)
	s.step("txn describe", txnCommand, append(bs, "describe", "--transactional-id", "hanging-tx")...)
	s.step("txn describe-producers", txnCommand, append(bs, "describe-producers", "--topic", "payments", "--partition", "0")...)
	s.step("txn find-hanging", txnCommand, append(bs, "find-hanging", "--broker-id", nodeID, "--max-transaction-timeout", "0")...)
	s.step("txn abort", txnCommand, append(bs, "abort", "--topic", "payments", "--partition", "0", "--start-offset", "3")...)
	s.step("txn describe-producers after abort", txnCommand, append(bs, "describe-producers", "--topic", "payments", "--partition", "0")...)
}

func shareSteps(s *session) {
	bs := []string{"--bootstrap-server", addrArg}
	s.step("share topic create", topicCommand, append(bs, "--create", "--topic", "tasks", "--partitions", "2")...)
	s.onEach("produce tasks", func(ctx context.Context, tg target) error { return produce(ctx, tg.addr, "tasks", 10) })
	s.step("share group config", configCommand, append(bs, "--alter", "--entity-type", "groups", "--entity-name", "workers",
		"--add-config", "share.auto.offset.reset=earliest")...)
	// A share consumer (kafka-console-share-consumer) stays in group
	// "workers" while it is described, once it has printed all 10 records.
	consumers := s.background(shareConsumer, append(bs, "--topic", "tasks", "--group", "workers")...)
	for i, c := range consumers {
		if err := c.awaitLines(10, time.Minute); err != nil {
			s.t.Fatalf("share consumer on %s: %v", s.targets[i].name, err)
		}
	}
	s.step("share list", shareGroupCommand, append(bs, "--list")...)
	s.step("share describe active", shareGroupCommand, append(bs, "--describe", "--group", "workers")...)
	s.step("share describe members", shareGroupCommand, append(bs, "--describe", "--group", "workers", "--members")...)
	s.step("share describe state", shareGroupCommand, append(bs, "--describe", "--group", "workers", "--state")...)
	for i, c := range consumers {
		if err := c.stop(); err != nil {
			s.t.Fatalf("share consumer on %s: %v", s.targets[i].name, err)
		}
	}
	s.record("share consume", consumers)
	s.step("share describe empty", shareGroupCommand, append(bs, "--describe", "--group", "workers")...)
	s.step("share reset dry-run", shareGroupCommand, append(bs, "--reset-offsets", "--group", "workers", "--topic", "tasks",
		"--to-earliest", "--dry-run")...)
	s.step("share delete", shareGroupCommand, append(bs, "--delete", "--group", "workers")...)
	s.step("share list after delete", shareGroupCommand, append(bs, "--list")...)
}

func perfSteps(s *session) {
	bs := []string{"--bootstrap-server", addrArg}
	s.step("perf topic create", topicCommand, append(bs, "--create", "--topic", "perf", "--partitions", "3")...)
	for i, r := range s.step("producer perf", producerPerf, "--topic", "perf", "--num-records", "20000", "--record-size", "100",
		"--throughput", "-1", "--bootstrap-server", addrArg, "--producer-props", "acks=all", "linger.ms=5") {
		if !regexp.MustCompile(`(?m)^20000 records sent,`).MatchString(r.stdout) {
			s.t.Errorf("producer perf on %s: no final \"20000 records sent\" line:\n%s", s.targets[i].name, r.stdout)
		}
	}
	for i, r := range s.step("consumer perf", consumerPerf, append(bs, "--topic", "perf", "--messages", "20000", "--timeout", "60000",
		"--group", "perf-group")...) {
		// start.time, end.time, data.consumed.in.MB, MB.sec,
		// data.consumed.in.nMsg, ...: the last line is the figures.
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		fields := strings.Split(lines[len(lines)-1], ", ")
		if len(fields) < 5 || fields[4] != "20000" {
			s.t.Errorf("consumer perf on %s: want data.consumed.in.nMsg 20000, got %q", s.targets[i].name, lines[len(lines)-1])
		}
	}
}

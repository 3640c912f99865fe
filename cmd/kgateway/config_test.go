package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// Precedence: default < file < environment < flag, with sources recorded.
func TestConfigPrecedence(t *testing.T) {
	file := filepath.Join(t.TempDir(), "server.properties")
	props := "# a comment\n\nnum.partitions=2\nlog.retention.ms = 1000\nlisten=127.0.0.1:1111\nauto.create.topics.enable=false\n"
	if err := os.WriteFile(file, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/bin", "KGATEWAY_LOG_RETENTION_MS=2000", "KGATEWAY_LISTEN=127.0.0.1:2222"}
	l, err := load("kgateway", []string{"--config", file, "--listen", "127.0.0.1:3333"}, env, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	c := l.cfg
	if c.NumPartitions != 2 || c.LogRetentionMs != 2000 || c.Listen != "127.0.0.1:3333" || c.AutoCreate || c.DataDir != "./data" {
		t.Fatalf("config %+v", c)
	}
	want := map[string]string{
		"num.partitions":            "file " + file + ":3",
		"log.retention.ms":          "env KGATEWAY_LOG_RETENTION_MS",
		"listen":                    "flag --listen",
		"auto.create.topics.enable": "file " + file + ":6",
		"data.dir":                  "default",
	}
	for k, v := range want {
		if l.sources[k] != v {
			t.Errorf("source of %s = %q, want %q", k, l.sources[k], v)
		}
	}
	// A bool flag without a value, over the file's false.
	l, err = load("kgateway", []string{"--config", file, "--auto-create-topics"}, nil, os.Stderr)
	if err != nil || !l.cfg.AutoCreate {
		t.Fatalf("bool flag: %v %v", l.cfg.AutoCreate, err)
	}
	// `kgateway config` prints the effective values with their sources.
	t.Setenv("KGATEWAY_NUM_PARTITIONS", "4")
	code, out, errOut := runCmd("config", "--config", file, "--log-format", "console")
	for _, w := range []string{"num.partitions=4", "# env KGATEWAY_NUM_PARTITIONS", "log.format=console", "# flag --log-format", "log.retention.ms=1000", "# file " + file + ":4"} {
		if code != 0 || !strings.Contains(out, w) {
			t.Errorf("config output lacks %q (exit %d):\n%s%s", w, code, out, errOut)
		}
	}
}

// Every problem is reported at once, from every source, naming each.
func TestConfigReportsEveryProblem(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bad.properties")
	if err := os.WriteFile(file, []byte("num.partitions=0\nno.such.thing=1\nlog.segment.bytes=abc\njust text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"KGATEWAY_LOG_FORMAT=xml"}
	_, err := load("kgateway", []string{"--config", file, "--log-level", "loud", "--max-request-bytes", "-1", "--slow-request-ms", "0", "--fetch-max-bytes", "1023"}, env, os.Stderr)
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{
		"--num-partitions (num.partitions): 0 out of range",
		`unknown property "no.such.thing"`,
		"log.segment.bytes: not an integer",
		`expected key=value, got "just text"`,
		"--log-format (log.format)",
		"--log-level (log.level)",
		"--max-request-bytes (socket.request.max.bytes)",
		"--slow-request-ms (slow.request.ms)",
		"--fetch-max-bytes (fetch.max.bytes): 1023 out of range",
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
	// Config.Validate alone joins its problems too.
	c := DefaultConfig()
	c.NumPartitions, c.LogRetentionBytes, c.DataDir = 0, 0, ""
	verr := c.Validate()
	if n := len(verr.(interface{ Unwrap() []error }).Unwrap()); n != 3 {
		t.Fatalf("%d problems, want 3: %v", n, verr)
	}
	if code, _, _ := runCmd("--num-partitions", "0", "--log-format", "xml"); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
}

// The variables Kubernetes injects for a Service named kgateway share the
// KGATEWAY_ prefix: unknown ones are logged and ignored, while a known
// variable with a bad value, an unknown --config property and an unknown
// flag stay errors.
func TestConfigUnknownEnvIsWarning(t *testing.T) {
	env := []string{"KGATEWAY_PORT=tcp://10.0.0.1:9092", "KGATEWAY_SERVICE_HOST=10.0.0.1",
		"KGATEWAY_PORT_9092_TCP=tcp://10.0.0.1:9092", "KGATEWAY_NUM_PARTITIONS=3"}
	l, err := load("kgateway", []string{"--data-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--metrics-addr", ""}, env, os.Stderr)
	if err != nil {
		t.Fatalf("Kubernetes service variables refused: %v", err)
	}
	if l.cfg.NumPartitions != 3 || strings.Join(l.unknownEnv, ",") != "KGATEWAY_PORT,KGATEWAY_SERVICE_HOST,KGATEWAY_PORT_9092_TCP" {
		t.Fatalf("num.partitions %d, unknown %v", l.cfg.NumPartitions, l.unknownEnv)
	}
	// serve logs each one at warn.
	core, logs := observer.New(zap.WarnLevel)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // start, then stop at once
	if err := serve(ctx, l, zap.New(core)); err != nil {
		t.Fatal(err)
	}
	warned := logs.FilterMessage("unknown-environment-variable-ignored")
	if warned.Len() != 3 || warned.All()[0].ContextMap()["name"] != "KGATEWAY_PORT" {
		t.Fatalf("warnings %v", warned.All())
	}
	// The other commands print them.
	t.Setenv("KGATEWAY_SERVICE_PORT", "9092")
	if code, _, errOut := runCmd("config"); code != 0 || !strings.Contains(errOut, "warning: ignoring unknown environment variable KGATEWAY_SERVICE_PORT") {
		t.Fatalf("config: exit %d, stderr %q", code, errOut)
	}
	// Still errors: a bad value, a file typo, a flag typo.
	if _, err := load("kgateway", nil, []string{"KGATEWAY_NUM_PARTITIONS=x"}, os.Stderr); err == nil {
		t.Fatal("bad value of a known variable accepted")
	}
	file := filepath.Join(t.TempDir(), "typo.properties")
	if err := os.WriteFile(file, []byte("num.partition=2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := load("kgateway", []string{"--config", file}, nil, os.Stderr); err == nil || !strings.Contains(err.Error(), `unknown property "num.partition"`) {
		t.Fatalf("file typo: %v", err)
	}
	if code, _, _ := runCmd("--num-partition", "2"); code != 2 {
		t.Fatalf("flag typo: exit %d, want 2", code)
	}
}

// The transaction settings map onto the coordinator's and are validated
// with the others.
func TestConfigTransactionSettings(t *testing.T) {
	l, err := load("kgateway", []string{"--transaction-max-timeout-ms", "60000", "--transactional-id-expiration-ms", "3600000"}, nil, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	tc := l.cfg.txnConfig()
	if tc.MaxTimeout != time.Minute || tc.IDExpiration != time.Hour || tc.AbortTimedOutInterval != 10*time.Second {
		t.Fatalf("txn config %+v", tc)
	}
	_, err = load("kgateway", []string{"--transaction-max-timeout-ms", "0", "--transaction-abort-timed-out-interval-ms", "-1"}, nil, os.Stderr)
	for _, want := range []string{"(transaction.max.timeout.ms)", "(transaction.abort.timed.out.transaction.cleanup.interval.ms)"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v does not name %s", err, want)
		}
	}
}

// The authorizer's decisions: authorizer.class.name accepts Kafka's two authorizers (both select
// the built-in one) and refuses any other; super.users needs TYPE:NAME.
func TestConfigAuthorizer(t *testing.T) {
	for _, name := range []string{"", "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"kafka.security.authorizer.AclAuthorizer"} {
		c := DefaultConfig()
		c.AuthorizerClassName, c.SuperUsers = name, "User:admin; User:ops"
		if err := c.Validate(); err != nil {
			t.Errorf("%q: %v", name, err)
		}
		if got := c.serverConfig(nil).Authorizer; got.ClassName != name || len(got.SuperUsers) != 2 || got.SuperUsers[1] != "User:ops" {
			t.Errorf("server config %+v", got)
		}
	}
	c := DefaultConfig()
	c.AuthorizerClassName, c.SuperUsers = "com.example.MyAuthorizer", "admin"
	err := c.Validate()
	for _, w := range []string{"--authorizer-class-name (authorizer.class.name)", "--super-users (super.users)"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, err)
		}
	}
}

// The consumer protocol's settings reach the coordinator and are held to
// Kafka's bounds.
func TestConfigConsumerGroupSettings(t *testing.T) {
	l, err := load("kgateway", []string{"--group-consumer-session-timeout-ms", "50000", "--group-consumer-heartbeat-interval-ms", "6000", "--group-consumer-assignors", "range,uniform"}, nil, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	gc := l.cfg.groupConfig()
	if gc.ConsumerSessionTimeout != 50*time.Second || gc.ConsumerHeartbeatInterval != 6*time.Second || strings.Join(gc.ConsumerAssignors, ",") != "range,uniform" {
		t.Fatalf("group config %+v", gc)
	}
	for _, args := range [][]string{
		{"--group-consumer-session-timeout-ms", "30000"},
		{"--group-consumer-heartbeat-interval-ms", "1000"},
		{"--group-consumer-assignors", "sticky"},
		{"--group-consumer-min-heartbeat-interval-ms", "6000"},
	} {
		if _, err := load("kgateway", args, nil, os.Stderr); err == nil || !strings.Contains(err.Error(), "group.consumer") {
			t.Fatalf("%v: error %v", args, err)
		}
	}
	// The bounds are settings too: a small test cluster may heartbeat fast.
	l, err = load("kgateway", []string{"--group-consumer-min-heartbeat-interval-ms", "100", "--group-consumer-heartbeat-interval-ms", "250",
		"--group-consumer-min-session-timeout-ms", "1000", "--group-consumer-session-timeout-ms", "3000"}, nil, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if gc := l.cfg.groupConfig(); gc.ConsumerHeartbeatInterval != 250*time.Millisecond || gc.ConsumerSessionTimeout != 3*time.Second || gc.Validate() != nil {
		t.Fatalf("group config %+v", gc)
	}
}

// The classic groups' session bounds and the offsets' retention reach the
// group coordinator and the offset store (and DescribeConfigs, which
// describes them from there); bounds out of order are refused.
func TestConfigGroupBoundsAndOffsetsRetention(t *testing.T) {
	l, err := load("kgateway", []string{"--group-min-session-timeout-ms", "1000", "--group-max-session-timeout-ms", "20000",
		"--offsets-retention-minutes", "90"}, nil, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if gc := l.cfg.groupConfig(); gc.MinSessionTimeout != time.Second || gc.MaxSessionTimeout != 20*time.Second {
		t.Fatalf("group config %v %v", gc.MinSessionTimeout, gc.MaxSessionTimeout)
	}
	if r := l.cfg.serverConfig(nil).Offsets.Retention; r != 90*time.Minute {
		t.Fatalf("offsets retention %v", r)
	}
	for _, args := range [][]string{
		{"--group-min-session-timeout-ms", "20000", "--group-max-session-timeout-ms", "1000"},
		{"--offsets-retention-minutes", "0"},
	} {
		if _, err := load("kgateway", args, nil, os.Stderr); err == nil {
			t.Fatalf("%v: accepted", args)
		}
	}
}

// The cluster settings reach the node's configuration: node.id is an
// int32 setting, parsed as one (a value past int32 is refused, not
// wrapped).
func TestConfigClusterSettings(t *testing.T) {
	l, err := load("kgateway", []string{"--node-id", "7", "--cluster-etcd-endpoints", "http://127.0.0.1:2379,http://127.0.0.2:2379",
		"--object-store-url", "file:///tmp/x", "--cluster-session-timeout-ms", "3000"}, nil, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	nc := l.cfg.clusterConfig(zap.NewNop())
	if nc == nil || nc.NodeID != 7 || len(nc.Endpoints) != 2 || nc.SessionTimeout != 3*time.Second {
		t.Fatalf("node config %+v", nc)
	}
	if _, err := load("kgateway", []string{"--node-id", "4294967297"}, nil, os.Stderr); err == nil || !strings.Contains(err.Error(), "node-id") {
		t.Fatalf("--node-id 4294967297: %v", err)
	}
}

package test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// kcatName is the command looked up on PATH (Debian's package installs it
// as /usr/bin/kcat, Homebrew under its own prefix).
const kcatName = "kcat"

// kcat runs kcat against addr with args and stdin, bounded by the test
// deadline, and returns its stdout.
func kcat(t *testing.T, addr, stdin string, args ...string) string {
	t.Helper()
	kcatPath, err := exec.LookPath(kcatName)
	if err != nil {
		t.Skip("kcat not on PATH (make deps)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcatPath, append([]string{"-b", addr}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("kcat %v: %v\nstderr:\n%s", args, err, errb.String())
	}
	return out.String()
}

// kcat -L lists our one broker at the advertised address, and the topics.
func TestKcatList(t *testing.T) {
	g := newGateway(t)
	g.createTopic("listed", 3)
	out := kcat(t, g.addr, "", "-L")
	for _, want := range []string{"1 brokers:", "broker 0 at " + g.addr, `topic "listed" with 3 partitions:`, "partition 2, leader 0, replicas: 0, isrs: 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("kcat -L output lacks %q:\n%s", want, out)
		}
	}
}

// kcat -P then -C round-trips keys, values and headers.
func TestKcatProduceConsume(t *testing.T) {
	g := newGateway(t)
	g.createTopic("kc", 1)
	var in strings.Builder
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&in, "key%d:value %d\n", i, i)
	}
	kcat(t, g.addr, in.String(), "-P", "-t", "kc", "-p", "0", "-K:", "-H", "h1=v1", "-H", "h2=v2")
	out := kcat(t, g.addr, "", "-C", "-t", "kc", "-o", "beginning", "-e", "-f", "%o|%k|%s|%h\n")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 20 {
		t.Fatalf("kcat -C printed %d lines:\n%s", len(lines), out)
	}
	for i, line := range lines {
		if want := fmt.Sprintf("%d|key%d|value %d|h1=v1,h2=v2", i, i, i); line != want {
			t.Fatalf("line %d = %q, want %q", i, line, want)
		}
	}
	// Records kcat wrote are readable by franz-go too.
	got := consumeN(t, g, "kc", 20)
	if string(got[3].Key) != "key3" || len(got[3].Headers) != 2 {
		t.Fatalf("franz-go read %+v", got[3])
	}
}

// kcat -Q answers offset-by-timestamp queries (ListOffsets).
func TestKcatQueryByTimestamp(t *testing.T) {
	g := newGateway(t)
	g.createTopic("times", 1)
	base := time.UnixMilli(1_600_000_000_000)
	prod := g.client(kgo.DefaultProduceTopic("times"), kgo.ProducerLinger(0))
	for i := 0; i < 5; i++ {
		// One record per produce: one batch per timestamp.
		r := &kgo.Record{Value: []byte("v"), Timestamp: base.Add(time.Duration(i) * time.Minute)}
		if err := prod.ProduceSync(testCtx(t), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	ts := base.Add(2*time.Minute + time.Second).UnixMilli() // first batch at or after: offset 3
	out := kcat(t, g.addr, "", "-Q", "-t", fmt.Sprintf("times:0:%d", ts))
	if want := "times [0] offset 3"; !strings.Contains(out, want) {
		t.Fatalf("kcat -Q printed %q, want %q", out, want)
	}
	out = kcat(t, g.addr, "", "-Q", "-t", fmt.Sprintf("times:0:%d", base.Add(time.Hour).UnixMilli()))
	if want := "times [0] offset -1"; !strings.Contains(out, want) {
		t.Fatalf("kcat -Q past the end printed %q, want %q", out, want)
	}
}

// librdkafka as an idempotent producer (InitProducerId, sequences) with
// every codec; zstd needs Produce v7+ and Fetch v10+.
func TestKcatIdempotentCodecs(t *testing.T) {
	g := newGateway(t)
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		topic := "kc-" + codec
		g.createTopic(topic, 1)
		var in strings.Builder
		for i := 0; i < 50; i++ {
			fmt.Fprintf(&in, "%s record %d\n", codec, i)
		}
		kcat(t, g.addr, in.String(), "-P", "-t", topic, "-z", codec, "-X", "enable.idempotence=true")
		out := kcat(t, g.addr, "", "-C", "-t", topic, "-o", "beginning", "-e", "-X", "check.crcs=true", "-f", "%o %s\n")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 50 || lines[49] != fmt.Sprintf("49 %s record 49", codec) {
			t.Fatalf("%s: kcat -C printed %d lines, last %q", codec, len(lines), lines[len(lines)-1])
		}
	}
}

// --advertised-addr is what Metadata names, whatever the client dialed.
func TestKcatListAdvertised(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{advertised: "kgw.example:19092"})
	out := kcat(t, g.addr, "", "-L")
	if !strings.Contains(out, "broker 0 at kgw.example:19092") {
		t.Fatalf("kcat -L:\n%s", out)
	}
}

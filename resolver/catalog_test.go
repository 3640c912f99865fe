package resolver

import (
	"errors"
	"strings"
	"testing"

	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/topicconfig"
)

func TestCreateTopicValidation(t *testing.T) {
	g := newGateway(t, Config{NumPartitions: 3})
	g.create("exists", 1, nil)
	for _, tc := range []struct {
		name        string
		topic       string
		partitions  int32
		replication int16
		configs     map[string]string
		want        error
		wantParts   int32
		msg         string // substring of the error
	}{
		{name: "ok", topic: "a.b_c-D9", partitions: 2, replication: 1, wantParts: 2},
		{name: "default partitions", topic: "dflt", partitions: -1, replication: -1, wantParts: 3},
		{name: "max length", topic: strings.Repeat("x", 249), partitions: 1, replication: 1, wantParts: 1},
		{name: "too long", topic: strings.Repeat("x", 250), partitions: 1, replication: 1, want: ErrInvalidTopic},
		{name: "empty", topic: "", partitions: 1, replication: 1, want: ErrInvalidTopic},
		{name: "dot", topic: ".", partitions: 1, replication: 1, want: ErrInvalidTopic},
		{name: "dotdot", topic: "..", partitions: 1, replication: 1, want: ErrInvalidTopic},
		{name: "slash", topic: "a/b", partitions: 1, replication: 1, want: ErrInvalidTopic},
		{name: "space", topic: "a b", partitions: 1, replication: 1, want: ErrInvalidTopic},
		{name: "exists", topic: "exists", partitions: 1, replication: 1, want: ErrTopicExists},
		{name: "zero partitions", topic: "p0", partitions: 0, replication: 1, want: ErrInvalidPartitions},
		{name: "negative partitions", topic: "pn", partitions: -2, replication: 1, want: ErrInvalidPartitions},
		{name: "replication 2", topic: "r2", partitions: 1, replication: 2, want: ErrInvalidReplication},
		{name: "replication 0", topic: "r0", partitions: 1, replication: 0, want: ErrInvalidReplication},
		{name: "known configs", topic: "cfg", partitions: 1, replication: 1, wantParts: 1, configs: map[string]string{
			"retention.ms": "1000", "retention.bytes": "-1", "segment.bytes": "1048576", "segment.ms": "60000",
			"max.message.bytes": "2000", "message.timestamp.type": "LogAppendTime", "cleanup.policy": "delete",
			"min.insync.replicas": "1",
		}},
		{name: "unknown config", topic: "c1", partitions: 1, replication: 1, configs: map[string]string{"no.such": "1"}, want: ErrInvalidConfig, msg: "unknown"},
		{name: "compact", topic: "c2", partitions: 1, replication: 1, wantParts: 1, configs: map[string]string{"cleanup.policy": "compact"}},
		{name: "compact,delete", topic: "c3", partitions: 1, replication: 1, wantParts: 1, configs: map[string]string{"cleanup.policy": "delete,compact"}},
		{name: "bad policy", topic: "c8", partitions: 1, replication: 1, configs: map[string]string{"cleanup.policy": "shred"}, want: ErrInvalidConfig, msg: "not a cleanup policy"},
		{name: "bad number", topic: "c4", partitions: 1, replication: 1, configs: map[string]string{"retention.ms": "soon"}, want: ErrInvalidConfig},
		{name: "below minimum", topic: "c5", partitions: 1, replication: 1, configs: map[string]string{"retention.ms": "-2"}, want: ErrInvalidConfig},
		{name: "bad timestamp type", topic: "c6", partitions: 1, replication: 1, configs: map[string]string{"message.timestamp.type": "Now"}, want: ErrInvalidConfig},
		{name: "min isr 0", topic: "c7", partitions: 1, replication: 1, configs: map[string]string{"min.insync.replicas": "0"}, want: ErrInvalidConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// validateOnly first: same verdict, nothing created.
			_, verr := g.r.CreateTopic(tc.topic, tc.partitions, tc.replication, tc.configs, true)
			if !isErr(verr, tc.want) {
				t.Fatalf("validateOnly: got %v, want %v", verr, tc.want)
			}
			if _, ok := g.r.Topic(tc.topic); ok && tc.topic != "exists" {
				t.Fatalf("validateOnly created %q", tc.topic)
			}
			tp, err := g.r.CreateTopic(tc.topic, tc.partitions, tc.replication, tc.configs, false)
			if !isErr(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if err != nil {
				if tc.msg != "" && !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("error %q lacks %q", err, tc.msg)
				}
				return
			}
			if tp.Partitions != tc.wantParts || tp.Name != tc.topic {
				t.Fatalf("got %+v", tp)
			}
			if tp.ID[6]>>4 != 4 || tp.ID[8]>>6 != 2 {
				t.Fatalf("topic id %s is not a UUID v4", tp.ID)
			}
			if got, ok := g.r.TopicByID(tp.ID); !ok || got.Name != tc.topic {
				t.Fatalf("TopicByID: %+v %v", got, ok)
			}
		})
	}
}

func TestCatalogReloadAndDelete(t *testing.T) {
	g := newGateway(t, Config{})
	a := g.create("a", 3, map[string]string{"retention.ms": "5000"})
	b := g.create("b", 1, nil)
	g.produce("a", 2, plain(2, 10).encode())
	g.produce("b", 0, plain(1, 10).encode())

	g.reopen()
	for _, want := range []Topic{a, b} {
		got, ok := g.r.Topic(want.Name)
		if !ok || got.ID != want.ID || got.Partitions != want.Partitions || len(got.Configs) != len(want.Configs) {
			t.Fatalf("after reopen %s: got %+v, want %+v", want.Name, got, want)
		}
	}
	if got := g.r.Topics(); len(got) != 2 {
		t.Fatalf("Topics: %d", len(got))
	}
	if _, hwm, _, _ := g.r.Bounds("a", 2); hwm != 2 {
		t.Fatalf("a/2 hwm %d after reopen", hwm)
	}

	// Delete removes binding and logs; a recreated topic is new and empty.
	logsBefore := len(g.store.Logs())
	if err := g.r.DeleteTopic("a"); err != nil {
		t.Fatal(err)
	}
	if err := g.r.DeleteTopic("a"); !errors.Is(err, ErrUnknownTopic) {
		t.Fatalf("second delete: %v", err)
	}
	if n := len(g.store.Logs()); n != logsBefore-3 {
		t.Fatalf("logs after delete: %d, want %d", n, logsBefore-3)
	}
	if _, err := g.r.Produce("a", 0, plain(1, 1).encode()); !errors.Is(err, ErrUnknownTopic) {
		t.Fatalf("produce to deleted: %v", err)
	}
	a2 := g.create("a", 3, nil)
	if a2.ID == a.ID {
		t.Fatal("recreated topic reuses the id")
	}
	if _, hwm, _, _ := g.r.Bounds("a", 2); hwm != 0 {
		t.Fatalf("recreated a/2 hwm %d", hwm)
	}
	g.reopen()
	if got, ok := g.r.Topic("a"); !ok || got.ID != a2.ID {
		t.Fatalf("after reopen: %+v", got)
	}
	if _, ok := g.r.TopicByID(a.ID); ok {
		t.Fatal("old id still bound")
	}
	if n := len(g.store.Logs()); n != 4 {
		t.Fatalf("logs: %d, want 4 (no reuse, no leak)", n)
	}
}

func TestInterruptedDeleteFinishesOnOpen(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("gone", 2, nil)
	logs := []uint64{}
	for _, p := range mustTopic(t, g.r, "gone").parts {
		logs = append(logs, uint64(p.log))
	}
	// The first step of DeleteTopic only: binding removed, logs marked.
	g.r.adminMu.Lock()
	err := g.r.removeBindingLocked("gone", []storage.LogID{storage.LogID(logs[0]), storage.LogID(logs[1])})
	g.r.adminMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	g.crashReopen()
	if _, ok := g.r.Topic("gone"); ok {
		t.Fatal("topic survived")
	}
	if n := len(g.store.Logs()); n != 0 {
		t.Fatalf("%d logs left", n)
	}
}

func TestEnsureTopic(t *testing.T) {
	off := newGateway(t, Config{})
	if _, err := off.r.EnsureTopic("x"); !errors.Is(err, ErrUnknownTopic) {
		t.Fatalf("auto-create off: %v", err)
	}
	on := newGateway(t, Config{AutoCreate: true, NumPartitions: 4})
	if _, err := on.r.EnsureTopic("bad/name"); !errors.Is(err, ErrInvalidTopic) {
		t.Fatalf("bad name: %v", err)
	}
	tp, err := on.r.EnsureTopic("x")
	if err != nil || tp.Partitions != 4 {
		t.Fatalf("auto-create: %+v %v", tp, err)
	}
	again, err := on.r.EnsureTopic("x")
	if err != nil || again.ID != tp.ID {
		t.Fatalf("second ensure: %+v %v", again, err)
	}
}

func TestAlterConfigsAndPartitions(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	big := plain(1, 1)
	big.value = make([]byte, 3000)
	g.produce("t", 0, big.encode())
	if err := g.r.AlterTopicConfigs("t", map[string]string{"max.message.bytes": "1000", "segment.bytes": "4096"}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := g.r.Produce("t", 0, big.encode()); !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("after alter: %v", err)
	}
	if err := g.r.AlterTopicConfigs("t", map[string]string{"cleanup.policy": "shred"}, false); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("alter shred: %v", err)
	}
	entries, err := g.r.TopicConfigs("t")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]topicconfig.Entry{}
	for _, e := range entries {
		seen[e.Name] = e
	}
	if e := seen["max.message.bytes"]; e.Value != "1000" || e.Default {
		t.Fatalf("max.message.bytes: %+v", e)
	}
	if e := seen["retention.ms"]; e.Value != "604800000" || !e.Default {
		t.Fatalf("retention.ms: %+v", e)
	}
	if err := g.r.CreatePartitions("t", 3, false); err != nil {
		t.Fatal(err)
	}
	if err := g.r.CreatePartitions("t", 2, false); !errors.Is(err, ErrInvalidPartitions) {
		t.Fatalf("shrink: %v", err)
	}
	g.produce("t", 2, plain(1, 1).encode())
	g.reopen()
	tp, _ := g.r.Topic("t")
	if tp.Partitions != 3 || tp.Configs["max.message.bytes"] != "1000" {
		t.Fatalf("after reopen: %+v", tp)
	}
	if _, err := g.r.Produce("t", 0, big.encode()); !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("after reopen: %v", err)
	}
}

func mustTopic(t *testing.T, r *Resolver, name string) *topic {
	t.Helper()
	r.mu.RLock()
	defer r.mu.RUnlock()
	tp, ok := r.mu.topics[name]
	if !ok {
		t.Fatalf("no topic %s", name)
	}
	return tp
}

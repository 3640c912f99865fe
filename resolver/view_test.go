package resolver

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kgateway/kgateway/topicconfig"
)

// viewLogs lists the store's view logs.
func viewLogs(g *gateway) int {
	n := 0
	for _, l := range g.store.Logs() {
		if l&viewLogBit != 0 {
			n++
		}
	}
	return n
}

// The compacted view (the compacted view rules): a delete-policy topic keeps its full
// history while its companion serves the latest committed record per key
// at the source's offsets, with the tail past the view from the source;
// the companion is listed, has its own id, refuses produce and its name;
// tombstones go after delete.retention.ms; a restart keeps the view;
// turning the config off and deleting the topic remove it.
func TestCompactedView(t *testing.T) {
	c := fixedClock(1_000_000)
	g := compactGateway(t, c, CleanerConfig{})
	src := g.create("s", 1, map[string]string{topicconfig.CompactedView: "true", "segment.bytes": "600", "delete.retention.ms": "1000"})
	m := model{}
	produced := 0
	for i := range 60 {
		k := fmt.Sprintf("k%d", i%7)
		r := rec(k, fmt.Sprintf("v%d", i), c.millis())
		if i%9 == 8 {
			r = tomb(k, c.millis())
		}
		base := g.produce("s", 0, kvBatch(r)).BaseOffset
		m[k] = gotRecord{off: base, key: k, value: string(r.value), tomb: r.tomb}
		produced++
		c.advance(1)
	}
	// An aborted and a committed transaction (the view log: only committed data).
	if err := g.r.AddTxnPartition("s", 0, 50, 0); err != nil {
		t.Fatal(err)
	}
	g.produce("s", 0, kvTxnBatch(50, 0, 0, rec("k1", "aborted", c.millis())))
	if err := g.r.WriteTxnMarker("s", 0, 50, 0, false, 0); err != nil {
		t.Fatal(err)
	}
	if err := g.r.AddTxnPartition("s", 0, 51, 0); err != nil {
		t.Fatal(err)
	}
	base := g.produce("s", 0, kvTxnBatch(51, 0, 0, rec("k2", "committed", c.millis()))).BaseOffset
	m["k2"] = gotRecord{off: base, key: "k2", value: "committed"}
	if err := g.r.WriteTxnMarker("s", 0, 51, 0, true, 0); err != nil {
		t.Fatal(err)
	}
	produced += 2
	rollPartition(t, g, "s")
	if err := g.r.Passes().RunCleaner(c.now()); err != nil {
		t.Fatal(err)
	}

	// The companion topic: listed, its own id, found by id and by name.
	comp, ok := g.r.Topic("s.compacted")
	if !ok || !comp.Companion || comp.ID == src.ID || comp.Partitions != 1 {
		t.Fatalf("companion %+v %v", comp, ok)
	}
	if byID, ok := g.r.TopicByID(comp.ID); !ok || byID.Name != "s.compacted" {
		t.Fatalf("companion by id: %+v %v", byID, ok)
	}
	if name, parts, ok := g.r.TopicNameByID(comp.ID); !ok || name != "s.compacted" || parts != 1 {
		t.Fatalf("companion name by id: %q %d %v", name, parts, ok)
	}
	if name, parts, ok := g.r.TopicNameByID(src.ID); !ok || name != "s" || parts != 1 {
		t.Fatalf("name by id: %q %d %v", name, parts, ok)
	}
	listed := false
	for _, tp := range g.r.Topics() {
		listed = listed || tp.Name == "s.compacted"
	}
	if !listed {
		t.Fatal("companion not in Topics")
	}
	// Described by its source's configs.
	if es, err := g.r.TopicConfigs("s.compacted"); err != nil || !hasEntry(es, topicconfig.CompactedView, "true", topicconfig.SourceTopic) {
		t.Fatalf("companion configs: %v %+v", err, es)
	}
	// Read-only companions: read-only. No name collisions: its name is taken.
	if _, err := g.r.Produce("s.compacted", 0, kvBatch(rec("k", "v", 1))); !errors.Is(err, ErrInvalidTopic) {
		t.Fatalf("produce to the companion: %v, want ErrInvalidTopic", err)
	}
	if _, err := g.r.CreateTopic("s.compacted", 1, 1, nil, false); !errors.Is(err, ErrTopicExists) {
		t.Fatalf("create the companion's name: %v", err)
	}
	if err := g.r.DeleteTopic("s.compacted"); !errors.Is(err, ErrInvalidTopic) {
		t.Fatalf("delete the companion: %v", err)
	}

	// Reads of the view: the view, latest committed per key, tombstones kept.
	checkCompacted(t, readAll(t, g, "s.compacted"), m, true)
	if n := len(readAll(t, g, "s")); n != produced {
		t.Fatalf("the source reads %d records, %d were produced: it must keep its history", n, produced)
	}
	if res, err := g.r.Fetch("s.compacted", 0, 0, 1<<20, true, ReadCommitted); err != nil || res.Aborted != nil {
		t.Fatalf("read_committed of the view: %v, aborted %v", err, res.Aborted)
	}

	// The tail past the view comes from the source.
	tail := g.produce("s", 0, kvBatch(rec("tail", "t", c.millis()))).BaseOffset
	got := readAll(t, g, "s.compacted")
	if last := got[len(got)-1]; last.off != tail || last.key != "tail" {
		t.Fatalf("companion ends with %+v, want the tail record at %d", last, tail)
	}
	m["tail"] = gotRecord{off: tail, key: "tail", value: "t"}

	// The tombstone horizon in the view: tombstones go after their horizon.
	c.advance(1001)
	rollPartition(t, g, "s")
	if err := g.r.Passes().RunCleaner(c.now()); err != nil {
		t.Fatal(err)
	}
	checkCompacted(t, readAll(t, g, "s.compacted"), m, false)

	// The durable view: a restart keeps the view, after a crash too.
	g.reopen()
	checkCompacted(t, readAll(t, g, "s.compacted"), m, false)
	g.crashReopen()
	checkCompacted(t, readAll(t, g, "s.compacted"), m, false)

	// A pass that copies more (its scan mark is kept in memory).
	late := g.produce("s", 0, kvBatch(rec("late", "l", c.millis()))).BaseOffset
	m["late"] = gotRecord{off: late, key: "late", value: "l"}
	rollPartition(t, g, "s")
	if err := g.r.Passes().RunCleaner(c.now()); err != nil {
		t.Fatal(err)
	}
	// View removal: turned off, the view and its companion go.
	if err := g.r.AlterTopicConfigs("s", map[string]string{"delete.retention.ms": "1000"}, false); err != nil {
		t.Fatal(err)
	}
	if _, ok := g.r.Topic("s.compacted"); ok || viewLogs(g) != 0 {
		t.Fatalf("after turning the view off: companion %v, %d view logs", ok, viewLogs(g))
	}
	if _, err := g.r.CreateTopic("x", 1, 1, nil, false); err != nil {
		t.Fatal(err)
	}
	if _, err := g.r.CreateTopic("x.compacted", 1, 1, nil, false); err != nil {
		t.Fatal(err)
	}
	if err := g.r.AlterTopicConfigs("x", map[string]string{topicconfig.CompactedView: "true"}, false); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("a view whose companion name is a topic's: %v", err)
	}
	if err := g.r.AlterTopicConfigs("s", map[string]string{topicconfig.CompactedView: "true", "cleanup.policy": "compact"}, false); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("a view of a compacted topic: %v", err)
	}
	// View removal: deleting the source removes the view.
	if err := g.r.AlterTopicConfigs("s", map[string]string{topicconfig.CompactedView: "true"}, false); err != nil {
		t.Fatal(err)
	}
	if err := g.r.Passes().RunCleaner(c.now()); err != nil {
		t.Fatal(err)
	}
	if viewLogs(g) != 1 {
		t.Fatalf("%d view logs after turning it on again", viewLogs(g))
	}
	// A new view: its tombstones were first cleaned now (the tombstone horizon).
	checkCompacted(t, readAll(t, g, "s.compacted"), m, true)
	if err := g.r.DeleteTopic("s"); err != nil {
		t.Fatal(err)
	}
	if _, ok := g.r.Topic("s.compacted"); ok || viewLogs(g) != 0 {
		t.Fatalf("after deleting the source: companion %v, %d view logs", ok, viewLogs(g))
	}
}

func hasEntry(es []topicconfig.Entry, name, value string, src topicconfig.Source) bool {
	for _, e := range es {
		if e.Name == name {
			return e.Value == value && e.Source == src
		}
	}
	return false
}

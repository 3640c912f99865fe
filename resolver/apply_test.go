package resolver

import (
	"maps"
	"testing"

	"github.com/kgateway/kgateway/topicconfig"
)

// TestApplyTopic: applying a shared record creates the topic with exactly
// its id, is idempotent, grows partitions, replaces configs, survives a
// reopen, and a record with another id replaces the topic and its data.
func TestApplyTopic(t *testing.T) {
	g := newGateway(t, Config{RetentionCheckInterval: -1})
	id := TopicID{1, 2, 3}
	apply := func(id TopicID, parts int32, configs map[string]string) {
		t.Helper()
		if err := g.r.ApplyTopic("t", id, parts, configs); err != nil {
			t.Fatalf("ApplyTopic: %v", err)
		}
	}
	check := func(id TopicID, parts int32, configs map[string]string) {
		t.Helper()
		tp, ok := g.r.Topic("t")
		if !ok || tp.ID != id || tp.Partitions != parts || !maps.Equal(tp.Configs, configs) {
			t.Fatalf("topic = %+v, %v; want id %s, %d partitions, configs %v", tp, ok, id, parts, configs)
		}
		if by, ok := g.r.TopicByID(id); !ok || by.Name != "t" {
			t.Fatalf("TopicByID(%s) = %+v, %v", id, by, ok)
		}
	}
	apply(id, 2, nil)
	check(id, 2, nil)
	g.produce("t", 1, plain(3, 1000).encode())
	apply(id, 2, nil) // idempotent: the data stays
	check(id, 2, nil)
	if got := g.fetch("t", 1, 0, 1<<20); len(got.Batches) != 1 {
		t.Fatalf("after a repeated apply: %d batches, want 1", len(got.Batches))
	}
	cfg := map[string]string{"retention.ms": "1000"}
	apply(id, 4, cfg)
	check(id, 4, cfg)
	g.produce("t", 3, plain(1, 1000).encode()) // a grown partition takes appends
	if err := g.r.ApplyTopic("t", id, 3, cfg); !isErr(err, ErrInvalidPartitions) {
		t.Fatalf("shrinking apply: %v, want ErrInvalidPartitions", err)
	}
	g.reopen()
	check(id, 4, cfg)

	// Deleted and created again in the shared catalog: a new id.
	id2 := TopicID{9, 9}
	apply(id2, 1, nil)
	check(id2, 1, nil)
	if _, ok := g.r.TopicByID(id); ok {
		t.Fatal("the old id is still bound")
	}
	if got := g.fetch("t", 0, 0, 1<<20); len(got.Batches) != 0 {
		t.Fatalf("the replaced topic's data is readable: %d batches", len(got.Batches))
	}
	g.reopen()
	check(id2, 1, nil)

	if err := g.r.ApplyTopic("u", id2, 1, nil); !isErr(err, ErrTopicExists) {
		t.Fatalf("apply of an id bound to another name: %v, want ErrTopicExists", err)
	}
	if err := g.r.ApplyTopic("v", TopicID{7}, 1, map[string]string{"retention.ms": "x"}); !isErr(err, ErrInvalidConfig) {
		t.Fatalf("apply of a bad config: %v, want ErrInvalidConfig", err)
	}
	if err := g.r.ApplyTopic(OffsetsTopic, TopicID{8}, 1, nil); !isErr(err, ErrInvalidTopic) {
		t.Fatalf("apply of an internal topic: %v, want ErrInvalidTopic", err)
	}
}

// TestPlanIncrementalAlter: the plan is the set the alter would leave,
// validated, and nothing changes.
func TestPlanIncrementalAlter(t *testing.T) {
	g := newGateway(t, Config{RetentionCheckInterval: -1})
	g.create("t", 1, map[string]string{"retention.ms": "1000", "cleanup.policy": "delete"})
	ops := []topicconfig.Op{
		{Name: "retention.ms", Op: topicconfig.OpDelete},
		{Name: "cleanup.policy", Op: topicconfig.OpAppend, Value: "compact"},
		{Name: "segment.ms", Op: topicconfig.OpSet, Value: "5000"},
	}
	plan, err := g.r.PlanIncrementalAlter("t", ops)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"cleanup.policy": "delete,compact", "segment.ms": "5000"}
	if !maps.Equal(plan, want) {
		t.Fatalf("plan = %v, want %v", plan, want)
	}
	if tp, _ := g.r.Topic("t"); !maps.Equal(tp.Configs, map[string]string{"retention.ms": "1000", "cleanup.policy": "delete"}) {
		t.Fatalf("planning changed the topic: %v", tp.Configs)
	}
	if err := g.r.IncrementalAlterTopicConfigs("t", ops, false); err != nil {
		t.Fatal(err)
	}
	if tp, _ := g.r.Topic("t"); !maps.Equal(tp.Configs, want) {
		t.Fatalf("after the alter: %v, want the plan %v", tp.Configs, want)
	}
	if _, err := g.r.PlanIncrementalAlter("t", []topicconfig.Op{{Name: "retention.ms", Value: "-5"}}); !isErr(err, ErrInvalidConfig) {
		t.Fatalf("bad plan: %v, want ErrInvalidConfig", err)
	}
	if _, err := g.r.PlanIncrementalAlter("nope", ops); !isErr(err, ErrUnknownTopic) {
		t.Fatalf("plan of no topic: %v, want ErrUnknownTopic", err)
	}
}

package resolver

import (
	"encoding/base64"
	"testing"
)

// The durable cluster id: a random cluster id in Kafka's form, made once per data directory
// and kept across a clean reopen and a crash; another directory gets
// another id.
func TestClusterIDKeptPerDataDir(t *testing.T) {
	g := newGateway(t, Config{})
	id := g.r.ClusterID()
	raw, err := base64.RawURLEncoding.DecodeString(id)
	if len(id) != 22 || err != nil || len(raw) != 16 || raw[6]>>4 != 4 || id[0] == '-' {
		t.Fatalf("cluster id %q (%v): not a base64url UUID v4", id, err)
	}
	offsetsID, ok := g.r.InternalTopicID(OffsetsTopic)
	if !ok || offsetsID == (TopicID{}) {
		t.Fatalf("no id for %s", OffsetsTopic)
	}
	g.reopen()
	g.crashReopen()
	if got, _ := g.r.InternalTopicID(OffsetsTopic); g.r.ClusterID() != id || got != offsetsID {
		t.Fatalf("after reopens: cluster id %q, offsets id %v; want %q, %v", g.r.ClusterID(), got, id, offsetsID)
	}
	if other := newGateway(t, Config{}); other.r.ClusterID() == id {
		t.Fatalf("two data directories share cluster id %q", id)
	}
}

// Reserved internal topic names: the internal topic names are never bound, by any path, and each has
// a topic id kept across a reopen.
func TestInternalTopicNeverBound(t *testing.T) {
	g := newGateway(t, Config{AutoCreate: true})
	for _, name := range []string{"__consumer_offsets", "__transaction_state"} {
		if !IsInternalTopic(name) {
			t.Fatalf("%s is not internal", name)
		}
		if _, err := g.r.CreateTopic(name, 1, 1, nil, false); !isErr(err, ErrTopicExists) {
			t.Fatalf("create %s: %v, want ErrTopicExists", name, err)
		}
		if _, err := g.r.EnsureTopic(name); !isErr(err, ErrInvalidTopic) {
			t.Fatalf("ensure %s: %v, want ErrInvalidTopic", name, err)
		}
		if err := g.r.DeleteTopic(name); !isErr(err, ErrInvalidTopic) {
			t.Fatalf("delete %s: %v, want ErrInvalidTopic", name, err)
		}
		if _, ok := g.r.Topic(name); ok || len(g.r.Topics()) != 0 {
			t.Fatalf("%s bound: %+v", name, g.r.Topics())
		}
		id, ok := g.r.InternalTopicID(name)
		if !ok || id == (TopicID{}) {
			t.Fatalf("no id for %s", name)
		}
		if got, ok := g.r.InternalTopicByID(id); !ok || got != name {
			t.Fatalf("InternalTopicByID(%v) = %q, %v; want %q", id, got, ok, name)
		}
		g.reopen()
		if got, _ := g.r.InternalTopicID(name); got != id {
			t.Fatalf("%s id %v after reopen, want %v", name, got, id)
		}
	}
}

// An id that is no internal topic's is not found as one.
func TestInternalTopicByIDOnlyInternal(t *testing.T) {
	g := newGateway(t, Config{})
	tp, err := g.r.CreateTopic("t", 1, 1, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if name, ok := g.r.InternalTopicByID(tp.ID); ok {
		t.Fatalf("topic t found as internal topic %q", name)
	}
	if name, parts, ok := g.r.TopicNameByID(TopicID{1}); ok {
		t.Fatalf("unknown id found: %q %d", name, parts)
	}
}

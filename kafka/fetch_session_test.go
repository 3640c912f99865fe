package kafka

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kgateway/kgateway/resolver"
)

// sessionRig is a server over a real resolver, a raw connection to it and
// a franz-go producer for putting records in.
type sessionRig struct {
	t    *testing.T
	res  *resolver.Resolver
	s    *Server
	c    *rawConn
	prod *kgo.Client
	corr int32
}

func newSessionRig(t *testing.T, cfg Config, topics map[string]int32) *sessionRig {
	t.Helper()
	res := openResolver(t)
	for name, parts := range topics {
		if _, err := res.CreateTopic(name, parts, 1, nil, false); err != nil {
			t.Fatal(err)
		}
	}
	cfg.Resolver = res
	s := startServer(t, cfg)
	prod, err := kgo.NewClient(kgo.SeedBrokers(s.Addr().String()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prod.Close)
	return &sessionRig{t: t, res: res, s: s, c: dialRaw(t, s.Addr()), prod: prod}
}

func (g *sessionRig) produce(topic string, partition int32) {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	r := &kgo.Record{Topic: topic, Partition: partition, Value: []byte("v")}
	if err := g.prod.ProduceSync(ctx, r).FirstErr(); err != nil {
		g.t.Fatal(err)
	}
}

// fetch sends req (no waiting: MaxWait 0) and returns the response.
func (g *sessionRig) fetch(req *kmsg.FetchRequest) *kmsg.FetchResponse {
	g.t.Helper()
	g.corr++
	g.c.send(g.corr, req)
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	resp.SetVersion(req.Version)
	if got := g.c.recv(resp); got != g.corr {
		g.t.Fatalf("correlation id %d, want %d", got, g.corr)
	}
	return resp
}

type fetchPart struct {
	topic     string
	partition int32
	offset    int64
}

func fetchReq(id, epoch int32, parts []fetchPart, forget []fetchPart) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(12)
	req.MaxBytes = 50 << 20
	req.SessionID, req.SessionEpoch = id, epoch
	for _, p := range parts {
		if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != p.topic {
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic = p.topic
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p.partition, p.offset, 1<<20
		rt := &req.Topics[len(req.Topics)-1]
		rt.Partitions = append(rt.Partitions, rp)
	}
	for _, p := range forget {
		ft := kmsg.NewFetchRequestForgottenTopic()
		ft.Topic, ft.Partitions = p.topic, []int32{p.partition}
		req.ForgottenTopics = append(req.ForgottenTopics, ft)
	}
	return req
}

// answered lists "topic/partition" of every partition in resp, with
// whether it carries records.
func answered(resp *kmsg.FetchResponse) map[string]bool {
	out := map[string]bool{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out[fmt.Sprintf("%s/%d", t.Topic, p.Partition)] = len(p.RecordBatches) > 0
		}
	}
	return out
}

func parts(topic string, n int32) []fetchPart {
	var out []fetchPart
	for i := range n {
		out = append(out, fetchPart{topic: topic, partition: i})
	}
	return out
}

// A full fetch opens a session; incremental fetches carry only partitions
// with something new, pick up altered fetch offsets and added partitions,
// and stop carrying forgotten ones.
func TestFetchSessionIncremental(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"a": 4, "b": 2})
	g.produce("a", 1)

	full := g.fetch(fetchReq(0, 0, parts("a", 4), nil))
	if full.ErrorCode != 0 || full.SessionID == 0 {
		t.Fatalf("full fetch: error %d, session %d", full.ErrorCode, full.SessionID)
	}
	if got := answered(full); len(got) != 4 || !got["a/1"] {
		t.Fatalf("full fetch answered %v, want all 4 partitions, a/1 with records", got)
	}
	id := full.SessionID

	// Nothing changed and the client moved nothing: a/1 still has the
	// same record at the cached offset 0, so it comes again; others not.
	inc := g.fetch(fetchReq(id, 1, nil, nil))
	if inc.ErrorCode != 0 || inc.SessionID != id {
		t.Fatalf("incremental: error %d, session %d (want %d)", inc.ErrorCode, inc.SessionID, id)
	}
	if got := answered(inc); len(got) != 1 || !got["a/1"] {
		t.Fatalf("incremental answered %v, want only a/1", got)
	}

	// The client consumed a/1 (offset 1 now) and adds b/0.
	inc = g.fetch(fetchReq(id, 2, []fetchPart{{"a", 1, 1}, {"b", 0, 0}}, nil))
	if got := answered(inc); len(got) != 1 || got["b/0"] {
		t.Fatalf("after moving a/1 and adding b/0: answered %v, want only b/0 (new, empty)", got)
	}

	// New data on a/2 and b/0: exactly those come back, with records.
	g.produce("a", 2)
	g.produce("b", 0)
	inc = g.fetch(fetchReq(id, 3, nil, nil))
	if got := answered(inc); len(got) != 2 || !got["a/2"] || !got["b/0"] {
		t.Fatalf("after producing to a/2 and b/0: answered %v", got)
	}

	// Forget b/0: a new record there is no longer reported; a/3's is.
	g.produce("b", 0)
	g.produce("a", 3)
	inc = g.fetch(fetchReq(id, 4, []fetchPart{{"a", 2, 1}}, []fetchPart{{"b", 0, 0}}))
	if got := answered(inc); len(got) != 1 || !got["a/3"] {
		t.Fatalf("after forgetting b/0: answered %v, want only a/3", got)
	}
}

// The session epoch check and session open and close by epoch: unknown ids and wrong epochs are top-level errors that leave
// the session as it was; epoch -1 closes a session, and epoch 0 with an
// id replaces it.
func TestFetchSessionErrors(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"a": 2})
	id := g.fetch(fetchReq(0, 0, parts("a", 2), nil)).SessionID

	if resp := g.fetch(fetchReq(id+1, 1, nil, nil)); resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("unknown session: error %d", resp.ErrorCode)
	}
	for _, epoch := range []int32{2, 7} {
		resp := g.fetch(fetchReq(id, epoch, nil, nil))
		if resp.ErrorCode != kerr.InvalidFetchSessionEpoch.Code || len(resp.Topics) != 0 {
			t.Fatalf("epoch %d: error %d, %d topics", epoch, resp.ErrorCode, len(resp.Topics))
		}
	}
	if resp := g.fetch(fetchReq(id, 1, nil, nil)); resp.ErrorCode != 0 || resp.SessionID != id {
		t.Fatalf("right epoch after errors: error %d, session %d", resp.ErrorCode, resp.SessionID)
	}

	// Epoch 0 naming the session replaces it with a new one.
	resp := g.fetch(fetchReq(id, 0, parts("a", 2), nil))
	if resp.SessionID == 0 || resp.SessionID == id || len(answered(resp)) != 2 {
		t.Fatalf("reopen: session %d (old %d), answered %v", resp.SessionID, id, answered(resp))
	}
	if old := g.fetch(fetchReq(id, 2, nil, nil)); old.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("replaced session still answers: error %d", old.ErrorCode)
	}
	id = resp.SessionID

	// Epoch -1 closes it and fetches sessionless.
	resp = g.fetch(fetchReq(id, -1, parts("a", 2), nil))
	if resp.ErrorCode != 0 || resp.SessionID != 0 || len(answered(resp)) != 2 {
		t.Fatalf("final epoch: error %d, session %d, answered %v", resp.ErrorCode, resp.SessionID, answered(resp))
	}
	if resp := g.fetch(fetchReq(id, 2, nil, nil)); resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("closed session still answers: error %d", resp.ErrorCode)
	}
	if n := g.s.sessions.Count(); n != 0 {
		t.Fatalf("%d sessions left", n)
	}
}

// The fetch session cache bound: the cache is bounded; a full cache takes a bigger session in place
// of the smallest, and refuses one no bigger than any (session id 0:
// the client fetches sessionless).
func TestFetchSessionCacheBounded(t *testing.T) {
	g := newSessionRig(t, Config{FetchSessionCacheSlots: 2}, map[string]int32{"a": 3})
	one := g.fetch(fetchReq(0, 0, parts("a", 1), nil)).SessionID
	two := g.fetch(fetchReq(0, 0, parts("a", 2), nil)).SessionID
	if one == 0 || two == 0 {
		t.Fatalf("sessions %d, %d", one, two)
	}
	if id := g.fetch(fetchReq(0, 0, parts("a", 1), nil)).SessionID; id != 0 {
		t.Fatalf("full cache gave a 1-partition session %d", id)
	}
	three := g.fetch(fetchReq(0, 0, parts("a", 3), nil)).SessionID
	if three == 0 {
		t.Fatal("full cache refused a session bigger than its smallest")
	}
	if resp := g.fetch(fetchReq(one, 1, nil, nil)); resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("evicted session answers: error %d", resp.ErrorCode)
	}
	if resp := g.fetch(fetchReq(two, 1, nil, nil)); resp.ErrorCode != 0 {
		t.Fatalf("kept session: error %d", resp.ErrorCode)
	}
	if n := g.s.sessions.Count(); n != 2 {
		t.Fatalf("%d sessions, want 2", n)
	}

	off := newSessionRig(t, Config{FetchSessionCacheSlots: -1}, map[string]int32{"a": 1})
	if id := off.fetch(fetchReq(0, 0, parts("a", 1), nil)).SessionID; id != 0 {
		t.Fatalf("sessions disabled, got session %d", id)
	}
}

// A long-poll incremental fetch wakes on an append to a session partition
// the request did not name.
func TestFetchSessionLongPoll(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"a": 2})
	id := g.fetch(fetchReq(0, 0, parts("a", 2), nil)).SessionID
	req := fetchReq(id, 1, nil, nil)
	req.MaxWaitMillis, req.MinBytes = int32(testDeadline/time.Millisecond), 1
	g.corr++
	g.c.send(g.corr, req)
	waitFor(t, "fetch waiting", func() bool { return g.s.handling.Load() == 1 })
	g.produce("a", 1)
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	resp.SetVersion(req.Version)
	g.c.recv(resp)
	if got := answered(resp); len(got) != 1 || !got["a/1"] {
		t.Fatalf("long poll answered %v, want a/1 with records", got)
	}
}

// partitionOf is resp's answer for topic/partition.
func partitionOf(t *testing.T, resp *kmsg.FetchResponse, topic string, partition int32) kmsg.FetchResponseTopicPartition {
	t.Helper()
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			if rt.Topic == topic && p.Partition == partition {
				return p
			}
		}
	}
	t.Fatalf("%s/%d not answered", topic, partition)
	return kmsg.FetchResponseTopicPartition{}
}

// A session's unchanged partitions: a partition whose last read found
// nothing past the client's offset is not read again while nothing it
// answers moved; an append makes it read again, and so does a log start
// moved without an append (DeleteRecords), whose new bound the next
// incremental fetch carries.
func TestFetchSessionUnchangedPartitionsNotRead(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"q": 3})
	g.produce("q", 0)
	full := g.fetch(fetchReq(0, 0, []fetchPart{{"q", 0, 1}, {"q", 1, 0}, {"q", 2, 0}}, nil))
	if full.ErrorCode != 0 || full.SessionID == 0 || len(answered(full)) != 3 {
		t.Fatalf("full fetch: error %d, session %d, answered %v", full.ErrorCode, full.SessionID, answered(full))
	}
	id := full.SessionID
	c := traceCrossings(t)

	if got := answered(g.fetch(fetchReq(id, 1, nil, nil))); len(got) != 0 {
		t.Fatalf("nothing moved: answered %v", got)
	}
	if n := c.take()["read"]; n != 0 {
		t.Fatalf("nothing moved: %d partitions read, want none", n)
	}

	g.produce("q", 1)
	c.take()
	inc := g.fetch(fetchReq(id, 2, nil, nil))
	if got := answered(inc); len(got) != 1 || !got["q/1"] {
		t.Fatalf("after an append to q/1: answered %v, want q/1 with records", got)
	}
	if n := c.take()["read"]; n != 1 {
		t.Fatalf("after an append to q/1: %d partitions read, want 1", n)
	}

	if _, err := g.res.DeleteRecords("q", 0, 1); err != nil {
		t.Fatal(err)
	}
	inc = g.fetch(fetchReq(id, 3, []fetchPart{{"q", 1, 1}}, nil))
	if got := answered(inc); len(got) != 1 || got["q/0"] {
		t.Fatalf("after DeleteRecords on q/0: answered %v, want q/0 alone, no records", got)
	}
	if p := partitionOf(t, inc, "q", 0); p.LogStartOffset != 1 || p.HighWatermark != 1 {
		t.Fatalf("q/0 after DeleteRecords: log start %d, high watermark %d, want 1 and 1", p.LogStartOffset, p.HighWatermark)
	}
}

// A long poll of a session registers its Waiter only after the first
// read leaves it waiting: an append to a partition after that partition
// was read and before the registration is still seen (its Version moved),
// and the fetch answers it instead of waiting out MaxWait.
func TestFetchSessionAppendBeforeLateRegistration(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"a": 2})
	g.produce("a", 0)
	g.produce("a", 1)
	id := g.fetch(fetchReq(0, 0, parts("a", 2), nil)).SessionID

	// The long poll reads a/0, then a/1; reading a/1 produces to a/0,
	// which a/0's read did not see.
	var reads atomic.Int32
	t.Cleanup(resolver.TraceCrossings(func(kind string) {
		if kind == "read" && reads.Add(1) == 2 {
			g.produce("a", 0)
		}
	}))
	req := fetchReq(id, 1, []fetchPart{{"a", 0, 1}, {"a", 1, 1}}, nil)
	req.MaxWaitMillis, req.MinBytes = int32(testDeadline/time.Millisecond), 1
	resp := g.fetch(req)
	if got := answered(resp); !got["a/0"] {
		t.Fatalf("long poll answered %v, want a/0 with the record produced during its read", got)
	}
}

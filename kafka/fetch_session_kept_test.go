package kafka

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/topicconfig"
)

// keptWait is the MaxWait of a long poll an append must end: far longer
// than a wake-up takes, shorter than the test connection's deadline.
const keptWait = 5 * time.Second

// longPoll is an incremental fetch of session id at epoch that waits up
// to wait for one byte.
func longPoll(id, epoch int32, wait time.Duration, ps, forget []fetchPart) *kmsg.FetchRequest {
	req := fetchReq(id, epoch, ps, forget)
	req.MaxWaitMillis, req.MinBytes = int32(wait/time.Millisecond), 1
	return req
}

// waiters is how many Waiters are registered on topic/partition.
func (g *sessionRig) waiters(topic string, partition int32) int {
	g.t.Helper()
	n, err := g.res.Waiters(topic, partition)
	if err != nil {
		g.t.Fatal(err)
	}
	return n
}

// recvFetch receives the response to req on c.
func recvFetch(c *rawConn, req *kmsg.FetchRequest) *kmsg.FetchResponse {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	resp.SetVersion(req.Version)
	c.recv(resp)
	return resp
}

// appendWhileWaiting sends the long poll req, waits until a Waiter is
// registered on topic/partition (the poll waits), appends a record there
// and returns the poll's answer.
func (g *sessionRig) appendWhileWaiting(req *kmsg.FetchRequest, topic string, partition int32, what string) *kmsg.FetchResponse {
	g.t.Helper()
	g.corr++
	g.c.send(g.corr, req)
	waitFor(g.t, what, func() bool { return g.waiters(topic, partition) == 1 })
	g.produce(topic, partition)
	return recvFetch(g.c, req)
}

// A session's long poll waits on a Waiter kept registered between its
// fetches. An append made during a fetch's first read to a partition
// already read, which the registration (older than the read) fires, is
// answered, not waited out, although the partition is not registered
// again.
func TestFetchSessionKeptWaiterAppendDuringRead(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"a": 2})
	g.produce("a", 0)
	g.produce("a", 1)
	id := g.fetch(fetchReq(0, 0, parts("a", 2), nil)).SessionID
	at1 := []fetchPart{{"a", 0, 1}, {"a", 1, 1}}
	if got := answered(g.fetch(longPoll(id, 1, time.Millisecond, at1, nil))); got["a/0"] || got["a/1"] {
		t.Fatalf("nothing new: answered %v", got)
	}
	if g.waiters("a", 0) != 1 || g.waiters("a", 1) != 1 {
		t.Fatalf("after a long poll that waited: %d and %d waiters, want the session's on each", g.waiters("a", 0), g.waiters("a", 1))
	}

	// a/1's log start moves, so the next fetch reads it (a/0 is answered
	// from its last read); reading it produces to a/0.
	if _, err := g.res.DeleteRecords("a", 1, 1); err != nil {
		t.Fatal(err)
	}
	var armed atomic.Bool
	t.Cleanup(resolver.TraceCrossings(func(kind string) {
		if kind == "read" && armed.CompareAndSwap(true, false) {
			g.produce("a", 0)
		}
	}))
	armed.Store(true)
	resp := g.fetch(longPoll(id, 2, keptWait, nil, nil))
	if got := answered(resp); !got["a/0"] {
		t.Fatalf("long poll answered %v, want a/0 with the record produced during its read", got)
	}
}

// A session's kept Waiter follows a topic deleted and re-created under
// the same name: the next long poll registers it on the new partition,
// and an append there wakes it.
func TestFetchSessionKeptWaiterRecreatedTopic(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"r": 1})
	id := g.fetch(fetchReq(0, 0, parts("r", 1), nil)).SessionID
	g.fetch(longPoll(id, 1, time.Millisecond, nil, nil))
	if n := g.waiters("r", 0); n != 1 {
		t.Fatalf("%d waiters on r/0, want the session's", n)
	}
	if err := g.res.DeleteTopic("r"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.res.CreateTopic("r", 1, 1, nil, false); err != nil {
		t.Fatal(err)
	}

	resp := g.appendWhileWaiting(longPoll(id, 2, keptWait, nil, nil), "r", 0, "the long poll registered on the new r/0")
	if got := answered(resp); !got["r/0"] {
		t.Fatalf("long poll answered %v, want r/0 with the record produced while it waited", got)
	}
}

// A session's kept Waiter leaves no registration behind: a partition the
// session forgets is unregistered at its next long poll, and a session
// closed (epoch -1) or replaced (epoch 0) unregisters all of them.
func TestFetchSessionKeptWaiterDropped(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"d": 2})
	id := g.fetch(fetchReq(0, 0, parts("d", 2), nil)).SessionID
	g.fetch(longPoll(id, 1, time.Millisecond, nil, nil))
	if g.waiters("d", 0) != 1 || g.waiters("d", 1) != 1 {
		t.Fatalf("%d and %d waiters, want the session's on each", g.waiters("d", 0), g.waiters("d", 1))
	}
	g.fetch(longPoll(id, 2, time.Millisecond, nil, []fetchPart{{"d", 1, 0}}))
	if g.waiters("d", 0) != 1 || g.waiters("d", 1) != 0 {
		t.Fatalf("d/1 forgotten: %d and %d waiters, want 1 and 0", g.waiters("d", 0), g.waiters("d", 1))
	}

	if resp := g.fetch(fetchReq(id, -1, parts("d", 2), nil)); resp.ErrorCode != 0 {
		t.Fatalf("closing the session: error %d", resp.ErrorCode)
	}
	if n := g.waiters("d", 0); n != 0 {
		t.Fatalf("session closed: %d waiters on d/0, want none", n)
	}

	id = g.fetch(fetchReq(0, 0, parts("d", 2), nil)).SessionID
	g.fetch(longPoll(id, 1, time.Millisecond, nil, nil))
	if n := g.waiters("d", 1); n != 1 {
		t.Fatalf("%d waiters on d/1, want the new session's", n)
	}
	if g.fetch(fetchReq(id, 0, parts("d", 2), nil)).SessionID == 0 {
		t.Fatal("no session opened in place of the old one")
	}
	if g.waiters("d", 0) != 0 || g.waiters("d", 1) != 0 {
		t.Fatalf("session replaced: %d and %d waiters, want none", g.waiters("d", 0), g.waiters("d", 1))
	}
}

// A request on a session whose kept Waiter another request holds (a
// duplicate request, the older one to fail at Finish) waits on a Waiter
// of its own, so neither can drain the other's wake-up: both are
// registered, and an append wakes the newer one.
func TestFetchSessionKeptWaiterDuplicate(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"e": 1})
	id := g.fetch(fetchReq(0, 0, parts("e", 1), nil)).SessionID
	g.fetch(longPoll(id, 1, time.Millisecond, nil, nil))

	older, c2 := longPoll(id, 2, keptWait, nil, nil), dialRaw(t, g.s.Addr())
	c2.send(1, older)
	fs := g.s.sessions.Get(id)
	waitFor(t, "the older request began", func() bool {
		epoch, free := fs.EpochIfFree()
		return free && epoch == 3
	})
	newer := longPoll(id, 3, keptWait, nil, nil)
	g.corr++
	g.c.send(g.corr, newer)
	waitFor(t, "the newer request registered a Waiter of its own", func() bool { return g.waiters("e", 0) == 2 })
	g.produce("e", 0)
	if got := answered(recvFetch(g.c, newer)); !got["e/0"] {
		t.Fatalf("newer request answered %v, want e/0 with the record produced while it waited", got)
	}
	if resp := recvFetch(c2, older); resp.ErrorCode != kerr.InvalidFetchSessionEpoch.Code {
		t.Fatalf("older request: error %d, want INVALID_FETCH_SESSION_EPOCH", resp.ErrorCode)
	}
}

// A session partition answered from its last read keeps that read's
// binding only while its Version is unchanged: a topic deleted and
// re-created under the same name, with a record at the offset the client
// fetches, is read through the new binding, not answered as before.
func TestFetchSessionQuietRecreatedTopic(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"q": 1})
	id := g.fetch(fetchReq(0, 0, parts("q", 1), nil)).SessionID
	if got := answered(g.fetch(fetchReq(id, 1, nil, nil))); len(got) != 0 {
		t.Fatalf("nothing moved: answered %v", got)
	}
	if err := g.res.DeleteTopic("q"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.res.CreateTopic("q", 1, 1, nil, false); err != nil {
		t.Fatal(err)
	}
	g.produce("q", 0)
	if got := answered(g.fetch(fetchReq(id, 2, nil, nil))); !got["q/0"] {
		t.Fatalf("after q was re-created with a record: answered %v, want q/0 with records", got)
	}
}

// A session left idle loses its kept Waiter: a client gone without
// closing its session leaves no registration to fire on every append
// until the session is evicted. Its next long poll registers again and
// is woken.
func TestFetchSessionKeptWaiterIdle(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"i": 1, "o": 1})
	idle := g.fetch(fetchReq(0, 0, parts("i", 1), nil)).SessionID
	g.fetch(longPoll(idle, 1, time.Millisecond, nil, nil))
	if n := g.waiters("i", 0); n != 1 {
		t.Fatalf("%d waiters on i/0, want the session's", n)
	}
	g.s.sessions.SetWatchIdle(time.Nanosecond) // every session is idle by the next request
	other := g.fetch(fetchReq(0, 0, parts("o", 1), nil)).SessionID
	g.fetch(fetchReq(other, 1, nil, nil))
	if n := g.waiters("i", 0); n != 0 {
		t.Fatalf("idle session: %d waiters on i/0, want none", n)
	}
	g.s.sessions.SetWatchIdle(0)

	resp := g.appendWhileWaiting(longPoll(idle, 2, keptWait, nil, nil), "i", 0, "the idle session's long poll registered again")
	if got := answered(resp); !got["i/0"] {
		t.Fatalf("long poll answered %v, want i/0 with the record produced while it waited", got)
	}
}

// A long poll of a compacted view's companion topic waits on its source
// partition, whose appends fire it under the source's name: an append
// past the view's end wakes the poll and is read through the companion,
// not waited out.
func TestLongPollCompanionWokenBySourceAppend(t *testing.T) {
	g := newSessionRig(t, Config{}, nil)
	if _, err := g.res.CreateTopic("src", 1, 1, map[string]string{topicconfig.CompactedView: "true"}, false); err != nil {
		t.Fatal(err)
	}
	const companion = "src" + resolver.CompanionSuffix
	g.produce("src", 0)
	id := g.fetch(fetchReq(0, 0, []fetchPart{{companion, 0, 1}}, nil)).SessionID
	// The poll registers once its first read found nothing: an append
	// from then on must wake it.
	resp := g.appendWhileWaiting(longPoll(id, 1, keptWait, nil, nil), "src", 0, "the long poll registered on src/0")
	if got := answered(resp); !got[companion+"/0"] {
		t.Fatalf("long poll of %s answered %v, want the record appended to its source while it waited", companion, got)
	}
}

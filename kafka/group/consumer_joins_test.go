package group

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// New members joining in one batch share one target: three members
// queued behind a held write each get their share of the topic (2 of 6)
// in their join's answer, at one epoch, the group's, and none owns a
// partition another was given. With the target computed per join, the
// first of them took all 6 and the other two got nothing until it
// revoked them a heartbeat later.
func TestConsumerBatchJoinsShareOneTarget(t *testing.T) {
	topics := &staticTopics{}
	topics.add("t", 6)
	topics.add("other", 1)
	gate := &writeGate{entered: make(chan struct{}, 1)}
	h := &harness{t: t, clock: newFakeClock(), dir: t.TempDir(), cfg: Config{Metadata: topics}, writeHook: gate.write}
	h.open()
	code(t, "a joins", h.beat("g", &cm{id: "a", topics: []string{"other"}}, true).ErrorCode, nil)

	hold := make(chan struct{})
	gate.set(hold, nil)
	released := false
	t.Cleanup(func() {
		if !released {
			close(hold)
		}
	})
	bDone := make(chan int16, 1)
	go func() { bDone <- h.beat("g", &cm{id: "b", topics: []string{"other"}}, true).ErrorCode }()
	select {
	case <-gate.entered:
	case <-time.After(waitFor):
		t.Fatal("b's join was never written")
	}
	ms := []*cm{{id: "c", topics: []string{"t"}}, {id: "d", topics: []string{"t"}}, {id: "e", topics: []string{"t"}}}
	answers := make(chan *kmsg.ConsumerGroupHeartbeatResponse, len(ms))
	for _, m := range ms {
		go func() { answers <- h.beat("g", m, true) }()
	}
	waitQueued(t, h.c.lookup("g"), len(ms))
	gate.set(nil, nil)
	released = true
	close(hold)
	code(t, "b joins", <-bDone, nil)
	for range ms {
		code(t, "a queued join", (<-answers).ErrorCode, nil)
	}
	dreq := kmsg.NewPtrConsumerGroupDescribeRequest()
	dreq.Groups = []string{"g"}
	epoch := h.c.ConsumerGroupDescribe(dreq).Groups[0].Epoch
	for _, m := range ms {
		if m.owned.count() != 2 || m.epoch != epoch {
			t.Errorf("%s joined with %d partitions at epoch %d, want 2 at the group's epoch %d", m.id, m.owned.count(), m.epoch, epoch)
		}
	}
	noDoubleOwnership(t, ms)
}

// waitQueued waits until n heartbeats of g are queued behind the one
// applying.
func waitQueued(t *testing.T, g *group, n int) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		g.beats.mu.Lock()
		queued := len(g.beats.waiting)
		g.beats.mu.Unlock()
		if queued >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d heartbeats queued behind the held write, want %d", queued, n)
		}
		time.Sleep(time.Millisecond) // polling a condition, bounded by the deadline
	}
}

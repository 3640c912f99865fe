package group

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// writeGate is a store write hook that counts the synced writes, holds each
// one while hold is set, and fails them while fail is set.
type writeGate struct {
	mu      sync.Mutex
	writes  int
	hold    chan struct{}
	entered chan struct{}
	fail    error
}

func (w *writeGate) write() error {
	w.mu.Lock()
	w.writes++
	hold, fail := w.hold, w.fail
	w.mu.Unlock()
	if hold != nil {
		w.entered <- struct{}{}
		<-hold
	}
	return fail
}

func (w *writeGate) set(hold chan struct{}, fail error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.hold, w.fail = hold, fail
}

func (w *writeGate) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writes
}

// Durable consumer group state with batched heartbeats: heartbeats that
// arrive while a write is under way are applied together and written
// once, and none is answered before that write: while b's join is being
// written b has no answer, and when the one write of c, d and e's joins
// fails, all three are answered COORDINATOR_NOT_AVAILABLE and the group
// is as it was (a and b).
func TestConsumerBatchAnsweredAfterItsWrite(t *testing.T) {
	topics := &staticTopics{}
	topics.add("t", 8)
	gate := &writeGate{entered: make(chan struct{}, 1)}
	h := &harness{t: t, clock: newFakeClock(), dir: t.TempDir(), cfg: Config{Metadata: topics}, writeHook: gate.write}
	h.open()
	code(t, "a joins", h.beat("g", &cm{id: "a", topics: []string{"t"}}, true).ErrorCode, nil)

	hold := make(chan struct{})
	gate.set(hold, nil)
	answered := make(chan int16, 4)
	go func() { answered <- h.beat("g", &cm{id: "b", topics: []string{"t"}}, true).ErrorCode }()
	select {
	case <-gate.entered:
	case <-time.After(waitFor):
		t.Fatal("b's join was never written")
	}
	select {
	case c := <-answered:
		t.Fatalf("b's join answered %d while its write is held", c)
	default:
	}
	for _, id := range []string{"c", "d", "e"} {
		go func() { answered <- h.beat("g", &cm{id: id, topics: []string{"t"}}, true).ErrorCode }()
	}
	g := h.c.lookup("g")
	deadline := time.Now().Add(waitFor)
	for queued := 0; queued < 3; {
		if time.Now().After(deadline) {
			t.Fatalf("%d joins queued behind the held write, want 3", queued)
		}
		g.beats.mu.Lock()
		queued = len(g.beats.waiting)
		g.beats.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	writes := gate.count()
	gate.set(nil, errors.New("disk"))
	close(hold)

	codes := map[int16]int{}
	for range 4 {
		codes[<-answered]++
	}
	if codes[0] != 1 || codes[kerr.CoordinatorNotAvailable.Code] != 3 {
		t.Fatalf("answers %v, want b's success and three COORDINATOR_NOT_AVAILABLE", codes)
	}
	if n := gate.count() - writes; n != 1 {
		t.Fatalf("the three queued joins took %d writes, want one", n)
	}
	dreq := kmsg.NewPtrConsumerGroupDescribeRequest()
	dreq.Groups = []string{"g"}
	if dg := h.c.ConsumerGroupDescribe(dreq).Groups[0]; len(dg.Members) != 2 {
		t.Fatalf("after the failed batch: %d members, want a and b", len(dg.Members))
	}
}

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

// leaveBatch holds the write of first's leave, queues the leaves of rest
// behind it in order, then lets the write go, failing the writes after it
// when fail is set. It returns the answers of rest and the writes they took.
func leaveBatch(t *testing.T, h *harness, gate *writeGate, first *cm, rest []*cm, fail error) ([]int16, int) {
	t.Helper()
	hold := make(chan struct{})
	gate.set(hold, nil)
	firstDone := make(chan int16, 1)
	first.epoch = epochLeave
	go func() { firstDone <- h.beat("g", first, false).ErrorCode }()
	select {
	case <-gate.entered:
	case <-time.After(waitFor):
		t.Fatal("the first leave was never written")
	}
	g := h.c.lookup("g")
	answers := make([]chan int16, len(rest))
	for i, m := range rest {
		answers[i] = make(chan int16, 1)
		m.epoch = epochLeave
		go func() { answers[i] <- h.beat("g", m, false).ErrorCode }()
		deadline := time.Now().Add(waitFor)
		for queued := 0; queued < i+1; { // queued in this order
			if time.Now().After(deadline) {
				t.Fatalf("%d leaves queued behind the held write, want %d", queued, i+1)
			}
			g.beats.mu.Lock()
			queued = len(g.beats.waiting)
			g.beats.mu.Unlock()
			time.Sleep(time.Millisecond)
		}
	}
	writes := gate.count()
	gate.set(nil, fail)
	close(hold)
	code(t, "the first leave", <-firstDone, nil)
	codes := make([]int16, len(rest))
	for i := range rest {
		codes[i] = <-answers[i]
	}
	return codes, gate.count() - writes
}

// Leaves share the batch's write (durable consumer group state): five
// members leaving while a write is under way are one write, none is
// answered before it, and when it fails all five are answered
// COORDINATOR_NOT_AVAILABLE and are still members; left again, they are
// gone, also after a restart.
func TestConsumerBatchLeavesShareOneWrite(t *testing.T) {
	topics := &staticTopics{}
	topics.add("t", 8)
	gate := &writeGate{entered: make(chan struct{}, 1)}
	h := &harness{t: t, clock: newFakeClock(), dir: t.TempDir(), cfg: Config{Metadata: topics}, writeHook: gate.write}
	h.open()
	var ms []*cm
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		m := &cm{id: id, topics: []string{"t"}}
		code(t, id+" joins", h.beat("g", m, true).ErrorCode, nil)
		ms = append(ms, m)
	}
	codes, writes := leaveBatch(t, h, gate, ms[0], ms[1:], errors.New("disk"))
	for i, c := range codes {
		code(t, ms[i+1].id+"'s leave in the failed write", c, kerr.CoordinatorNotAvailable)
	}
	if writes != 1 {
		t.Fatalf("five queued leaves took %d writes, want one", writes)
	}
	if d := h.describe848("g"); len(d.Members) != 5 {
		t.Fatalf("after the failed batch: %d members, want the five", len(d.Members))
	}

	codes, writes = leaveBatch(t, h, gate, ms[1], ms[2:], nil)
	for i, c := range codes {
		code(t, ms[i+2].id+" leaves", c, nil)
	}
	if writes != 1 {
		t.Fatalf("four queued leaves took %d writes, want one", writes)
	}
	h.restart()
	if d := h.describe848("g"); len(d.Members) != 0 {
		t.Fatalf("after the leaves and a restart: %d members, want none", len(d.Members))
	}
}

// A leave that downgrades the group (KIP-848's online downgrade) is
// decided when its batch is applied: of three consumer-protocol members
// leaving a group with two classic ones, d's leave queued behind c's
// write is batched, and e's, queued after it, finds only classic members
// left once d's is applied: the group becomes classic with a and b, in a
// write of its own after d's, and stays so after a restart.
func TestConsumerBatchLeaveDowngradesInBatch(t *testing.T) {
	topics := &staticTopics{}
	topics.add("t", 4)
	gate := &writeGate{entered: make(chan struct{}, 1)}
	h := &harness{t: t, clock: newFakeClock(), dir: t.TempDir(), cfg: Config{Metadata: topics}, writeHook: gate.write}
	h.open()
	h.classicGroupOf2("g")
	var ms []*cm
	for _, id := range []string{"c", "d", "e"} {
		m := &cm{id: id, topics: []string{"t"}}
		code(t, id+" joins", h.beat("g", m, true).ErrorCode, nil)
		ms = append(ms, m)
	}
	if d := h.describe848("g"); len(d.Members) != 5 {
		t.Fatalf("after the upgrade: %+v", d)
	}
	codes, writes := leaveBatch(t, h, gate, ms[0], ms[1:], nil)
	code(t, "d leaves", codes[0], nil)
	code(t, "e leaves, downgrading", codes[1], nil)
	if writes != 2 {
		t.Fatalf("d's leave and e's downgrade took %d writes, want two", writes)
	}
	code(t, "describe after downgrade", h.describe848("g").ErrorCode, kerr.GroupIDNotFound)
	if st := h.state("g"); st != "PreparingRebalance" {
		t.Fatalf("after downgrade: %s", st)
	}
	h.restart()
	code(t, "describe after downgrade and restart", h.describe848("g").ErrorCode, kerr.GroupIDNotFound)
	if dg := h.describe("g"); dg.State == "Dead" || len(dg.Members) != 2 || dg.ProtocolType != "consumer" {
		t.Fatalf("classic group after downgrade and restart: %+v", dg)
	}
}

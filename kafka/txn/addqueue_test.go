package txn

import (
	"cmp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kerr"
)

// writeGate is the store's write hook (offsetstest.WithWriteHook): it counts the store's
// synced writes and, while holding, keeps each in flight until released
// with its outcome.
type writeGate struct {
	mu      sync.Mutex
	writes  int
	hold    bool
	entered chan struct{}
	release chan error
	closed  chan struct{} // closed when the test ends: writes pass
}

// gatedHarness is a harness whose store writes pass through a writeGate.
func gatedHarness(t *testing.T, cfg Config) (*harness, *writeGate) {
	h := newHarness(t, cfg)
	g := &writeGate{entered: make(chan struct{}), release: make(chan error), closed: make(chan struct{})}
	t.Cleanup(func() { close(g.closed) }) // before the harness closes the store
	h.writeHook = g.hook
	h.reopen()
	return h, g
}

func (g *writeGate) hook() error {
	g.mu.Lock()
	g.writes++
	hold := g.hold
	g.mu.Unlock()
	if !hold {
		return nil
	}
	select {
	case g.entered <- struct{}{}:
	case <-g.closed:
		return nil
	}
	select {
	case err := <-g.release:
		return err
	case <-g.closed:
		return nil
	}
}

func (g *writeGate) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.writes
}

// queuedAdd is one add the test queues behind a write in flight.
type queuedAdd struct {
	pid      int64
	epoch    int16
	tp       offsets.TopicPartition
	implicit bool // AddPartitionImplicitly, else AddPartitionsToTxn v3
}

// addsBehindWrite inits "x", starts an add of a-0 and holds its store
// write in flight, queues adds (all of them waiting on the id's queue),
// releases the first write, holds the next one and checks that no queued
// add is answered while it is in flight, then releases it with second.
// It returns the queued adds' answers and the store writes the adds took.
func addsBehindWrite(t *testing.T, adds func(pid int64, epoch int16) []queuedAdd, second error) (*harness, []int16, int) {
	h, g := gatedHarness(t, Config{})
	pid, epoch := h.mustInit("x")
	g.mu.Lock()
	g.hold = true
	g.mu.Unlock()
	before := g.count()
	first := make(chan int16, 1)
	go func() { first <- h.add("x", pid, epoch, 3, tp("a", 0)) }()
	<-g.entered
	queued := adds(pid, epoch)
	codes := make([]chan int16, len(queued))
	for i, a := range queued {
		codes[i] = make(chan int16, 1)
		go func() {
			if a.implicit {
				codes[i] <- h.c.AddPartitionImplicitly("x", a.pid, a.epoch, a.tp.Topic, a.tp.Partition)
			} else {
				codes[i] <- h.add("x", a.pid, a.epoch, 3, a.tp)
			}
		}()
	}
	waitQueued(t, h, len(queued))
	g.release <- nil
	wantCode(t, "first add", <-first, nil)
	select {
	case <-g.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the queued adds made no store write")
	}
	for i, ch := range codes {
		select {
		case code := <-ch:
			t.Fatalf("queued add %d answered %v before its write returned", i, kerr.ErrorForCode(code))
		default:
		}
	}
	g.mu.Lock()
	g.hold = false
	g.mu.Unlock()
	g.release <- second
	out := make([]int16, len(codes))
	for i, ch := range codes {
		out[i] = <-ch
	}
	return h, out, g.count() - before
}

// waitQueued waits until n adds wait on "x"'s queue.
func waitQueued(t *testing.T, h *harness, n int) {
	t.Helper()
	h.c.mu.Lock()
	q := &h.c.mu.txns["x"].adds
	h.c.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for {
		q.mu.Lock()
		got := len(q.waiting)
		q.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d adds queued, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// partitionsOf returns "x"'s durable partitions, sorted.
func partitionsOf(h *harness) []offsets.TopicPartition {
	t := h.c.lookup("x")
	defer t.mu.Unlock()
	out := slices.Clone(t.st.Partitions)
	slices.SortFunc(out, func(a, b offsets.TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}

func wantPartitions(t *testing.T, h *harness, want ...offsets.TopicPartition) {
	t.Helper()
	if got := partitionsOf(h); !slices.Equal(got, want) {
		t.Fatalf("partitions %v, want %v", got, want)
	}
	h.reopen() // what was durable (durable transitions)
	if got := partitionsOf(h); !slices.Equal(got, want) {
		t.Fatalf("after reopen: partitions %v, want %v", got, want)
	}
}

// Durable partition adds, grouped (addQueue): the adds of one
// transactional id that queue while its write is in flight are written
// together in one store write, each answered only after it returned.
func TestAddsQueuedWrittenTogether(t *testing.T) {
	h, codes, writes := addsBehindWrite(t, func(pid int64, epoch int16) []queuedAdd {
		return []queuedAdd{
			{pid, epoch, tp("a", 1), true}, {pid, epoch, tp("a", 2), false}, {pid, epoch, tp("b", 0), true},
			{pid, epoch, tp("b", 1), true}, {pid, epoch, tp("b", 2), false}, {pid, epoch, tp("a", 1), true},
		}
	}, nil)
	for _, code := range codes {
		wantCode(t, "queued add", code, nil)
	}
	if writes != 2 {
		t.Fatalf("the first add and 6 queued ones took %d store writes, want 2", writes)
	}
	regs := map[offsets.TopicPartition]bool{}
	for _, m := range h.parts.takeRegistered() {
		regs[m.tp] = true
	}
	if len(regs) != 6 {
		t.Fatalf("registered %v, want all 6 partitions", regs)
	}
	wantPartitions(t, h, tp("a", 0), tp("a", 1), tp("a", 2), tp("b", 0), tp("b", 1), tp("b", 2))
}

// Durable partition adds, grouped: a failed write fails every add in it,
// and none of their partitions is in the transaction.
func TestAddsFailedWriteFailsAll(t *testing.T) {
	h, codes, _ := addsBehindWrite(t, func(pid int64, epoch int16) []queuedAdd {
		return []queuedAdd{{pid, epoch, tp("a", 1), true}, {pid, epoch, tp("b", 0), false}, {pid, epoch, tp("b", 1), true}}
	}, errInjected)
	for _, code := range codes {
		wantCode(t, "add in the failed write", code, kerr.CoordinatorNotAvailable)
	}
	wantPartitions(t, h, tp("a", 0))
}

// Durable partition adds, grouped, with Kafka's transaction errors: each
// queued add is checked on its own; a fenced one or another producer's
// gets its error and nothing of it is written, the others are.
func TestAddsFencedInQueueNotWritten(t *testing.T) {
	h, codes, writes := addsBehindWrite(t, func(pid int64, epoch int16) []queuedAdd {
		return []queuedAdd{
			{pid, epoch, tp("a", 1), true}, {pid, epoch + 1, tp("a", 2), false},
			{pid + 1, epoch, tp("b", 0), true}, {pid, epoch, tp("b", 1), false},
		}
	}, nil)
	wantCode(t, "add", codes[0], nil)
	wantCode(t, "fenced add", codes[1], kerr.ProducerFenced)
	wantCode(t, "another producer's add", codes[2], kerr.InvalidProducerIDMapping)
	wantCode(t, "add", codes[3], nil)
	if writes != 2 {
		t.Fatalf("took %d store writes, want 2", writes)
	}
	wantPartitions(t, h, tp("a", 0), tp("a", 1), tp("b", 1))
}

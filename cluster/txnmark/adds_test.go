package txnmark

import (
	"context"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Implicit adds across nodes: the leader's request is answered by the
// coordinator that holds the role, never by one that lost it.

// TestImplicitAddAnsweredByCoordinator: node 0 leads t/0 and asks; node
// 1 holds the coordinator role and answers with its adder's code, which
// AddImplicitly returns; the request is gone afterwards.
func TestImplicitAddAnsweredByCoordinator(t *testing.T) {
	g := newRig(t)
	o := g.acquire(0, "t-0")
	leader := g.relay(0, &servingAs{o: &o})
	co := g.relay(1, nil)
	co.SetCoordinator(g.acquire(1, "coordinator"))
	type asked struct {
		id        string
		pid       int64
		epoch     int16
		topic     string
		partition int32
	}
	got := make(chan asked, 1)
	co.SetAdder(func(id string, pid int64, epoch int16, topic string, partition int32, _ func() bool) int16 {
		got <- asked{id, pid, epoch, topic, partition}
		return 47 // INVALID_PRODUCER_EPOCH: any code is passed on
	})
	code, err := leader.AddImplicitly(g.ctx(), "tx", "t", 0, 7, 3)
	if err != nil || code != 47 {
		t.Fatalf("AddImplicitly: %d %v, want the coordinator's 47", code, err)
	}
	if a := <-got; a != (asked{"tx", 7, 3, "t", 0}) {
		t.Fatalf("the coordinator was asked %+v", a)
	}
	waitNoAdds(t, g)
}

// TestImplicitAddFencedCoordinatorAnswersNothing: the node that held the
// coordinator role answers from what it had in memory; its answer is
// refused by its lost ownership (implicit adds across nodes), and the
// asker gets the answer of the node holding the role now.
func TestImplicitAddFencedCoordinatorAnswersNothing(t *testing.T) {
	g := newRig(t)
	o := g.acquire(0, "t-0")
	leader := g.relay(0, &servingAs{o: &o})
	old := g.relay(1, nil)
	oldOwn := g.acquire(1, "coordinator")
	old.SetCoordinator(oldOwn)
	if err := g.m[1].Release(g.ctx(), oldOwn); err != nil {
		t.Fatal(err)
	}
	staleDone := make(chan struct{})
	old.SetAdder(func(string, int64, int16, string, int32, func() bool) int16 {
		defer close(staleDone)
		return 22 // INVALID_PRODUCER_ID_MAPPING: stale memory
	})
	current := g.relay(0, &servingAs{o: &o})
	current.SetCoordinator(g.acquire(0, "coordinator"))
	current.SetAdder(func(string, int64, int16, string, int32, func() bool) int16 {
		<-staleDone // the stale answer is tried first
		time.Sleep(50 * time.Millisecond)
		return 0
	})
	code, err := leader.AddImplicitly(g.ctx(), "tx", "t", 0, 7, 3)
	if err != nil || code != 0 {
		t.Fatalf("AddImplicitly: %d %v, want NONE from the coordinator holding the role", code, err)
	}
	waitNoAdds(t, g)
}

// TestImplicitAddWaitsForReadyCoordinator: a coordinator not ready to
// answer (NOT_COORDINATOR while its store is restored) leaves the
// request for later, and the asker gets the answer once it is.
func TestImplicitAddWaitsForReadyCoordinator(t *testing.T) {
	g := newRig(t)
	o := g.acquire(0, "t-0")
	leader := g.relay(0, &servingAs{o: &o})
	co := g.relay(1, nil)
	co.SetCoordinator(g.acquire(1, "coordinator"))
	calls := 0
	co.SetAdder(func(string, int64, int16, string, int32, func() bool) int16 {
		calls++ // answers run one at a time per request
		if calls == 1 {
			return 16 // NOT_COORDINATOR
		}
		return 0
	})
	code, err := leader.AddImplicitly(g.ctx(), "tx", "t", 0, 7, 3)
	if err != nil || code != 0 {
		t.Fatalf("AddImplicitly: %d %v, want NONE once the coordinator is ready", code, err)
	}
}

// waitNoAdds waits until no request is left in etcd.
func waitNoAdds(t *testing.T, g *rig) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		resp, err := g.cli.Get(ctx, prefix+"txnadd/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err == nil && resp.Count == 0 {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("implicit-add requests left: %v %v", resp, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitingAdder is a coordinator's adder for which every add of
// transactional id "busy" waits for its id's completion, as kafka/txn's
// does: it calls waiting, answers CONCURRENT_TRANSACTIONS when refused
// the wait, else blocks until done is closed. Other ids are answered at
// once.
type waitingAdder struct {
	waited chan struct{} // a value per add that waits
	done   chan struct{}
	once   sync.Once
}

// newWaitingAdder's completion is done by finish or at the test's end,
// before the relays close.
func newWaitingAdder(t *testing.T) *waitingAdder {
	w := &waitingAdder{waited: make(chan struct{}, 1024), done: make(chan struct{})}
	t.Cleanup(w.finish)
	return w
}

// finish ends the completion "busy" waits for.
func (w *waitingAdder) finish() { w.once.Do(func() { close(w.done) }) }

func (w *waitingAdder) add(id string, _ int64, _ int16, _ string, _ int32, waiting func() bool) int16 {
	if id != "busy" {
		return 0
	}
	if !waiting() {
		return 51 // CONCURRENT_TRANSACTIONS
	}
	w.waited <- struct{}{}
	<-w.done
	return 0
}

// askBusy has leader ask n adds of "busy" and returns their answers.
func askBusy(g *rig, leader *Relay, n int) chan int16 {
	out := make(chan int16, n)
	for range n {
		go func() {
			code, err := leader.AddImplicitly(g.ctx(), "busy", "t", 0, 7, 3)
			if err != nil {
				code = -1
			}
			out <- code
		}()
	}
	return out
}

// receive waits for one value of ch, up to a deadline generous for a
// loaded machine.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: nothing within 30s", what)
		var zero T
		return zero
	}
}

// TestImplicitAddWaitingHoldsNoSlot: adds waiting for their
// transactional id's completion, more than the answer slots, leave
// another id's add answered (a waiting add holds no slot); they are
// answered once the completion is done.
func TestImplicitAddWaitingHoldsNoSlot(t *testing.T) {
	g := newRig(t)
	o := g.acquire(0, "t-0")
	leader := g.relay(0, &servingAs{o: &o})
	co := g.relay(1, nil)
	co.SetCoordinator(g.acquire(1, "coordinator"))
	w := newWaitingAdder(t)
	co.SetAdder(w.add)
	const n = 2*maxAppliers + 8
	busy := askBusy(g, leader, n)
	for range maxAppliers + 1 {
		receive(t, w.waited, "a busy add waiting")
	}
	code, err := leader.AddImplicitly(g.ctx(), "other", "t", 0, 8, 0)
	if err != nil || code != 0 {
		t.Fatalf("another id's add: %d %v, want NONE while %d adds wait", code, err, n)
	}
	w.finish()
	for range n {
		if code := receive(t, busy, "a busy add answered"); code != 0 {
			t.Fatalf("busy add answered %d, want NONE after the completion", code)
		}
	}
	waitNoAdds(t, g)
}

// TestImplicitAddWaitingBounded: past maxWaiting waiting answers, an add
// that must wait is answered CONCURRENT_TRANSACTIONS instead, and
// another id's add is still answered.
func TestImplicitAddWaitingBounded(t *testing.T) {
	g := newRig(t)
	o := g.acquire(0, "t-0")
	leader := g.relay(0, &servingAs{o: &o})
	co := g.relay(1, nil)
	co.adds.mu.Lock()
	co.adds.maxWaiting = 4
	co.adds.mu.Unlock()
	co.SetCoordinator(g.acquire(1, "coordinator"))
	w := newWaitingAdder(t)
	co.SetAdder(w.add)
	busy := askBusy(g, leader, 6)
	for range 2 {
		if code := receive(t, busy, "an add past the bound"); code != 51 {
			t.Fatalf("add past the bound answered %d, want CONCURRENT_TRANSACTIONS", code)
		}
	}
	code, err := leader.AddImplicitly(g.ctx(), "other", "t", 0, 8, 0)
	if err != nil || code != 0 {
		t.Fatalf("another id's add: %d %v, want NONE", code, err)
	}
	w.finish()
	for range 4 {
		if code := receive(t, busy, "a waiting add answered"); code != 0 {
			t.Fatalf("waiting add answered %d, want NONE", code)
		}
	}
}

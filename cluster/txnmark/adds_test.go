package txnmark

import (
	"context"
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
	co.SetAdder(func(id string, pid int64, epoch int16, topic string, partition int32) int16 {
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
	old.SetAdder(func(string, int64, int16, string, int32) int16 {
		defer close(staleDone)
		return 22 // INVALID_PRODUCER_ID_MAPPING: stale memory
	})
	current := g.relay(0, &servingAs{o: &o})
	current.SetCoordinator(g.acquire(0, "coordinator"))
	current.SetAdder(func(string, int64, int16, string, int32) int16 {
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
	co.SetAdder(func(string, int64, int16, string, int32) int16 {
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

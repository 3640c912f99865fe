package owner_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/etcdtest"
	"github.com/kgateway/kgateway/cluster/owner"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// deadline bounds every test's waits.
const deadline = 60 * time.Second

const prefix = "/kg/"

type node struct {
	name string
	c    *clientv3.Client // the node's requests
	s    *concurrency.Session
	m    *owner.Manager
}

// newNode starts a node whose session (lease keep-alive) runs on a client
// of its own, leaseClient: closing that client stops the keep-alives
// while the node goes on sending requests, as a node paused or cut off
// from etcd past its lease and then resumed.
func newNode(t *testing.T, s *etcdtest.Server, name string, ttl int) (*node, *clientv3.Client) {
	t.Helper()
	c, leaseClient := s.Client(t), s.Client(t)
	sess, err := concurrency.NewSession(leaseClient, concurrency.WithTTL(ttl))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return &node{name: name, c: c, s: sess, m: owner.New(c, sess, name, prefix)}, leaseClient
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	t.Cleanup(cancel)
	return ctx
}

func acquire(t *testing.T, n *node, p string) owner.Ownership {
	t.Helper()
	o, err := n.m.Acquire(ctxT(t), p)
	if err != nil {
		t.Fatalf("%s acquires %s: %v", n.name, p, err)
	}
	return o
}

// publish is a fenced write of key=val conditional on owns.
func publish(t *testing.T, n *node, key, val string, owns ...owner.Ownership) error {
	t.Helper()
	_, err := n.m.Fenced(ctxT(t), owns, clientv3.OpPut(key, val))
	return err
}

func value(t *testing.T, c *clientv3.Client, key string) string {
	t.Helper()
	resp, err := c.Get(ctxT(t), key)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) == 0 {
		return ""
	}
	return string(resp.Kvs[0].Value)
}

func checkFenced(t *testing.T, err error, lost ...string) {
	t.Helper()
	var fe *owner.FencedError
	if !errors.Is(err, owner.ErrFenced) || !errors.As(err, &fe) || !slices.Equal(fe.Lost, lost) {
		t.Fatalf("fenced transaction: %v, want ErrFenced losing %v", err, lost)
	}
}

// TestOneOwnerAtATime (one owner at a time): nodes acquiring a partition at once: exactly
// one wins, the others get ErrOwned, and the owner is the winner.
func TestOneOwnerAtATime(t *testing.T) {
	s := etcdtest.Start(t)
	var nodes []*node
	for i := range 4 {
		n, _ := newNode(t, s, fmt.Sprintf("node-%d", i), 60)
		nodes = append(nodes, n)
	}
	for round := range 5 {
		p := fmt.Sprintf("t/%d", round)
		errs := make([]error, len(nodes))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, n := range nodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = n.m.Acquire(ctxT(t), p)
			}()
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("%s: nodes %d and %d both own it", p, winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, owner.ErrOwned):
				t.Fatalf("%s: node %d: %v", p, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("%s: no owner", p)
		}
		// A held partition stays held: acquiring it again loses.
		for i, n := range nodes {
			if _, err := n.m.Acquire(ctxT(t), p); i != winner && !errors.Is(err, owner.ErrOwned) {
				t.Fatalf("%s: node %d acquires a held partition: %v", p, i, err)
			}
		}
		who, epoch, err := nodes[0].m.Owner(ctxT(t), p)
		if err != nil || who != nodes[winner].name || epoch != 1 {
			t.Fatalf("%s: owner %q epoch %d (%v), want %s at 1", p, who, epoch, err, nodes[winner].name)
		}
	}
}

// TestEpochIncreasesOnEveryChange (the rising fencing epoch, ownership ending with the lease): every acquisition bumps the
// epoch, including one by the same node after it lost its lease; a
// repeated Acquire by the owner changes nothing; the old acquisition is
// fenced.
func TestEpochIncreasesOnEveryChange(t *testing.T) {
	s := etcdtest.Start(t)
	a, _ := newNode(t, s, "a", 60)
	b, _ := newNode(t, s, "b", 60)
	const p = "t/0"
	o1 := acquire(t, a, p)
	if again := acquire(t, a, p); o1.Epoch != 1 || again != o1 {
		t.Fatalf("epochs %d then %d, want 1 twice", o1.Epoch, again.Epoch)
	}
	if err := a.m.Release(ctxT(t), o1); err != nil {
		t.Fatal(err)
	}
	o2 := acquire(t, b, p)
	if err := b.s.Close(); err != nil { // revokes b's lease
		t.Fatal(err)
	}
	o3 := acquire(t, a, p)
	if _, err := a.c.Revoke(ctxT(t), a.s.Lease()); err != nil {
		t.Fatal(err)
	}
	a2, _ := newNode(t, s, "a", 60) // a again, with a new session
	o4 := acquire(t, a2, p)
	if got := []uint64{o1.Epoch, o2.Epoch, o3.Epoch, o4.Epoch}; !slices.Equal(got, []uint64{1, 2, 3, 4}) {
		t.Fatalf("epochs %v, want 1 2 3 4", got)
	}
	checkFenced(t, publish(t, a2, "/data/"+p, "stale", o3), p)
	if err := publish(t, a2, "/data/"+p, "fresh", o4); err != nil {
		t.Fatal(err)
	}
}

// TestExpiredOwnerIsFenced (ownership ending with the lease, the fenced transaction): a node whose lease ended (revoked
// here, as etcd does when it expires) cannot complete a guarded
// transaction: neither before another node took over nor after; the new
// owner can.
func TestExpiredOwnerIsFenced(t *testing.T) {
	s := etcdtest.Start(t)
	a, _ := newNode(t, s, "a", 60)
	b, _ := newNode(t, s, "b", 60)
	const p, key = "t/0", "/data/t/0"
	oa := acquire(t, a, p)
	if err := publish(t, a, key, "a1", oa); err != nil {
		t.Fatalf("owner's publish: %v", err)
	}
	if _, err := b.c.Revoke(ctxT(t), a.s.Lease()); err != nil {
		t.Fatal(err)
	}
	checkFenced(t, publish(t, a, key, "a2", oa), p)
	ob := acquire(t, b, p)
	if ob.Epoch != oa.Epoch+1 {
		t.Fatalf("new owner's epoch %d after %d", ob.Epoch, oa.Epoch)
	}
	checkFenced(t, publish(t, a, key, "a3", oa), p)
	if err := publish(t, b, key, "b1", ob); err != nil {
		t.Fatalf("new owner's publish: %v", err)
	}
	if got := value(t, b.c, key); got != "b1" {
		t.Fatalf("value %q, want b1", got)
	}
}

// TestPausedOwnerIsFenced (ownership ending with the lease, the fenced transaction): a node whose keep-alives stop (paused
// or cut off) keeps running; etcd expires its lease after the TTL by its
// own clock, another node takes the partition over, and the resumed
// node's guarded publish fails.
func TestPausedOwnerIsFenced(t *testing.T) {
	s := etcdtest.Start(t)
	a, aLease := newNode(t, s, "a", 2)
	b, _ := newNode(t, s, "b", 60)
	const p, key = "t/0", "/data/t/0"
	oa := acquire(t, a, p)
	aLease.Close() // the pause: no more keep-alives, the lease is not revoked
	ctx := ctxT(t)
	var ob owner.Ownership
	for {
		var err error
		if ob, err = b.m.Acquire(ctx, p); err == nil {
			break
		}
		if !errors.Is(err, owner.ErrOwned) {
			t.Fatalf("b acquires: %v", err)
		}
		// Wait for a's owner key to go, then try again.
		wctx, stop := context.WithCancel(ctx)
		for resp := range b.c.Watch(wctx, prefix+"owner/"+p, clientv3.WithRev(1)) {
			if slices.ContainsFunc(resp.Events, func(e *clientv3.Event) bool { return e.Type == clientv3.EventTypeDelete }) {
				break
			}
		}
		stop()
		if ctx.Err() != nil {
			t.Fatal("a's lease never expired")
		}
	}
	checkFenced(t, publish(t, a, key, "a-resumed", oa), p)
	if err := publish(t, b, key, "b1", ob); err != nil {
		t.Fatal(err)
	}
	if got := value(t, b.c, key); got != "b1" {
		t.Fatalf("value %q, want b1", got)
	}
}

// TestFencedAllOrNothing (the fenced transaction): a transaction over several partitions runs
// only if all are still held; losing one writes nothing and names it.
func TestFencedAllOrNothing(t *testing.T) {
	s := etcdtest.Start(t)
	a, _ := newNode(t, s, "a", 60)
	b, _ := newNode(t, s, "b", 60)
	o1, o2 := acquire(t, a, "t/1"), acquire(t, a, "t/2")
	if _, err := a.m.Fenced(ctxT(t), []owner.Ownership{o1, o2}, clientv3.OpPut("/x", "1"), clientv3.OpPut("/y", "1")); err != nil {
		t.Fatal(err)
	}
	if err := a.m.Release(ctxT(t), o2); err != nil {
		t.Fatal(err)
	}
	acquire(t, b, "t/2")
	_, err := a.m.Fenced(ctxT(t), []owner.Ownership{o1, o2}, clientv3.OpPut("/x", "2"), clientv3.OpPut("/y", "2"))
	checkFenced(t, err, "t/2")
	if x, y := value(t, a.c, "/x"), value(t, a.c, "/y"); x != "1" || y != "1" {
		t.Fatalf("after a fenced failure /x=%q /y=%q, want both 1", x, y)
	}
}

// TestOwnershipSurvivesEtcdRestart: an etcd restart ends no ownership: the
// session's lease is restored and kept alive, the owner's guarded
// transactions go on, and another node still cannot acquire.
func TestOwnershipSurvivesEtcdRestart(t *testing.T) {
	s := etcdtest.Start(t)
	a, _ := newNode(t, s, "a", 60)
	b, _ := newNode(t, s, "b", 60)
	const p, key = "t/0", "/data/t/0"
	oa := acquire(t, a, p)
	s.Restart()
	if err := publish(t, a, key, "a1", oa); err != nil {
		t.Fatalf("owner's publish after the restart: %v", err)
	}
	if _, err := b.m.Acquire(ctxT(t), p); !errors.Is(err, owner.ErrOwned) {
		t.Fatalf("acquiring a held partition after the restart: %v", err)
	}
}

package sharestate_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/etcdtest"
	"github.com/kgateway/kgateway/cluster/owner"
	"github.com/kgateway/kgateway/cluster/sharestate"
	"github.com/kgateway/kgateway/offsets"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

const prefix = "/kg/"

var tp = offsets.TopicPartition{Topic: "t", Partition: 0}

// oneTopic maps tp to the pkey "p".
type oneTopic struct{}

func (oneTopic) PKey(topic string, partition int32) (string, bool) {
	return "p", topic == tp.Topic && partition == tp.Partition
}

func (oneTopic) Partition(pkey string) (offsets.TopicPartition, bool) { return tp, pkey == "p" }

// node is one node's view: its session, ownerships and share store. The
// ownerships it believes it serves are set by the test, as a paused node
// still believes it owns what it owned.
type node struct {
	sess   *concurrency.Session
	owners *owner.Manager
	store  *sharestate.Store
	mu     sync.Mutex
	held   map[string]owner.Ownership
}

func newNode(t *testing.T, e *etcdtest.Server, name string) *node {
	t.Helper()
	c, lc := e.Client(t), e.Client(t)
	sess, err := concurrency.NewSession(lc, concurrency.WithTTL(5))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	n := &node{sess: sess, owners: owner.New(c, sess, name, prefix), held: map[string]owner.Ownership{}}
	n.store = sharestate.New(sharestate.Options{Client: c, Owners: n.owners, Prefix: prefix,
		Serving: n.serving, Topics: oneTopic{}, CoordinatorKey: "coordinator"})
	return n
}

func (n *node) serving(pkey string) (owner.Ownership, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	o, ok := n.held[pkey]
	return o, ok
}

func (n *node) acquire(t *testing.T, pkey string) int32 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o, err := n.owners.Acquire(ctx, pkey)
	if err != nil {
		t.Fatalf("acquire %s: %v", pkey, err)
	}
	n.mu.Lock()
	n.held[pkey] = o
	n.mu.Unlock()
	return int32(o.Epoch)
}

func state(start int64) offsets.SharePartition {
	return offsets.SharePartition{TopicPartition: tp, StartOffset: start,
		Runs: []offsets.ShareRun{{First: start, Last: start + 1, State: offsets.ShareAvailable, DeliveryCount: 1}}}
}

func load(t *testing.T, n *node) (int64, int64) {
	t.Helper()
	sp, v, err := n.store.Load("g", tp)
	if err != nil {
		t.Fatal(err)
	}
	return sp.StartOffset, v
}

// TestFencedLeaderCannotOverwrite (fenced share-state writes): a leader whose ownership ended
// (its session gone, the partition acquired by another node) believes it
// still leads; its write is refused whatever version it presents, and
// the new leader's state stays.
func TestFencedLeaderCannotOverwrite(t *testing.T) {
	e := etcdtest.Start(t)
	a, b := newNode(t, e, "a"), newNode(t, e, "b")
	epochA := a.acquire(t, "p")
	if got, ok := a.store.Serving(tp); !ok || got != epochA {
		t.Fatalf("Serving: %d %v, want %d", got, ok, epochA)
	}
	v1, err := a.store.Put("g", state(5), epochA, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.store.Put("g", state(6), epochA, 0); !errors.Is(err, sharestate.ErrRefused) {
		t.Fatalf("put at a stale version: %v, want refused", err)
	}
	// a's lease ends (a paused past it); b takes the partition over.
	a.sess.Close()
	epochB := b.acquire(t, "p")
	if start, v := load(t, b); start != 5 || v != v1 {
		t.Fatalf("new leader reads start %d version %d, want 5 %d", start, v, v1)
	}
	v2, err := b.store.Put("g", state(7), epochB, v1)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []int64{v1, v2} {
		if _, err := a.store.Put("g", state(99), epochA, v); !errors.Is(err, sharestate.ErrRefused) {
			t.Fatalf("fenced leader's put at version %d: %v, want refused", v, err)
		}
	}
	// Nor can b write under a's epoch.
	if _, err := b.store.Put("g", state(98), epochA, v2); !errors.Is(err, sharestate.ErrRefused) {
		t.Fatalf("put under another epoch: %v, want refused", err)
	}
	if start, v := load(t, b); start != 7 || v != v2 {
		t.Fatalf("state after the fenced writes: start %d version %d, want 7 %d", start, v, v2)
	}
}

// TestAdminResetRefusesStaleLeader (the share-state admin reset): the coordinator's reset changes
// the version a leader compares, so the leader's next write is refused
// and it reads the reset state; a node without the coordinator role
// resets nothing.
func TestAdminResetRefusesStaleLeader(t *testing.T) {
	e := etcdtest.Start(t)
	leader, coord := newNode(t, e, "leader"), newNode(t, e, "coord")
	epoch := leader.acquire(t, "p")
	v1, err := leader.store.Put("g", state(10), epoch, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := coord.store.Reset("g", []offsets.SharePartition{{TopicPartition: tp, StartOffset: 0}}, nil); !errors.Is(err, sharestate.ErrRefused) {
		t.Fatalf("reset without the coordinator role: %v, want refused", err)
	}
	coord.acquire(t, "coordinator")
	if err := coord.store.Reset("g", []offsets.SharePartition{{TopicPartition: tp, StartOffset: 0}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := leader.store.Put("g", state(11), epoch, v1); !errors.Is(err, sharestate.ErrRefused) {
		t.Fatalf("leader's put over the reset: %v, want refused", err)
	}
	start, v := load(t, leader)
	if start != 0 {
		t.Fatalf("after the reset the state starts at %d, want 0", start)
	}
	if _, err := leader.store.Put("g", state(1), epoch, v); err != nil {
		t.Fatalf("put at the reset's version: %v", err)
	}
	sps, err := coord.store.List("g")
	if err != nil || len(sps) != 1 || sps[0].StartOffset != 1 {
		t.Fatalf("List: %+v %v", sps, err)
	}
	if err := coord.store.DeleteGroup("g"); err != nil {
		t.Fatal(err)
	}
	if _, v := load(t, leader); v != 0 {
		t.Fatalf("state left after DeleteGroup (version %d)", v)
	}
}

// TestDeletePartitions (the share-state admin reset): a deleted topic's partitions lose their
// states in every group; other partitions keep theirs.
func TestDeletePartitions(t *testing.T) {
	e := etcdtest.Start(t)
	coord := newNode(t, e, "coord")
	coord.acquire(t, "coordinator")
	c := e.Client(t)
	for _, k := range []string{"share/67/p", "share/68/p", "share/67/q", "share/68/pp"} {
		if _, err := c.Put(context.Background(), prefix+k, "x"); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := coord.store.DeletePartitions(ctx, []string{"p"}); err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get(ctx, prefix+"share/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, kv := range resp.Kvs {
		left = append(left, strings.TrimPrefix(string(kv.Key), prefix))
	}
	if strings.Join(left, ",") != "share/67/q,share/68/pp" {
		t.Fatalf("left %v, want the states of q and pp", left)
	}
}

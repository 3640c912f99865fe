package cluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A peer a node can be cut from.
type peer int

const (
	peerEtcd peer = iota
	peerObjectStore
	peerClients
)

func (p peer) String() string { return [...]string{"etcd", "the object store", "its clients"}[p] }

// Cut parts node i from p in dir (a partitionable cluster's): the
// packets vanish; the processes run on.
func (c *Cluster) Cut(i int, p peer, dir cutDir) {
	c.t.Helper()
	h := c.nodes[i].host
	switch p {
	case peerEtcd:
		c.lab.cut(h, c.lab.etcdIP(), dir)
	case peerObjectStore:
		c.lab.cut(h, c.lab.s3IP(), dir)
	case peerClients:
		c.lab.cut(h, h.hostIP, dir)
	}
}

// Heal removes every cut of node i.
func (c *Cluster) Heal(i int) { c.lab.heal(c.nodes[i].host) }

// cutUntilFelt cuts node i as pc says and waits until the cut shows
// (so that a cut that changed nothing fails the test): a node cut from
// etcd notices its session lost, one cut from the object store fails a
// publication, one cut from its clients answers none of them.
func (c *Cluster) cutUntilFelt(i int, pc partitionCase) {
	c.t.Helper()
	var felt func(ctx context.Context) (bool, error)
	switch pc.p {
	case peerEtcd:
		before := c.LogCount(i, `"cluster-session-`)
		felt = func(context.Context) (bool, error) { return c.LogCount(i, `"cluster-session-`) > before, nil }
	case peerObjectStore:
		before := c.LogCount(i, `"storage-replicate-failed"`)
		felt = func(context.Context) (bool, error) { return c.LogCount(i, `"storage-replicate-failed"`) > before, nil }
	case peerClients:
		felt = func(ctx context.Context) (bool, error) {
			ctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			_, err := c.Ask(ctx, i, kmsg.NewPtrApiVersionsRequest())
			return err != nil, nil
		}
	}
	c.Cut(i, pc.p, pc.dir)
	waitFor(c.t, 90*time.Second, fmt.Sprintf("node %d to feel its cut from %s", i, pc), felt)
}

// partitionCase is one fault of the partition nemesis.
type partitionCase struct {
	p   peer
	dir cutDir
}

func (pc partitionCase) String() string {
	return fmt.Sprintf("%s %s", pc.p, [...]string{"both ways", "node to peer only", "peer to node only"}[pc.dir])
}

// TestClusterPartitions: network partitions, not process faults. Every
// node runs in a network namespace of its own; a nemesis cuts one node
// at a time from etcd, from the object store or from its clients, both
// ways or in one direction only, for longer than the session, heals the
// cut and lets the cluster recover, under idempotent producers (acks=all)
// and a consumer group. A node cut from etcd loses its session and its
// partitions move; one cut from the object store fails its publications
// and acknowledges nothing meanwhile; one cut from its clients keeps its
// partitions, which the clients cannot reach until the cut heals.
// Afterwards: every acknowledged record is in its partition exactly once,
// offsets are dense, the group consumed all of it and its committed
// offsets never went backwards.
//
// Every case once (about a minute in all); KGW_SOAK=1 cycles through them
// for ten minutes.
func TestClusterPartitions(t *testing.T) {
	load := time.Duration(0)
	if soak() {
		load = 10 * time.Minute
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	c := StartPartitionableCluster(t, 3)
	const topic, group, n = "partitions", "partitions-group", 6
	c.CreateTopic(topic, n)
	prod := c.StartProducers(topic, 2, "p", 4*time.Millisecond, nil)
	g := c.StartGroup(topic, group, 2)
	commits := c.SampleCommits(topic, group)
	book := prod.Book
	book.WaitAcked(t, 200, 60*time.Second)

	cases := []partitionCase{
		{peerEtcd, cutBoth}, {peerObjectStore, cutBoth}, {peerClients, cutBoth},
		{peerEtcd, cutIn}, {peerEtcd, cutOut}, {peerObjectStore, cutIn}, {peerClients, cutOut},
	}
	end := time.Now().Add(load)
	done := map[string]int{}
	for round := 0; round < len(cases) || time.Now().Before(end); round++ {
		pc := cases[round%len(cases)]
		i := rng.IntN(c.Len())
		if pc.p == peerObjectStore {
			// Only a node that leads a partition publishes objects; one
			// that leads none (a takeover can leave a node without any)
			// would have no cut to feel.
			leaders := c.WaitLeaders(topic, n, 90*time.Second)
			i = int(leaders[rng.IntN(len(leaders))].Leader)
		}
		t.Logf("round %d: node %d cut from %s", round, i, pc)
		c.cutUntilFelt(i, pc)
		c.Heal(i)
		done[pc.String()]++
		c.WaitLeaders(topic, n, 90*time.Second)
		book.WaitAcked(t, book.Acked()+100, 90*time.Second)
	}
	t.Logf("cuts: %v; %d acknowledged", done, book.Acked())

	c.checkGroupHistory(prod, g, commits, topic, group, n)
}

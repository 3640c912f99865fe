package cluster

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestClusterRealEtcd runs the cluster over a real three-member etcd
// cluster (the etcd server binary, fsyncing as in production) instead of
// one embedded member, while a nemesis kills -9 and restarts etcd members
// and kgateway nodes in turn, under idempotent producers (acks=all) and a
// consumer group. A quorum of two members keeps etcd serving through each
// member's death, so the cluster goes on; afterwards every acknowledged
// record is in its partition exactly once, offsets are dense, the group
// consumed everything and its committed offsets never went backwards.
//
// At least four rounds and 15 s of faults (about a minute in all);
// KGW_SOAK=1 runs five minutes.
func TestClusterRealEtcd(t *testing.T) {
	load := 15 * time.Second
	if soak() {
		load = 5 * time.Minute
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	c := StartClusterOnMembers(t, 3, 3)
	const topic, group, n = "real-etcd", "real-etcd-group", 6
	c.CreateTopic(topic, n)
	prod := c.StartProducers(topic, 2, "r", 4*time.Millisecond, nil)
	g := c.StartGroup(topic, group, 2)
	commits := c.SampleCommits(topic, group)
	book := prod.Book
	book.WaitAcked(t, 200, 60*time.Second)

	end := time.Now().Add(load)
	faults := map[string]int{}
	for round := 0; round < 4 || time.Now().Before(end); round++ {
		switch round % 2 {
		case 0:
			m := rng.IntN(c.Members.Len())
			t.Logf("round %d: kill -9 etcd member %d, restart it", round, m)
			c.Members.Kill(m)
			// The cluster goes on over the other two while it is dead.
			book.WaitAcked(t, book.Acked()+100, 60*time.Second)
			c.Members.Restart(m)
			faults["etcd member kill"]++
		case 1:
			i := rng.IntN(c.Len())
			t.Logf("round %d: kill -9 node %d, restart it", round, i)
			c.Kill(i)
			c.Restart(i)
			faults["node kill"]++
		}
		c.WaitLeaders(topic, n, 90*time.Second)
		book.WaitAcked(t, book.Acked()+100, 60*time.Second)
	}
	t.Logf("faults: %v; %d acknowledged", faults, book.Acked())

	prod.Stop(t)
	parts, _ := c.ReadAll(topic, n)
	book.Check(t, parts)
	c.WaitCommitted(group, topic, ends(parts, n), 2*time.Minute)
	g.Stop()
	commits.Stop()
	book.CheckConsumed(t, g.Consumed())
	back, samples := commits.Backward()
	if samples < 10 {
		t.Errorf("only %d samples of the committed offsets", samples)
	}
	for _, b := range back {
		t.Errorf("committed offset went backwards: %s", b)
	}
	if faults["etcd member kill"] == 0 {
		t.Fatal(fmt.Sprint("no etcd member was killed: ", faults))
	}
}

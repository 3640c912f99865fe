package cluster

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"
)

// soak reports whether KGW_SOAK=1 asks for the long versions (make soak).
func soak() bool { return os.Getenv("KGW_SOAK") == "1" }

// TestClusterNemesis: idempotent producers (acks=all), a consumer group
// and a transactional pipeline (consume, transform, produce, offsets in
// the transaction) run while a nemesis kills -9 and restarts nodes, pauses a leader
// past its session and resumes it, and restarts etcd. Afterwards every
// acknowledged record is in its partition exactly once where it was
// acknowledged, offsets are dense, no record sent to a paused node was
// published (fencing, the fenced transaction and replication under ownership), two nodes serve each partition alike
// (rebuild before serving), the group's and the pipeline's committed offsets never went
// backwards (the coordinator role), and the pipeline's output holds each input record
// exactly once at read_committed (coordinator-fenced records, leader-applied records and verification across nodes).
//
// About a minute of faults; KGW_SOAK=1 runs ten.
func TestClusterNemesis(t *testing.T) {
	load := 60 * time.Second
	if soak() {
		load = 10 * time.Minute
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("nemesis seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	c := StartCluster(t, 3)
	const topic, group, n = "nemesis", "nemesis-group", 6
	const out, pipeGroup, outN = "nemesis-out", "nemesis-pipe", 3
	c.CreateTopic(topic, n)
	c.CreateTopic(out, outN)
	prod := c.StartProducers(topic, 3, "n", 4*time.Millisecond, nil)
	g := c.StartGroup(topic, group, 2)
	commits := c.SampleCommits(topic, group)
	pipe := c.StartPipeline(topic, out, pipeGroup, 2)
	pipeCommits := c.SampleCommits(topic, pipeGroup)
	book := prod.Book
	book.WaitAcked(t, 200, 60*time.Second)

	end := time.Now().Add(load)
	faults := map[string]int{}
	for round := 0; round < 3 || time.Now().Before(end); round++ {
		switch round % 3 {
		case 0:
			i := rng.IntN(c.Len())
			t.Logf("round %d: kill -9 node %d, restart it", round, i)
			c.Kill(i)
			c.Restart(i)
			faults["kill"]++
		case 1:
			p := rng.Int32N(n)
			x := pauseFenced(t, c, topic, n, p, book, fmt.Sprintf("pause-%d", round), nil)
			t.Logf("round %d: paused node %d (leader of partition %d) past its session, resumed: fenced", round, x, p)
			faults["pause"]++
		case 2:
			t.Logf("round %d: restart etcd", round)
			c.RestartEtcd()
			faults["etcd"]++
		}
		// The cluster recovers: every partition led, and writes go on.
		c.WaitLeaders(topic, n, 90*time.Second)
		book.WaitAcked(t, book.Acked()+100, 60*time.Second)
		time.Sleep(500 * time.Millisecond) // pacing: some load between faults
	}
	t.Logf("faults: %v; %d acknowledged so far", faults, book.Acked())

	prod.Stop(t)
	parts, leaders := c.ReadAll(topic, n)
	book.Check(t, parts)
	c.WaitCommitted(group, topic, ends(parts, n), 2*time.Minute)
	c.WaitCommitted(pipeGroup, topic, ends(parts, n), 2*time.Minute)
	g.Stop()
	pipe.Stop()
	commits.Stop()
	pipeCommits.Stop()
	book.CheckConsumed(t, g.Consumed())
	pipe.CheckExactlyOnce(t, parts, outN)
	for _, s := range []*CommitSampler{commits, pipeCommits} {
		back, samples := s.Backward()
		if samples < 10 {
			t.Errorf("only %d samples of the committed offsets", samples)
		}
		for _, b := range back {
			t.Errorf("committed offset went backwards: %s", b)
		}
	}
	c.CheckCommitsSurviveCoordinatorKill(group, topic, ends(parts, n))
	leaders = c.WaitLeaders(topic, n, 90*time.Second)

	// Each partition as a second node serves it: stop its leader
	// (gracefully), read it from the node it moved to, start it again.
	for i := range c.Len() {
		var led []int32
		for p, l := range leaders {
			if l.Leader == int32(i) {
				led = append(led, int32(p))
			}
		}
		if len(led) == 0 {
			continue
		}
		c.Stop(i)
		again, moved := c.ReadAll(topic, n)
		for _, p := range led {
			if moved[p].Leader == int32(i) || !slices.Contains(c.Up(), int(moved[p].Leader)) {
				t.Fatalf("partition %d still on node %d", p, i)
			}
			if d := sameRecs(parts[p], again[p]); d != "" {
				t.Errorf("partition %d: node %d and node %d differ: %s", p, i, moved[p].Leader, d)
			}
		}
		c.Restart(i)
		leaders = c.WaitLeaders(topic, n, 90*time.Second)
	}
}

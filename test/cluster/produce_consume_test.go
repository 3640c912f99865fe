package cluster

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/node"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kgo"
)

// preferredLeaders is where placement (rendezvous placement) puts each partition of a topic
// among live nodes.
func preferredLeaders(id [16]byte, n int32, live []int32) []int32 {
	out := make([]int32, n)
	for p := range n {
		out[p] = node.Preferred(node.PKey(resolver.TopicID(id), p), live)
	}
	return out
}

// waitPlacement waits until the leaders every up node reports are the
// placement over live (rendezvous placement), and returns them.
func (c *Cluster) waitPlacement(topic string, n int32, live []int32) []Partition {
	c.t.Helper()
	var out []Partition
	waitFor(c.t, 90*time.Second, fmt.Sprintf("%s's leaders to be placed over nodes %v", topic, live), func(ctx context.Context) (bool, error) {
		l, err := c.Leaders(ctx, topic, n)
		if err != nil {
			return false, err
		}
		v, err := c.Metadata(ctx, c.Up()[0], topic)
		if err != nil {
			return false, err
		}
		want := preferredLeaders(v.ID, n, live)
		for p := range n {
			if l[p].Leader != want[p] {
				return false, fmt.Errorf("leaders %v, placement %v", l, want)
			}
		}
		out = l
		return true, nil
	})
	return out
}

// createSpreadTopic creates a topic whose placement gives every node of
// now a partition, and the node about to join one too: topic ids are
// random, so a name is tried until one is (each try checks rendezvous placement).
func (c *Cluster) createSpreadTopic(prefix string, n int32, now, joining []int32) (string, [16]byte) {
	c.t.Helper()
	for try := range 20 {
		topic := fmt.Sprintf("%s-%d", prefix, try)
		c.CreateTopic(topic, n)
		c.waitPlacement(topic, n, now)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		v, err := c.Metadata(ctx, 0, topic)
		cancel()
		if err != nil {
			c.t.Fatal(err)
		}
		spread := true
		for _, live := range [][]int32{now, joining} {
			leaders := preferredLeaders(v.ID, n, live)
			for _, id := range live {
				spread = spread && slices.Contains(leaders, id)
			}
		}
		if spread {
			return topic, v.ID
		}
	}
	c.t.Fatalf("no topic of %d partitions spread over nodes %v and %v in 20 tries", n, now, joining)
	return "", [16]byte{}
}

// TestClusterProduceConsume: three nodes share a topic's partitions (rendezvous placement);
// records round-trip through any node; a fourth node takes its share;
// a graceful stop hands a node's partitions over (graceful handover) without a single
// failed produce of an idempotent producer with a modest retry budget.
func TestClusterProduceConsume(t *testing.T) {
	c := StartCluster(t, 3)
	const n = 6
	topic, _ := c.createSpreadTopic("spread", n, []int32{0, 1, 2}, []int32{0, 1, 2, 3})

	// Round trip: produced through the cluster, consumed from the start.
	book := newBook()
	cl := c.NewClient(kgo.DefaultProduceTopic(topic), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var sent []*kgo.Record
	for i := range 60 {
		v := fmt.Sprintf("rt-%d", i)
		book.issue(v)
		sent = append(sent, &kgo.Record{Key: []byte(v), Value: []byte(v)})
	}
	for _, r := range cl.ProduceSync(ctx, sent...) {
		if r.Err != nil {
			t.Fatalf("produce: %v", r.Err)
		}
		book.done(r.Record, nil)
	}
	where := map[string]int32{} // consumed value -> partition
	last := map[int32]int64{}
	for len(where) < len(sent) {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", len(where), len(sent), err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if prev, ok := last[r.Partition]; ok && r.Offset <= prev {
				t.Errorf("partition %d: offset %d consumed after %d", r.Partition, r.Offset, prev)
			}
			last[r.Partition] = r.Offset
			where[string(r.Value)] = r.Partition
		})
	}
	for _, r := range sent {
		if p, ok := where[string(r.Value)]; !ok || p != r.Partition {
			t.Errorf("%s produced to partition %d, consumed from %d (%v)", r.Value, r.Partition, p, ok)
		}
	}

	// A fourth node joins: the partitions placement now gives it move.
	c.Add()
	c.waitPlacement(topic, n, []int32{0, 1, 2, 3})
	parts, _ := c.ReadAll(topic, n) // node 3 answers for its share
	book.Check(t, parts)

	// A graceful stop of the node leading most partitions, under load.
	prod := c.StartProducers(topic, 2, "handover", 3*time.Millisecond, book, kgo.RecordRetries(10))
	book.WaitAcked(t, book.Acked()+200, 60*time.Second)
	leaders := c.WaitLeaders(topic, n, 60*time.Second)
	count := map[int32]int{}
	x := int32(0)
	for _, l := range leaders {
		count[l.Leader]++
		if count[l.Leader] > count[x] {
			x = l.Leader
		}
	}
	c.Stop(int(x))
	var rest []int32
	for id := range int32(4) {
		if id != x {
			rest = append(rest, id)
		}
	}
	c.waitPlacement(topic, n, rest)
	book.WaitAcked(t, book.Acked()+200, 60*time.Second)
	prod.Stop(t)
	if f := book.Failed(); len(f) > 0 {
		for v, err := range f {
			t.Errorf("produce of %s failed across the graceful stop of node %d: %v (and %d more)", v, x, err, len(f)-1)
			break
		}
	}
	parts, _ = c.ReadAll(topic, n)
	book.Check(t, parts)
}

// TestClusterSingleNode: a cluster of one node killed (-9) and restarted
// three times under load loses nothing acknowledged: the node rebuilds
// every partition from the published copy (rebuild before serving) and the group state from
// etcd (the coordinator role), so a consumer group goes on from its commits, and a
// transactional pipeline stays exactly once.
func TestClusterSingleNode(t *testing.T) {
	c := StartCluster(t, 1)
	const topic, group, n = "alone", "alone-group", 3
	const out, pipeGroup, outN = "alone-out", "alone-pipe", 2
	c.CreateTopic(topic, n)
	c.CreateTopic(out, outN)
	prod := c.StartProducers(topic, 2, "s", 3*time.Millisecond, nil)
	g := c.StartGroup(topic, group, 1)
	commits := c.SampleCommits(topic, group)
	pipe := c.StartPipeline(topic, out, pipeGroup, 1)
	for range 3 {
		prod.Book.WaitAcked(t, prod.Book.Acked()+150, 60*time.Second)
		c.Kill(0)
		c.Restart(0)
		c.WaitLeaders(topic, n, 90*time.Second)
	}
	prod.Book.WaitAcked(t, prod.Book.Acked()+150, 60*time.Second)
	prod.Stop(t)
	parts, _ := c.ReadAll(topic, n)
	prod.Book.Check(t, parts)
	c.WaitCommitted(group, topic, ends(parts, n), 2*time.Minute)
	c.WaitCommitted(pipeGroup, topic, ends(parts, n), 2*time.Minute)
	g.Stop()
	pipe.Stop()
	commits.Stop()
	prod.Book.CheckConsumed(t, g.Consumed())
	pipe.CheckExactlyOnce(t, parts, outN)
	back, _ := commits.Backward()
	for _, b := range back {
		t.Errorf("committed offset went backwards: %s", b)
	}
	c.CheckCommitsSurviveCoordinatorKill(group, topic, ends(parts, n))
}

package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// pauseFenced pauses the leader x of partition p past its session
// timeout and shows fencing (E4, via the node's publication J4):
//   - a Produce sent to x while it is paused (it sits in x's socket) is
//     answered NOT_LEADER_OR_FOLLOWER once x resumes, and its record is
//     never published (book forbids it; Book.Check looks);
//   - meanwhile p moved to another node under a higher epoch;
//   - after the resume x stops claiming p under its old epoch.
//
// while is called once p has moved and before x resumes (a test
// produces to the new leader there). It returns x.
func pauseFenced(t *testing.T, c *Cluster, topic string, n, p int32, book *Book, tag string, while func()) int {
	t.Helper()
	before := c.WaitLeaders(topic, n, 90*time.Second)[p]
	x := int(before.Leader)
	rc := dialRaw(t, c.Node(x).Addr)
	// One round trip first, so the connection is served, not only queued.
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 0
	if err := rc.send(av); err != nil {
		t.Fatal(err)
	}
	avr := kmsg.NewPtrApiVersionsResponse()
	avr.Version = 0
	if err := rc.recv(avr, 30*time.Second); err != nil {
		t.Fatalf("node %d: ApiVersions: %v", x, err)
	}

	c.Pause(x)
	probe := tag + "-sent-to-paused-node"
	book.Forbid(probe, fmt.Sprintf("produced to partition %d on node %d while it was paused past its session", p, x))
	if err := rc.produceRaw(topic, p, probe, probe); err != nil {
		t.Fatal(err)
	}
	c.waitDeregistered(x)
	after := c.WaitLeaders(topic, n, 90*time.Second)[p]
	if after.Leader == int32(x) || after.Epoch <= before.Epoch {
		t.Fatalf("partition %d: leader %d epoch %d while node %d (epoch %d) is paused", p, after.Leader, after.Epoch, x, before.Epoch)
	}
	if while != nil {
		while()
	}
	c.Resume(x)

	code, off, err := rc.produceResult(90 * time.Second)
	if err != nil {
		t.Fatalf("node %d: no answer to the produce sent while it was paused: %v", x, err)
	}
	if code != kerr.NotLeaderForPartition.Code {
		t.Errorf("node %d answered the produce sent while it was paused (partition %d, epoch %d, now node %d epoch %d) with %v, offset %d; want NOT_LEADER_OR_FOLLOWER",
			x, p, before.Epoch, after.Leader, after.Epoch, kerr.ErrorForCode(code), off)
	}
	waitFor(t, 60*time.Second, fmt.Sprintf("node %d to stop claiming partition %d under epoch %d", x, p, before.Epoch), func(ctx context.Context) (bool, error) {
		v, err := c.Metadata(ctx, x, topic)
		if err != nil {
			return false, err
		}
		if got := v.Partitions[p]; got == before {
			return false, fmt.Errorf("it still reports itself leader at epoch %d", got.Epoch)
		}
		return true, nil
	})
	return x
}

// TestClusterPauseFencing: a node paused past its session loses its
// partitions to another node, and what it was sent meanwhile is refused
// and never published; acknowledged writes of the new leader all stay.
func TestClusterPauseFencing(t *testing.T) {
	c := StartCluster(t, 2)
	const topic, n = "fenced", 2
	c.CreateTopic(topic, n)
	prod := c.StartProducers(topic, 1, "f", 5*time.Millisecond, nil)
	prod.Book.WaitAcked(t, 100, 60*time.Second)
	pauseFenced(t, c, topic, n, 0, prod.Book, "f", func() {
		// The new leader takes writes while the old one is frozen.
		prod.Book.WaitAcked(t, prod.Book.Acked()+100, 60*time.Second)
	})
	c.WaitLeaders(topic, n, 90*time.Second)
	prod.Book.WaitAcked(t, prod.Book.Acked()+100, 60*time.Second)
	prod.Stop(t)
	parts, _ := c.ReadAll(topic, n)
	prod.Book.Check(t, parts)
}

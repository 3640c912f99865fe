package cluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kgateway/kgateway/test/s3server"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// pauseFenced pauses the leader x of partition p past its session
// timeout and shows fencing (the fenced transaction, via the node's publication replication under ownership):
//   - a Produce sent to x while it is paused (it sits in x's socket) is
//     answered NOT_LEADER_OR_FOLLOWER once x resumes, and its record is
//     never published (book forbids it; Book.Check looks);
//   - meanwhile p moved to another node under a higher epoch;
//   - after the resume x stops claiming p under its old epoch.
//
// while is called with p's new leader once p has moved, before x
// resumes (a test produces there). It returns x.
func pauseFenced(t testing.TB, c *Cluster, topic string, n, p int32, book *Book, tag string, while func(leader int)) int {
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
		while(int(after.Leader))
	}
	c.Resume(x)

	code, off, err := rc.produceResult(90 * time.Second)
	if err != nil {
		t.Fatalf("node %d: no answer to the produce sent while it was paused: %v", x, err)
	}
	t.Logf("node %d, paused past its session as leader of partition %d (epoch %d; now node %d, epoch %d), answered the produce sent meanwhile with %v",
		x, p, before.Epoch, after.Leader, after.Epoch, kerr.ErrorForCode(code))
	if code == 0 && reacquired(c, topic, n, p, x, after.Epoch) {
		// x took p back (it is p's preferred node) under a newer epoch
		// before the produce reached p's log: appended and published
		// under that ownership, as any leader's would be. Fencing is
		// about the old epoch, which published nothing.
		t.Logf("node %d took partition %d back under an epoch after %d before serving the produce: acknowledged at %d", x, p, after.Epoch, off)
		book.ack(probe, p, off)
	} else if code != kerr.NotLeaderForPartition.Code {
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

// reacquired reports whether node x leads partition p now under an epoch
// newer than epoch, once the nodes agree on the leaders: right after p
// moved back to x, a node may still report the move before it (Leaders
// fails while they disagree), so it asks again until they agree or 30 s
// have passed.
func reacquired(c *Cluster, topic string, n, p int32, x int, epoch int32) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if l, err := c.Leaders(ctx, topic, n); err == nil {
			return l[p].Leader == int32(x) && l[p].Epoch > epoch
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
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
	pauseFenced(t, c, topic, n, 0, prod.Book, "f", func(leader int) {
		// The new leader takes writes, at the offsets the frozen one
		// would have used.
		for i := range 5 {
			c.produceTo(t, leader, prod.Book, topic, 0, fmt.Sprintf("while-paused-%d", i))
		}
	})
	c.WaitLeaders(topic, n, 90*time.Second)
	prod.Book.WaitAcked(t, prod.Book.Acked()+100, 60*time.Second)
	prod.Stop(t)
	parts, _ := c.ReadAll(topic, n)
	prod.Book.Check(t, parts)
}

// commitObjects counts node x's group-commit objects in the bucket
// (diskless names them commits/<node>/...).
func (c *Cluster) commitObjects(t testing.TB, x int) int {
	t.Helper()
	n := 0
	root := filepath.Join(c.S3.Dir, s3server.Bucket, "commits", strconv.Itoa(x))
	err := filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			n++
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return n
}

// produceTo produces one record to partition p on node i itself, which
// must take it, and books it as acknowledged.
func (c *Cluster) produceTo(t testing.TB, i int, book *Book, topic string, p int32, v string) {
	t.Helper()
	rc := dialRaw(t, c.Node(i).Addr)
	if err := rc.produceRaw(topic, p, v, v); err != nil {
		t.Fatal(err)
	}
	code, off, err := rc.produceResult(60 * time.Second)
	if err != nil || code != 0 {
		t.Fatalf("node %d: produce %s to partition %d: %v, %v", i, v, p, kerr.ErrorForCode(code), err)
	}
	book.ack(v, p, off)
}

// TestClusterFencedCommit: a node cut off from etcd in the middle of a
// group commit (its object written, the transaction that publishes it
// held on its way to etcd) loses its partition when its session ends,
// and the new leader writes at the same offsets. When the old node's
// transaction gets through, the fencing guard refuses it (the fenced transaction, replication under ownership): the
// produce is answered NOT_LEADER_OR_FOLLOWER and its record is never
// published, while everything the new leader acknowledged stays.
func TestClusterFencedCommit(t *testing.T) {
	c := StartCluster(t, 2)
	const topic, n = "cutoff", 2
	c.CreateTopic(topic, n)
	book := newBook()
	before := c.WaitLeaders(topic, n, 90*time.Second)[0]
	x, y := int(before.Leader), 1-int(before.Leader)
	for i := range 5 {
		c.produceTo(t, x, book, topic, 0, fmt.Sprintf("before-%d", i))
	}

	rc := dialRaw(t, c.Node(x).Addr)
	objects := c.commitObjects(t, x)
	c.HoldEtcd(x)
	probe := "sent-to-a-node-cut-off-from-etcd"
	book.Forbid(probe, fmt.Sprintf("its node %d was cut off from etcd and lost the partition", x))
	if err := rc.produceRaw(topic, 0, probe, probe); err != nil {
		t.Fatal(err)
	}
	// Its object is written: the publishing transaction is on its way.
	waitFor(t, 30*time.Second, "the probe's group-commit object", func(context.Context) (bool, error) {
		return c.commitObjects(t, x) > objects, nil
	})
	c.waitDeregistered(x)
	after := c.WaitLeaders(topic, n, 90*time.Second)[0]
	if after.Leader != int32(y) || after.Epoch <= before.Epoch {
		t.Fatalf("partition 0: leader %d epoch %d after node %d (epoch %d) was cut off", after.Leader, after.Epoch, x, before.Epoch)
	}
	for i := range 5 {
		c.produceTo(t, y, book, topic, 0, fmt.Sprintf("after-%d", i))
	}
	c.ReleaseEtcd(x)

	code, off, err := rc.produceResult(90 * time.Second)
	if err != nil {
		t.Fatalf("node %d: no answer to the produce of the held commit: %v", x, err)
	}
	t.Logf("node %d answered the produce whose commit was held with %v", x, kerr.ErrorForCode(code))
	if code != kerr.NotLeaderForPartition.Code {
		t.Errorf("node %d answered the produce whose commit was held past its ownership with %v, offset %d; want NOT_LEADER_OR_FOLLOWER",
			x, kerr.ErrorForCode(code), off)
	}
	c.WaitLeaders(topic, n, 90*time.Second)
	parts, _ := c.ReadAll(topic, n)
	book.Check(t, parts)
}

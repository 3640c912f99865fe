package test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// freeAddr returns a loopback address with a port that was free a moment
// ago: the binary is restarted on it, so that clients keep their seed.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

const (
	killEOSPartitions   = 4
	killEOSPerPartition = 200
	killEOSKills        = 3
)

// TestKillTransactionalPipeline runs an exactly-once consume-transform-
// produce pipeline of two franz-go GroupTransactSession members against
// the real binary and SIGKILLs the binary killEOSKills times, at random
// moments, restarting it on the same address: the members carry on
// (a member whose session fails starts a new one, which fences the old
// incarnation), and each aborts one transaction in five of its own. Once the group has committed the whole input, the output
// under read_committed holds every input record exactly once (the transaction coordinator's rules,
// the partition's transaction rules), with the range and the cooperative-sticky balancer.
func TestKillTransactionalPipeline(t *testing.T) {
	for _, b := range []struct {
		name     string
		balancer func() kgo.GroupBalancer
	}{{"range", kgo.RangeBalancer}, {"cooperative-sticky", kgo.CooperativeStickyBalancer}} {
		t.Run(b.name, func(t *testing.T) { testKillPipeline(t, b.balancer) })
	}
}

func testKillPipeline(t *testing.T, balancer func() kgo.GroupBalancer) {
	dir, addr := t.TempDir(), freeAddr(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	p := startBinary(t, dir, "--listen", addr)
	g := &gateway{t: t, addr: addr}
	g.createTopic("in", killEOSPartitions)
	g.createTopic("out", killEOSPartitions)
	cl := g.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var rs []*kgo.Record
	for part := range int32(killEOSPartitions) {
		for i := range killEOSPerPartition {
			rs = append(rs, &kgo.Record{Topic: "in", Partition: part, Value: fmt.Appendf(nil, "in-%d-%d", part, i)})
		}
	}
	if err := cl.ProduceSync(testCtx(t), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var members, closing sync.WaitGroup
	for _, name := range []string{"kill-eos-1", "kill-eos-2"} {
		members.Go(func() { runPipelineMember(ctx, addr, name, balancer, &closing) })
	}
	want := int64(killEOSPartitions * killEOSPerPartition)
	adm := kadm.NewClient(g.client())
	// Each kill comes once the group has committed a further share of the
	// input, plus a random delay, so that every kill lands mid-pipeline.
	for kill := range killEOSKills {
		n := waitCommitted(t, adm, want*int64(kill+1)/(killEOSKills+2))
		time.Sleep(time.Duration(rng.IntN(100)) * time.Millisecond) // a random moment to kill at, not a wait for anything
		p.cmd.Process.Kill()
		<-p.done
		p = startBinary(t, dir, "--listen", addr)
		t.Logf("kill %d after %d of %d input records committed: restarted", kill, n, want)
	}
	waitCommitted(t, adm, want)
	cancel()
	members.Wait()
	closing.Wait()
	// A member stopped mid-transaction leaves it open until its timeout;
	// restarting each member's producer aborts it, as the application's
	// next start would.
	for _, name := range []string{"kill-eos-1", "kill-eos-2"} {
		restartProducer(t, testCtx(t), cl, name)
	}
	checkNoOpenTxn(t, seed, testCtx(t), adm, "out")
	got := withoutPartition(consumeAll(t, g, "out", true))
	if int64(len(got)) != want {
		t.Fatalf("output has %d distinct records, want %d", len(got), want)
	}
	for v, n := range got {
		if n != 1 || !strings.HasPrefix(v, "x-in-") {
			t.Fatalf("output record %s seen %d times", v, n)
		}
	}
	p.stop(t)
}

// runPipelineMember copies "in" to "out" in transactions until ctx ends.
// A session that fails (its broker killed mid-transaction, its producer
// fenced) is closed in the background and replaced by a new one with the
// same transactional id, as an application restarts its member.
func runPipelineMember(ctx context.Context, addr, name string, balancer func() kgo.GroupBalancer, closing *sync.WaitGroup) {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 4))
	for ctx.Err() == nil {
		sess, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(addr), kgo.TransactionalID(name),
			kgo.ConsumerGroup("kill-eos"), kgo.ConsumeTopics("in"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
			kgo.RequireStableFetchOffsets(), kgo.Balancers(balancer()), kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.SessionTimeout(6*time.Second), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.RetryTimeout(5*time.Second))
		if err != nil {
			return
		}
		for ctx.Err() == nil {
			pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			fs := sess.PollRecords(pctx, 25) // small transactions: many of them, across the kills
			cancel()
			if err := copyPipelineBatch(ctx, sess, fs, rng.IntN(5) == 0); err != nil {
				break
			}
		}
		closing.Go(sess.Close)
	}
}

// copyPipelineBatch is one transaction of the pipeline; abort aborts it
// (the session rewinds to the committed offsets, so the records are copied
// again by a later transaction).
func copyPipelineBatch(ctx context.Context, sess *kgo.GroupTransactSession, fs kgo.Fetches, abort bool) error {
	var rs []*kgo.Record
	fs.EachRecord(func(r *kgo.Record) {
		rs = append(rs, &kgo.Record{Topic: "out", Partition: r.Partition, Value: append([]byte("x-"), r.Value...)})
	})
	if len(rs) == 0 {
		return nil
	}
	if err := sess.Begin(); err != nil {
		return err
	}
	ectx, cancel := context.WithTimeout(ctx, testDeadline)
	defer cancel()
	res := sess.ProduceSync(ectx, rs...)
	_, err := sess.End(ectx, kgo.TransactionEndTry(res.FirstErr() == nil && !abort))
	return err
}

// waitCommitted waits until the pipeline's group has committed at least n
// input records and returns how many it has.
func waitCommitted(t *testing.T, adm *kadm.Client, n int64) int64 {
	t.Helper()
	deadline := time.Now().Add(3 * testDeadline)
	for {
		offs, err := adm.FetchOffsets(context.Background(), "kill-eos")
		got := int64(0)
		if err == nil {
			offs.Each(func(o kadm.OffsetResponse) { got += max(o.At, 0) })
		}
		if got >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the group committed %d of the %d input records waited for (%v)", got, n, err)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition, bounded by the deadline
	}
}

package server

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/node"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Transactions in cluster mode (cluster transactions, coordinator-fenced records, leader-applied records and verification across nodes).

// txnProducer is a transactional client of c writing to topic's
// partitions by Record.Partition.
func txnProducer(c *testCluster, id, topic string) *kgo.Client {
	return c.client(kgo.TransactionalID(id), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionTimeout(60*time.Second))
}

// runTxn produces one record valued prefix<partition> to each of parts in
// one transaction and ends it with commit, returning the values.
func runTxn(t *testing.T, ctx context.Context, tx *kgo.Client, prefix string, parts []int32, commit bool) []string {
	t.Helper()
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	var vals []string
	for _, p := range parts {
		v := fmt.Sprintf("%s%d", prefix, p)
		if err := tx.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("transactional produce %s: %v", v, err)
		}
		vals = append(vals, v)
	}
	if err := tx.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatalf("end transaction %s (commit %v): %v", prefix, commit, err)
	}
	return vals
}

// readCommitted is consumeAll at read_committed: it returns only once
// the last stable offset of every partition passed what it waits for,
// i.e. once every marker was written.
func readCommitted(t *testing.T, c *testCluster, topic string, n int) []string {
	return consumeAll(t, c, topic, n, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
}

// TestClusterTransactions: a transaction spanning partitions led by
// every node commits on all of them, an aborted one on none (coordinator-fenced records, leader-applied records):
// read_committed sees exactly the committed records, read_uncommitted
// both.
func TestClusterTransactions(t *testing.T) {
	c, _, adm, ctx := startWithTopic(t, 3, "tx", 6)
	leaders := c.waitLeaders(adm, "tx", 6)
	spread := map[int32]bool{}
	for _, l := range leaders {
		spread[l] = true
	}
	if len(spread) < 2 {
		t.Fatalf("all partitions on one node %v: the test needs several", leaders)
	}
	all := []int32{0, 1, 2, 3, 4, 5}
	tx := txnProducer(c, "t1", "tx")
	aborted := runTxn(t, ctx, tx, "abort-", all, false)
	txs, err := adm.DescribeTransactions(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	before := c.waitLeaders(adm, "tx", 6)
	w := watchTxnRecords(t, c, ctx)
	committed := runTxn(t, ctx, tx, "commit-", all, true)
	// EndTxn answers once the decision is durable; the decision records
	// and markers follow, so the watch is read once the commit completed.
	waitTxnState(t, ctx, adm, "t1", "CompleteCommit")
	decisions := w.decisions()
	if after := c.waitLeaders(adm, "tx", 6); maps.Equal(before, after) {
		checkDecisions(t, decisions, after, txs["t1"].Coordinator, len(all))
	} else {
		t.Logf("leaders moved during the commit (%v, then %v): decisions not checked", before, after)
	}
	committed = append(committed, runTxn(t, ctx, tx, "again-", all[:3], true)...)

	if got, want := readCommitted(t, c, "tx", len(committed)), sortedCopy(committed); !slices.Equal(got, want) {
		t.Fatalf("read_committed: %v, want %v", got, want)
	}
	if got, want := consumeAll(t, c, "tx", len(committed)+len(aborted)), sortedCopy(append(committed, aborted...)); !slices.Equal(got, want) {
		t.Fatalf("read_uncommitted: %v, want %v", got, want)
	}
	checkNoTxnRecords(t, c, ctx)

	// The coordinator lists the transactional id, complete.
	waitTxnState(t, ctx, adm, "t1", "CompleteCommit")
}

// waitTxnState waits until DescribeTransactions lists id in state: an
// EndTxn is answered once its decision is durable, and the transaction
// completes after its markers.
func waitTxnState(t *testing.T, ctx context.Context, adm *kadm.Client, id, state string) {
	t.Helper()
	waitFor(t, fmt.Sprintf("transaction %s in state %s", id, state), func() bool {
		txs, err := adm.DescribeTransactions(ctx, id)
		d, ok := txs[id]
		return err == nil && ok && d.State == state
	})
}

// recordWatch is a watch of the cluster's keys from one revision on.
type recordWatch struct {
	t    *testing.T
	ctx  context.Context
	etcd *clientv3.Client
	wc   clientv3.WatchChan
	stop context.CancelFunc
}

// watchTxnRecords watches every key of the cluster from now on.
func watchTxnRecords(t *testing.T, c *testCluster, ctx context.Context) *recordWatch {
	t.Helper()
	etcd := c.etcd.Client(t)
	now, err := etcd.Get(ctx, node.DefaultPrefix+"cluster-id")
	if err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	return &recordWatch{t: t, ctx: ctx, etcd: etcd, stop: stop,
		wc: etcd.Watch(wctx, node.DefaultPrefix, clientv3.WithPrefix(), clientv3.WithRev(now.Header.Revision+1))}
}

// decisions returns the decision records written since the watch began,
// by the revision they were written at: the partition of each.
func (w *recordWatch) decisions() map[int64][]int32 {
	w.t.Helper()
	defer w.stop()
	end := node.DefaultPrefix + "test-watch-end"
	if _, err := w.etcd.Put(w.ctx, end, ""); err != nil {
		w.t.Fatal(err)
	}
	out := map[int64][]int32{}
	for wr := range w.wc {
		for _, ev := range wr.Events {
			k := strings.TrimPrefix(string(ev.Kv.Key), node.DefaultPrefix)
			if k == "test-watch-end" {
				return out
			}
			var topic string
			var p int32
			var pid int64
			if ev.Type == clientv3.EventTypePut && strings.Contains(string(ev.Kv.Value), "decision") {
				if _, err := fmt.Sscanf(strings.ReplaceAll(k, "/", " "), "txn %s %d %d", &topic, &p, &pid); err == nil {
					out[ev.Kv.ModRevision] = append(out[ev.Kv.ModRevision], p)
				}
			}
		}
	}
	w.t.Fatalf("watch ended: %v", w.ctx.Err())
	return nil
}

// checkDecisions: a commit over parts partitions wrote one decision
// record for each partition another node than the coordinator leads, all
// in one etcd transaction (one decision transaction), and none for the
// partitions the coordinator leads (direct markers).
func checkDecisions(t *testing.T, decisions map[int64][]int32, leaders map[int32]int32, coordinator int32, parts int) {
	t.Helper()
	remote := 0
	for p := range int32(parts) {
		if leaders[p] != coordinator {
			remote++
		}
	}
	if remote > 0 && len(decisions) != 1 {
		t.Fatalf("decisions written in %d etcd transactions %v, want one (coordinator %d, leaders %v)", len(decisions), decisions, coordinator, leaders)
	}
	for _, ps := range decisions {
		if len(ps) != remote {
			t.Fatalf("one transaction wrote decisions for %v, want the %d partitions not led by coordinator %d (leaders %v)", ps, remote, coordinator, leaders)
		}
		for _, p := range ps {
			if leaders[p] == coordinator {
				t.Fatalf("a decision record for partition %d, led by the coordinator %d itself", p, coordinator)
			}
		}
	}
}

// checkNoTxnRecords waits until etcd holds no transaction record: every
// marker's record is deleted once durable (leader-applied records).
func checkNoTxnRecords(t *testing.T, c *testCluster, ctx context.Context) {
	t.Helper()
	etcd := c.etcd.Client(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := etcd.Get(ctx, node.DefaultPrefix+"txn/", clientv3.WithPrefix())
		if err == nil && len(resp.Kvs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var keys []string
			if err == nil {
				for _, kv := range resp.Kvs {
					keys = append(keys, string(kv.Key)+"="+string(kv.Value))
				}
			}
			t.Fatalf("transaction records left in etcd: %v %v", strings.Join(keys, " "), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestClusterTransactionAcrossFailover: the leader of a partition in an
// ongoing transaction stops; the partition's new leader accepts the
// transaction's next batch (verification across nodes: registered by the old leader only) and
// writes its marker (leader-applied records), and the commit is whole.
func TestClusterTransactionAcrossFailover(t *testing.T) {
	c, _, adm, ctx := startWithTopic(t, 3, "fo", 3)
	leaders := c.waitLeaders(adm, "fo", 3)
	tx := txnProducer(c, "t2", "fo")
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	var want []string
	produce := func(v string, p int32) {
		t.Helper()
		if err := tx.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("produce %s to %d: %v", v, p, err)
		}
		want = append(want, v)
	}
	for p := range int32(3) {
		produce(fmt.Sprintf("before-%d", p), p)
	}
	coord := c.coordinator(adm, "t2-probe")
	victim := leaders[0]
	if victim == coord {
		// Keep the coordinator: this test moves a partition only.
		for p, l := range leaders {
			if l != coord {
				victim = leaders[p]
				break
			}
		}
	}
	if victim == coord {
		t.Skip("every partition is led by the coordinator")
	}
	c.stop(victim)
	for p := range int32(3) {
		c.waitMoved(adm, "fo", p, victim)
		produce(fmt.Sprintf("after-%d", p), p)
	}
	if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if got := readCommitted(t, c, "fo", len(want)); !slices.Equal(got, sortedCopy(want)) {
		t.Fatalf("read_committed after the failover: %v, want %v", got, sortedCopy(want))
	}
	checkNoTxnRecords(t, c, ctx)
}

// TestClusterTransactionCoordinatorMoves: the coordinator stops while a
// transaction is ongoing; the new one restores it from etcd, and the
// producer's commit, retried there, completes it on every partition.
func TestClusterTransactionCoordinatorMoves(t *testing.T) {
	c, _, adm, ctx := startWithTopic(t, 3, "cm", 3)
	c.waitLeaders(adm, "cm", 3)
	tx := txnProducer(c, "t3", "cm")
	var want []string
	want = append(want, runTxn(t, ctx, tx, "first-", []int32{0, 1, 2}, true)...)
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for p := range int32(3) {
		v := fmt.Sprintf("second-%d", p)
		if err := tx.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		want = append(want, v)
	}
	coord := c.coordinator(adm, "t3")
	c.stop(coord)
	if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit after the coordinator moved: %v", err)
	}
	if got := readCommitted(t, c, "cm", len(want)); !slices.Equal(got, sortedCopy(want)) {
		t.Fatalf("read_committed after the coordinator moved: %v, want %v", got, sortedCopy(want))
	}
	checkNoTxnRecords(t, c, ctx)
}

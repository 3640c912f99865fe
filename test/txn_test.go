package test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgateway/kgateway/kafka/txn"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// End-to-end transactions with franz-go (the transaction coordinator's rules, resolver
// the partition's transaction rules).

// txnProducer is a transactional franz-go client.
func (g *gateway) txnProducer(id string, opts ...kgo.Opt) *kgo.Client {
	return g.client(append([]kgo.Opt{kgo.TransactionalID(id), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionTimeout(time.Minute)}, opts...)...)
}

// consumeAll appends a plain sentinel record to every partition of topic,
// then reads topic from the start under the isolation level until each
// partition's sentinel arrives: what came before it is everything the
// isolation level shows. It returns "partition/value" of each record,
// sentinels left out.
func consumeAll(t *testing.T, g *gateway, topic string, committed bool) []string {
	t.Helper()
	ctx := testCtx(t)
	parts, err := g.admin().ListEndOffsets(ctx, topic)
	if err != nil || parts.Error() != nil {
		t.Fatalf("end offsets: %v %v", err, parts.Error())
	}
	sentinel := fmt.Sprintf("sentinel-%d", time.Now().UnixNano())
	plain := g.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for p := range parts[topic] {
		if err := plain.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte(sentinel)}).FirstErr(); err != nil {
			t.Fatalf("sentinel: %v", err)
		}
	}
	iso := kgo.ReadUncommitted()
	if committed {
		iso = kgo.ReadCommitted()
	}
	cl := g.client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(iso))
	var out []string
	seen := map[int32]bool{}
	for len(seen) < len(parts[topic]) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consume %s: sentinels seen %v of %d partitions", topic, seen, len(parts[topic]))
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		fs.EachRecord(func(r *kgo.Record) {
			switch v := string(r.Value); {
			case v == sentinel:
				seen[r.Partition] = true
			case strings.HasPrefix(v, "sentinel-"):
			default:
				out = append(out, fmt.Sprintf("%d/%s", r.Partition, v))
			}
		})
	}
	return out
}

func produceTxn(t *testing.T, cl *kgo.Client, topic string, values ...string) {
	t.Helper()
	ctx := testCtx(t)
	for i, v := range values {
		r := &kgo.Record{Topic: topic, Partition: int32(i % 2), Value: []byte(v)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v", v, err)
		}
	}
}

func values(prefix string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s-%d", prefix, i))
	}
	return out
}

func withoutPartition(vs []string) map[string]int {
	m := map[string]int{}
	for _, v := range vs {
		_, val, _ := strings.Cut(v, "/")
		m[val]++
	}
	return m
}

// Durable partition adds, the partition's transaction rules: committed transactions are seen by read_committed
// consumers, aborted ones never; read_uncommitted consumers see both; the
// control records are skipped by both.
func TestTxnCommitAbortIsolation(t *testing.T) {
	g := newGateway(t)
	g.createTopic("t", 2)
	cl := g.txnProducer("iso")
	ctx := testCtx(t)
	for _, step := range []struct {
		prefix string
		commit kgo.TransactionEndTry
	}{{"c1", kgo.TryCommit}, {"a1", kgo.TryAbort}, {"c2", kgo.TryCommit}} {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		produceTxn(t, cl, "t", values(step.prefix, 6)...)
		if err := cl.EndTransaction(ctx, step.commit); err != nil {
			t.Fatalf("end %s: %v", step.prefix, err)
		}
	}
	committed := withoutPartition(consumeAll(t, g, "t", true))
	for _, v := range values("a1", 6) {
		if committed[v] != 0 {
			t.Fatalf("read_committed saw aborted %s", v)
		}
	}
	for _, v := range append(values("c1", 6), values("c2", 6)...) {
		if committed[v] != 1 {
			t.Fatalf("read_committed saw %s %d times: %v", v, committed[v], committed)
		}
	}
	if len(committed) != 12 {
		t.Fatalf("read_committed saw %d records: %v", len(committed), committed)
	}
	all := withoutPartition(consumeAll(t, g, "t", false))
	if len(all) != 18 {
		t.Fatalf("read_uncommitted saw %d distinct records: %v", len(all), all)
	}
	waitTxnComplete(t, g, "iso")
	desc, err := g.admin().DescribeTransactions(ctx, "iso")
	if err != nil || desc["iso"].State != "CompleteCommit" {
		t.Fatalf("describe: %+v %v", desc, err)
	}
}

// The InitProducerId bump: a second producer with the same transactional id fences the first
// (a zombie): the zombie's open transaction is aborted, its commit and
// its further writes fail, and only the new producer's records are
// committed.
func TestTxnZombieFenced(t *testing.T) {
	g := newGateway(t)
	g.createTopic("z", 2)
	ctx := testCtx(t)
	zombie := g.txnProducer("z-id")
	if err := zombie.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produceTxn(t, zombie, "z", values("zombie", 4)...)

	fresh := g.txnProducer("z-id")
	if err := fresh.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produceTxn(t, fresh, "z", values("fresh", 4)...)
	if err := fresh.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("fresh commit: %v", err)
	}
	err := zombie.EndTransaction(ctx, kgo.TryCommit)
	if !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("zombie commit: %v, want fenced", err)
	}
	got := withoutPartition(consumeAll(t, g, "z", true))
	if len(got) != 4 || got["fresh-0"] != 1 || got["zombie-0"] != 0 {
		t.Fatalf("read_committed: %v", got)
	}
}

// offsetClock is real time shifted by a test-controlled offset: the
// coordinator's timers run in real time, its idea of now jumps.
type offsetClock struct{ shift atomic.Int64 }

func (c *offsetClock) Now() time.Time { return time.Now().Add(time.Duration(c.shift.Load())) }
func (c *offsetClock) AfterFunc(d time.Duration, f func()) txn.Timer {
	return time.AfterFunc(d, f)
}

// The transaction timeout: a hung transaction holds back the LSO (read_committed consumers
// and ListOffsets see nothing past its first record) until its timeout
// aborts it; then its producer is fenced and later records are visible.
func TestTxnHungTransactionAbortedByTimeout(t *testing.T) {
	clock := &offsetClock{}
	g := newGatewayWith(t, gatewayOptions{txn: txn.Config{Clock: clock, AbortTimedOutInterval: 20 * time.Millisecond}})
	g.createTopic("h", 1)
	ctx := testCtx(t)
	hung := g.txnProducer("hung", kgo.TransactionTimeout(10*time.Second))
	if err := hung.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produceTxn(t, hung, "h", "hung-0")
	plain := g.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := plain.ProduceSync(ctx, &kgo.Record{Topic: "h", Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	lso, err := g.admin().ListCommittedOffsets(ctx, "h")
	if err != nil || lso["h"][0].Offset != 0 {
		t.Fatalf("LSO while hung: %+v %v", lso, err)
	}
	// Kafka's tooling finds it: ListTransactions by state and by producer
	// id, DescribeTransactions with its partition.
	ongoing, err := g.admin().ListTransactions(ctx, nil, []string{"Ongoing"})
	if err != nil || len(ongoing) != 1 || ongoing["hung"].State != "Ongoing" {
		t.Fatalf("ListTransactions Ongoing: %+v %v", ongoing, err)
	}
	byPID, err := g.admin().ListTransactions(ctx, []int64{ongoing["hung"].ProducerID}, nil)
	if err != nil || len(byPID) != 1 {
		t.Fatalf("ListTransactions by producer id: %+v %v", byPID, err)
	}
	if none, err := g.admin().ListTransactions(ctx, nil, []string{"PrepareCommit"}); err != nil || len(none) != 0 {
		t.Fatalf("ListTransactions PrepareCommit: %+v %v", none, err)
	}
	desc, err := g.admin().DescribeTransactions(ctx, "hung")
	if err != nil || desc["hung"].State != "Ongoing" || len(desc["hung"].Topics["h"]) != 1 || desc["hung"].TimeoutMillis != 10000 {
		t.Fatalf("DescribeTransactions: %+v %v", desc, err)
	}
	clock.shift.Store(int64(11 * time.Second))
	eventually(t, "the hung transaction to be aborted", func() bool {
		d, err := g.admin().DescribeTransactions(ctx, "hung")
		return err == nil && d["hung"].State == "CompleteAbort"
	})
	got := withoutPartition(consumeAll(t, g, "h", true))
	if len(got) != 1 || got["after"] != 1 {
		t.Fatalf("read_committed after the abort: %v", got)
	}
	err = hung.EndTransaction(ctx, kgo.TryCommit)
	if err == nil {
		t.Fatal("the timed-out producer committed")
	}
}

// stableOffsets sends req with require_stable until no partition is
// UNSTABLE_OFFSET_COMMIT, as a client retries it (the Java consumer, or
// franz-go with RequireStableFetchOffsets): EndTxn answers once the
// decision is durable and the offsets of its transaction are committed a
// moment after (answer once decided, offsets O6).
func stableOffsets(t *testing.T, cl *kgo.Client, req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	t.Helper()
	req.RequireStable = true
	deadline := time.Now().Add(testDeadline)
	for {
		resp := request[*kmsg.OffsetFetchResponse](t, cl, req)
		if !unstableOffsets(resp) {
			return resp
		}
		if time.Now().After(deadline) {
			t.Fatalf("offsets still UNSTABLE_OFFSET_COMMIT after %v: %+v", testDeadline, resp)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, bounded by the deadline
	}
}

// unstableOffsets tells whether resp has a partition answered
// UNSTABLE_OFFSET_COMMIT.
func unstableOffsets(resp *kmsg.OffsetFetchResponse) bool {
	var codes []int16
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			codes = append(codes, p.ErrorCode)
		}
	}
	for _, g := range resp.Groups {
		for _, rt := range g.Topics {
			for _, p := range rt.Partitions {
				codes = append(codes, p.ErrorCode)
			}
		}
	}
	return slices.Contains(codes, kerr.UnstableOffsetCommit.Code)
}

// Pending TxnOffsetCommit offsets, O5–O7: TxnOffsetCommit offsets are invisible (and
// UNSTABLE_OFFSET_COMMIT under require_stable) until EndTxn commits them,
// and an abort drops them. EndTxn answers once decided, so the stable
// offset is waited for after it, as a client retries
// UNSTABLE_OFFSET_COMMIT. Raw requests, as a transactional client sends
// them.
func TestTxnOffsetCommitVisibility(t *testing.T) {
	g := newGateway(t)
	g.createTopic("o", 1)
	cl := g.client()
	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.TransactionalID, ip.TransactionTimeoutMillis = kmsg.StringPtr("offs"), 60000
	init := request[*kmsg.InitProducerIDResponse](t, cl, ip)
	if init.ErrorCode != 0 {
		t.Fatalf("init: %v", kerr.ErrorForCode(init.ErrorCode))
	}
	pid, epoch := init.ProducerID, init.ProducerEpoch
	fetchReq := func() *kmsg.OffsetFetchRequest {
		req := kmsg.NewPtrOffsetFetchRequest()
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = "grp"
		rg.Topics = []kmsg.OffsetFetchRequestGroupTopic{{Topic: "o", Partitions: []int32{0}}}
		req.Groups = []kmsg.OffsetFetchRequestGroup{rg}
		return req
	}
	fetch := func(stable bool) kmsg.OffsetFetchResponseGroupTopicPartition {
		req := fetchReq()
		req.RequireStable = stable
		resp := request[*kmsg.OffsetFetchResponse](t, cl, req)
		return resp.Groups[0].Topics[0].Partitions[0]
	}
	stable := func() kmsg.OffsetFetchResponseGroupTopicPartition {
		return stableOffsets(t, cl, fetchReq()).Groups[0].Topics[0].Partitions[0]
	}
	round := func(offset int64, commit bool) {
		t.Helper()
		ao := kmsg.NewPtrAddOffsetsToTxnRequest()
		ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = "offs", pid, epoch, "grp"
		if r := request[*kmsg.AddOffsetsToTxnResponse](t, cl, ao); r.ErrorCode != 0 {
			t.Fatalf("add offsets: %v", kerr.ErrorForCode(r.ErrorCode))
		}
		tc := kmsg.NewPtrTxnOffsetCommitRequest()
		tc.TransactionalID, tc.Group, tc.ProducerID, tc.ProducerEpoch = "offs", "grp", pid, epoch
		tc.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "o", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: offset, LeaderEpoch: -1}}}}
		if r := request[*kmsg.TxnOffsetCommitResponse](t, cl, tc); r.Topics[0].Partitions[0].ErrorCode != 0 {
			t.Fatalf("txn offset commit: %v", kerr.ErrorForCode(r.Topics[0].Partitions[0].ErrorCode))
		}
		if p := fetch(true); p.ErrorCode != kerr.UnstableOffsetCommit.Code {
			t.Fatalf("require_stable while pending: %+v", p)
		}
		et := kmsg.NewPtrEndTxnRequest()
		et.TransactionalID, et.ProducerID, et.ProducerEpoch, et.Commit = "offs", pid, epoch, commit
		r := request[*kmsg.EndTxnResponse](t, cl, et)
		if r.ErrorCode != 0 {
			t.Fatalf("end: %v", kerr.ErrorForCode(r.ErrorCode))
		}
		if r.Version >= 5 {
			epoch = r.ProducerEpoch // EndTxn v5 bumps the epoch (KIP-890 part 2)
		}
	}
	round(5, true)
	if p := stable(); p.ErrorCode != 0 || p.Offset != 5 {
		t.Fatalf("after commit: %+v", p)
	}
	round(9, false)
	if p := fetch(false); p.ErrorCode != 0 || p.Offset != 5 {
		t.Fatalf("right after abort, without require_stable: %+v, want the offset committed before", p)
	}
	if p := stable(); p.ErrorCode != 0 || p.Offset != 5 {
		t.Fatalf("after abort: %+v", p)
	}
	g.restart()
	if p := fetch(true); p.ErrorCode != 0 || p.Offset != 5 {
		t.Fatalf("after restart: %+v", p)
	}
}

// eosPipeline runs GroupTransactSession members that copy topic "in" to
// "out", each record transformed once, and stops them when done says so.
type eosPipeline struct {
	g        *gateway
	balancer kgo.GroupBalancer
	wg       sync.WaitGroup
	stop     atomic.Bool
	errs     chan error
}

func (p *eosPipeline) member(t *testing.T, name string) {
	sess, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(p.g.addr), kgo.TransactionalID(name),
		kgo.ConsumerGroup("eos"), kgo.ConsumeTopics("in"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets(), kgo.Balancers(p.balancer), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionTimeout(time.Minute), kgo.SessionTimeout(6*time.Second), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer sess.Close()
		for n := 0; !p.stop.Load(); n++ {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			fs := sess.PollRecords(ctx, 30)
			cancel()
			if fs.IsClientClosed() {
				return
			}
			if err := copyPipelineBatch(context.Background(), sess, fs, n%4 == 3); err != nil {
				p.errs <- fmt.Errorf("%s: %w", name, err)
				return
			}
		}
	}()
}

// produceInput writes n records to each of in's 4 partitions, plainly.
func produceInput(t *testing.T, g *gateway, prefix string, n int) {
	t.Helper()
	cl := g.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var rs []*kgo.Record
	for p := int32(0); p < 4; p++ {
		for i := range n {
			rs = append(rs, &kgo.Record{Topic: "in", Partition: p, Value: fmt.Appendf(nil, "in-%s-%d-%d", prefix, p, i)})
		}
	}
	if err := cl.ProduceSync(testCtx(t), rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// Durable partition adds, pending TxnOffsetCommit offsets with franz-go's GroupTransactSession: two members (joining
// while records flow, so the group rebalances), each aborting every
// fourth transaction of its own, copy every input record to the output
// exactly once as read_committed sees it.
func TestTxnGroupTransactSessionExactlyOnce(t *testing.T) {
	for _, b := range []struct {
		name     string
		balancer kgo.GroupBalancer
	}{{"range", kgo.RangeBalancer()}, {"cooperative-sticky", kgo.CooperativeStickyBalancer()}} {
		t.Run(b.name, func(t *testing.T) {
			g := newGateway(t)
			g.createTopic("in", 4)
			g.createTopic("out", 4)
			const perPartition = 50
			p := &eosPipeline{g: g, balancer: b.balancer, errs: make(chan error, 4)}
			produceInput(t, g, "first", perPartition/2)
			p.member(t, "eos-1")
			produceInput(t, g, "second", perPartition/2)
			p.member(t, "eos-2")
			want := 4 * perPartition
			eventually(t, "the group's offsets to reach the input's end", func() bool {
				select {
				case err := <-p.errs:
					t.Fatal(err)
				default:
				}
				offs, err := g.admin().FetchOffsets(context.Background(), "eos")
				if err != nil {
					return false
				}
				n := int64(0)
				offs.Each(func(o kadm.OffsetResponse) { n += o.At })
				return n == int64(want)
			})
			p.stop.Store(true)
			p.wg.Wait()
			got := withoutPartition(consumeAll(t, g, "out", true))
			if len(got) != want {
				t.Fatalf("output has %d distinct records, want %d", len(got), want)
			}
			for v, n := range got {
				if n != 1 || !strings.HasPrefix(v, "x-in-") {
					t.Fatalf("output record %s seen %d times", v, n)
				}
			}
		})
	}
}

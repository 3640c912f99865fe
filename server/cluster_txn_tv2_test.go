package server

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/node"
	"github.com/kgateway/kgateway/kafka/txn"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Transaction version 2 in a cluster (implicit adds across nodes): a
// Produce v12 transactional batch reaches its partition's leader, which
// has the coordinator, wherever it runs, add the partition through etcd
// before it appends; an add that races with EndTxn is in the decision or
// refused, never acknowledged and lost.

// TestClusterTxnV2: a franz-go producer negotiates transaction version 2
// against three nodes and writes to partitions led by every node; its
// aborts and commits are whole, read_committed sees exactly the
// committed records, and every EndTxn bumped the epoch (KIP-890 part 2).
func TestClusterTxnV2(t *testing.T) {
	c, _, adm, ctx := startWithTopic(t, 3, "v2", 6)
	// Right after the cluster starts, one node may still lead every
	// partition and hold the coordinator role: wait until another node
	// leads a partition, so that some add crosses nodes.
	for deadline := time.Now().Add(30 * time.Second); ; {
		leaders := c.waitLeaders(adm, "v2", 6)
		coord := c.coordinator(adm, "v2-tx")
		if slices.ContainsFunc(slices.Collect(maps.Values(leaders)), func(l int32) bool { return l != coord }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("every partition led by the coordinator %d: %v", coord, leaders)
		}
		time.Sleep(100 * time.Millisecond)
	}
	all := []int32{0, 1, 2, 3, 4, 5}
	tx := txnProducer(c, "v2-tx", "v2")
	aborted := runTxn(t, ctx, tx, "abort-", all, false)
	committed := runTxn(t, ctx, tx, "commit-", all, true)
	committed = append(committed, runTxn(t, ctx, tx, "again-", all[3:], true)...)

	if got, want := readCommitted(t, c, "v2", len(committed)), sortedCopy(committed); !slices.Equal(got, want) {
		t.Fatalf("read_committed: %v, want %v", got, want)
	}
	if got, want := consumeAll(t, c, "v2", len(committed)+len(aborted)), sortedCopy(append(committed, aborted...)); !slices.Equal(got, want) {
		t.Fatalf("read_uncommitted: %v, want %v", got, want)
	}
	waitTxnState(t, ctx, adm, "v2-tx", "CompleteCommit")
	txs, err := adm.DescribeTransactions(ctx, "v2-tx")
	if err != nil {
		t.Fatal(err)
	}
	if d := txs["v2-tx"]; d.State != "CompleteCommit" || d.ProducerEpoch < 3 {
		t.Fatalf("DescribeTransactions: %s at epoch %d, want CompleteCommit at 3 or more (an epoch bump per EndTxn, transaction version 2)", d.State, d.ProducerEpoch)
	}
	checkNoTxnRecords(t, c, ctx)
	checkNoAddRecords(t, c, ctx)
}

// tv2Fixture is a 3-node cluster whose coordinator steps can be paused
// (pauseParts), a topic of three partitions and a client sending
// Produce v12 (by name) and EndTxn v5.
type tv2Fixture struct {
	c     *testCluster
	cl    *kgo.Client
	adm   *kadm.Client
	ctx   context.Context
	topic string
	mu    sync.Mutex
	parts map[int32]*pauseParts
}

func newTV2Fixture(t *testing.T, topic string) *tv2Fixture {
	f := &tv2Fixture{topic: topic, parts: map[int32]*pauseParts{}}
	f.c, _, f.adm, f.ctx = startWithTopic(t, 3, topic, 3, func(cfg *Config) {
		id := cfg.Cluster.NodeID
		cfg.wrapTxnParts = func(inner txn.Partitions) txn.Partitions {
			p := &pauseParts{Partitions: inner}
			f.mu.Lock()
			f.parts[id] = p
			f.mu.Unlock()
			return p
		}
	})
	f.cl = f.c.client(produceByName())
	f.adm = kadm.NewClient(f.cl)
	f.c.waitLeaders(f.adm, topic, 3)
	return f
}

// produceByName caps a client's Produce at v12, the last version naming
// topics: the raw Produce requests of these tests (produceReq) name
// theirs, and a cluster serves v13 (topic ids) since it serves
// transaction version 2.
func produceByName() kgo.Opt {
	v := new(kversion.Versions)
	for k := range int16(200) {
		if req := kmsg.RequestForKey(k); req != nil {
			v.SetMaxKeyVersion(k, req.MaxVersion())
		}
	}
	v.SetMaxKeyVersion(0, 12)
	return kgo.MaxVersions(v)
}

// armAll arms step on every node at once, sharing one entered and one
// proceed, returned as a pauseParts of its own: whichever node holds the
// coordinator role when the step comes pauses there (the role may still
// move between nodes right after the cluster started, so the node a test
// asked for may not be the one that serves its request).
func (f *tv2Fixture) armAll(step string) *pauseParts {
	g := &pauseParts{entered: make(chan struct{}), proceed: make(chan struct{}), once: new(sync.Once)}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.parts {
		p.armWith(step, g.entered, g.proceed, g.once)
	}
	return g
}

func (f *tv2Fixture) pause(node int32) *pauseParts {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.parts[node]
}

// init is InitProducerId for id at the coordinator: a fresh producer.
func (f *tv2Fixture) init(t *testing.T, id string) (int64, int16) {
	t.Helper()
	var r *kmsg.InitProducerIDResponse
	code := retry(t, "InitProducerId", moving, func() (int16, error) {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis = &id, 60_000
		resp, err := req.RequestWith(f.ctx, f.cl)
		if err != nil {
			return 0, err
		}
		r = resp
		return resp.ErrorCode, nil
	})
	if code != 0 {
		t.Fatalf("InitProducerId: %v", kerr.ErrorForCode(code))
	}
	return r.ProducerID, r.ProducerEpoch
}

// txnBatch is one transactional record valued v.
func txnBatch(pid int64, epoch int16, seq int32, v string) []byte {
	r := kmsg.Record{Value: []byte(v)}
	r.Length = int32(len(r.AppendTo(nil)) - 1)
	b := kmsg.RecordBatch{Magic: 2, Attributes: 0x10, NumRecords: 1, Records: r.AppendTo(nil), PartitionLeaderEpoch: -1,
		ProducerID: pid, ProducerEpoch: epoch, FirstSequence: seq, FirstTimestamp: 1, MaxTimestamp: 1}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

// produce sends one transactional record to partition p's serving
// leader with Produce v12 and returns its answer; NOT_LEADER is retried.
func (f *tv2Fixture) produce(t *testing.T, id string, pid int64, epoch int16, p, seq int32, v string) int16 {
	return f.produceVia(t, f.cl, id, pid, epoch, p, seq, v)
}

// produceVia is produce through cl (its own connections: a connection's
// produce requests are served one at a time).
func (f *tv2Fixture) produceVia(t *testing.T, cl *kgo.Client, id string, pid int64, epoch int16, p, seq int32, v string) int16 {
	deadline := time.Now().Add(30 * time.Second)
	for {
		leader := f.c.waitLeaders(f.adm, f.topic, 3)[p]
		if f.c.servesOwn(leader, f.topic, p) {
			req := produceReq(f.topic, txnBatch(pid, epoch, seq, v))
			req.TransactionID = &id
			req.Topics[0].Partitions[0].Partition = p
			resp, err := req.RequestWith(f.ctx, cl.Broker(int(leader)))
			if err != nil {
				t.Errorf("produce %s: %v", v, err)
				return -1
			}
			if resp.Version < 12 {
				t.Errorf("produce %s sent at v%d, want v12", v, resp.Version)
			}
			if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.NotLeaderForPartition.Code {
				return code
			}
		}
		if time.Now().After(deadline) {
			t.Errorf("produce %s: %s/%d never served", v, f.topic, p)
			return -1
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// endTxn is EndTxn v5 at node (-1: the coordinator kgo finds); it returns
// the answer and the bumped epoch.
func (f *tv2Fixture) endTxn(node int32, id string, pid int64, epoch int16, commit bool) (int16, int16, error) {
	req := kmsg.NewPtrEndTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = id, pid, epoch, commit
	var to kmsg.Requestor = f.cl
	if node >= 0 {
		to = f.cl.Broker(int(node))
	}
	resp, err := req.RequestWith(f.ctx, to)
	if err != nil {
		return 0, 0, err
	}
	if resp.Version < 5 {
		return 0, 0, kerr.UnsupportedVersion
	}
	return resp.ErrorCode, resp.ProducerEpoch, nil
}

// mustEnd ends the transaction and returns the bumped epoch.
func (f *tv2Fixture) mustEnd(t *testing.T, id string, pid int64, epoch int16, commit bool) int16 {
	t.Helper()
	next, err := f.end(id, pid, epoch, commit)
	if err != nil {
		t.Fatal(err)
	}
	return next
}

// end ends the transaction, retrying what a client retries, and returns
// the bumped epoch; from any goroutine.
func (f *tv2Fixture) end(id string, pid int64, epoch int16, commit bool) (int16, error) {
	for {
		code, next, err := f.endTxn(-1, id, pid, epoch, commit)
		switch {
		case f.ctx.Err() != nil:
			return 0, fmt.Errorf("EndTxn (commit %v) at epoch %d: %w", commit, epoch, f.ctx.Err())
		case err != nil || retriable(code):
		case code != 0 || next <= epoch:
			return 0, fmt.Errorf("EndTxn v5 (commit %v) at epoch %d: %v, epoch %d", commit, epoch, kerr.ErrorForCode(code), next)
		default:
			return next, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// endAsync is end in a goroutine: its result comes on the channel.
func (f *tv2Fixture) endAsync(id string, pid int64, epoch int16, commit bool) <-chan ended {
	ch := make(chan ended, 1)
	go func() {
		e, err := f.end(id, pid, epoch, commit)
		ch <- ended{e, err}
	}()
	return ch
}

type ended struct {
	epoch int16
	err   error
}

// await is the result of an endAsync.
func await(t *testing.T, ch <-chan ended) int16 {
	t.Helper()
	r := <-ch // end returns once f.ctx ends at the latest
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.epoch
}

// produceAsync is produce in a goroutine.
func (f *tv2Fixture) produceAsync(t *testing.T, id string, pid int64, epoch int16, p, seq int32, v string) <-chan int16 {
	ch := make(chan int16, 1)
	go func() { ch <- f.produce(t, id, pid, epoch, p, seq, v) }()
	return ch
}

// entered waits until p's armed step is reached.
func (f *tv2Fixture) entered(t *testing.T, p *pauseParts, what string) {
	t.Helper()
	select {
	case <-p.entered:
	case <-f.ctx.Done():
		t.Fatalf("%s never reached", what)
	}
}

// waitAddAsked waits until a leader's implicit-add request is in etcd.
func (f *tv2Fixture) waitAddAsked(t *testing.T) {
	t.Helper()
	etcd := f.c.etcd.Client(t)
	for {
		resp, err := etcd.Get(f.ctx, node.DefaultPrefix+"txnadd/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err == nil && resp.Count > 0 {
			return
		}
		if f.ctx.Err() != nil {
			t.Fatal("no implicit add was asked")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitAddAskedOr is waitAddAsked, or until one of answers has its answer
// (an add that did not wait for the markers).
func (f *tv2Fixture) waitAddAskedOr(t *testing.T, answers []<-chan int16) {
	t.Helper()
	etcd := f.c.etcd.Client(t)
	for {
		resp, err := etcd.Get(f.ctx, node.DefaultPrefix+"txnadd/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err == nil && resp.Count > 0 || slices.ContainsFunc(answers, func(ch <-chan int16) bool { return len(ch) > 0 }) {
			return
		}
		if f.ctx.Err() != nil {
			t.Fatal("no implicit add was asked")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkNoAddRecords waits until etcd holds no implicit-add request: each
// is deleted by its asker once answered.
func checkNoAddRecords(t *testing.T, c *testCluster, ctx context.Context) {
	t.Helper()
	etcd := c.etcd.Client(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := etcd.Get(ctx, node.DefaultPrefix+"txnadd/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err == nil && resp.Count == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("implicit-add requests left in etcd: %v %v", resp, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestClusterTxnV2AddRacesEndTxn: an implicit add racing with EndTxn is
// either in the decision or refused, never acknowledged and lost. First
// the add is durable (paused before its registration) when EndTxn comes:
// the decision includes the partition, and the batch is either appended
// and committed or refused. Then the decision is durable (paused before
// its markers) when the add is asked: the add is refused (the epoch is
// bumped by then: INVALID_PRODUCER_EPOCH, as Kafka maps PRODUCER_FENCED)
// and nothing of it is ever read. A last transaction over every
// partition shows that no partition is left with an open transaction.
func TestClusterTxnV2AddRacesEndTxn(t *testing.T) {
	f := newTV2Fixture(t, "race")
	const id = "race-tx"
	pid, e := f.init(t, id)
	var want []string
	if code := f.produce(t, id, pid, e, 0, 0, "a0"); code != 0 {
		t.Fatalf("produce a0: %v", kerr.ErrorForCode(code))
	}
	want = append(want, "a0")

	// The add first: durable, its registration paused, EndTxn behind it.
	p := f.armAll("register")
	added := f.produceAsync(t, id, pid, e, 1, 0, "a1")
	f.entered(t, p, "the implicit add of a1")
	end := f.endAsync(id, pid, e, true)
	close(p.proceed)
	if code := <-added; code == 0 {
		want = append(want, "a1")
	} else {
		t.Logf("a1 refused: %v", kerr.ErrorForCode(code))
	}
	e = await(t, end)

	// The decision first: durable, its markers paused, the add behind it.
	if code := f.produce(t, id, pid, e, 0, 0, "b0"); code != 0 {
		t.Fatalf("produce b0: %v", kerr.ErrorForCode(code))
	}
	want = append(want, "b0")
	p = f.armAll("marker")
	end = f.endAsync(id, pid, e, true)
	f.entered(t, p, "the first marker")
	added = f.produceAsync(t, id, pid, e, 2, 0, "b2")
	f.waitAddAsked(t)
	close(p.proceed)
	if code := <-added; code == 0 {
		t.Fatal("b2, added after the decision, was acknowledged")
	} else if code != kerr.InvalidProducerEpoch.Code && code != kerr.NotEnoughReplicas.Code {
		t.Errorf("b2, added after the decision: %v, want INVALID_PRODUCER_EPOCH (or retriable NOT_ENOUGH_REPLICAS)", kerr.ErrorForCode(code))
	}
	e = await(t, end)

	for part := range int32(3) {
		v := "z" + string(rune('0'+part))
		if code := f.produce(t, id, pid, e, part, 0, v); code != 0 {
			t.Fatalf("produce %s: %v", v, kerr.ErrorForCode(code))
		}
		want = append(want, v)
	}
	f.mustEnd(t, id, pid, e, true)
	if got := readCommitted(t, f.c, "race", len(want)); !slices.Equal(got, sortedCopy(want)) {
		t.Fatalf("read_committed: %v, want %v", got, sortedCopy(want))
	}
	checkNoTxnRecords(t, f.c, f.ctx)
	checkNoAddRecords(t, f.c, f.ctx)
}

// TestClusterTxnV2CoordinatorMovesMidAdd: the coordinator loses its role
// while an implicit add is durable but not yet registered. Its
// registration and its answer are fenced; the new coordinator restored
// the transaction with the partition in it and answers the leader's
// request, still in etcd, itself, so the batch is appended and the
// commit, at the new coordinator, is whole.
func TestClusterTxnV2CoordinatorMovesMidAdd(t *testing.T) {
	f := newTV2Fixture(t, "mvv2")
	const id = "mv-tx"
	pid, e := f.init(t, id)
	from := f.c.coordinator(f.adm, id)
	leaders := f.c.waitLeaders(f.adm, "mvv2", 3)
	var part int32 = -1
	for pp, l := range leaders {
		if l != from {
			part = pp
			break
		}
	}
	if part < 0 {
		t.Skip("every partition is led by the coordinator")
	}
	p := f.pause(from)
	p.arm("register")
	added := f.produceAsync(t, id, pid, e, part, 0, "moved")
	f.entered(t, p, "the register step")
	mf := &moveFixture{c: f.c, cl: f.cl, adm: f.adm, ctx: f.ctx}
	mf.loseCoordinator(t, from, p)
	if code := <-added; code != 0 {
		t.Fatalf("produce while the coordinator moved: %v, want NONE (the request answered by the new coordinator)", kerr.ErrorForCode(code))
	}
	want := []string{"moved"}
	// A partition the new coordinator adds.
	for pp := range int32(3) {
		if pp != part && leaders[pp] != from {
			if code := f.produce(t, id, pid, e, pp, 0, "after"); code != 0 {
				t.Fatalf("produce after the move: %v", kerr.ErrorForCode(code))
			}
			want = append(want, "after")
			break
		}
	}
	// A group the new coordinator adds (TxnOffsetCommit v5+, KIP-890
	// implicit adds), its offset visible once the transaction commits.
	ts, err := f.adm.ListTopics(f.ctx, "mvv2")
	if err != nil {
		t.Fatal(err)
	}
	if code := settle(t, "TxnOffsetCommit", func() (int16, error) {
		tc := kmsg.NewPtrTxnOffsetCommitRequest()
		tc.TransactionalID, tc.Group, tc.ProducerID, tc.ProducerEpoch, tc.Generation = id, "mvv2-g", pid, e, -1
		tc.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "mvv2", TopicID: ts["mvv2"].ID,
			Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: part, Offset: 1, LeaderEpoch: -1}}}}
		resp, err := tc.RequestWith(f.ctx, f.cl)
		if err != nil {
			return 0, err
		}
		if resp.Version < 5 {
			t.Fatalf("TxnOffsetCommit v%d, want v5+", resp.Version)
		}
		return resp.Topics[0].Partitions[0].ErrorCode, nil
	}); code != 0 {
		t.Fatalf("TxnOffsetCommit at the new coordinator: %v", kerr.ErrorForCode(code))
	}
	f.mustEnd(t, id, pid, e, true)
	// Committed with the Complete state, a moment after EndTxn's answer
	// (answer once decided): read as a client does, retrying
	// UNSTABLE_OFFSET_COMMIT.
	eventually(t, "the transaction's committed offset", func() error {
		offs, err := f.adm.FetchOffsets(kadm.RequireStable(f.ctx), "mvv2-g")
		if err != nil {
			return err
		}
		if o, ok := offs.Lookup("mvv2", part); !ok || o.Err != nil || o.At != 1 {
			return fmt.Errorf("the transaction's committed offset: %+v %v, want 1", o, ok)
		}
		return nil
	})
	if got := readCommitted(t, f.c, "mvv2", len(want)); !slices.Equal(got, sortedCopy(want)) {
		t.Fatalf("read_committed: %v, want %v", got, sortedCopy(want))
	}
	checkNoTxnRecords(t, f.c, f.ctx)
	checkNoAddRecords(t, f.c, f.ctx)
}

// TestClusterWriteTxnMarkersAbortsHanging: the Admin's abortTransaction
// (WriteTxnMarkers, kafka-transactions abort) is served in a cluster
// by the partition's leader: a node that does not lead it answers
// NOT_LEADER_OR_FOLLOWER, the leader checks a v2 marker's epoch by its
// transaction version (KIP-1228: at 2 the batches' own epoch is
// INVALID_PRODUCER_EPOCH), writes the ABORT marker, and the hanging
// transaction no longer holds back read_committed.
func TestClusterWriteTxnMarkersAbortsHanging(t *testing.T) {
	f := newTV2Fixture(t, "wm")
	const id = "wm-tx"
	pid, e := f.init(t, id)
	if code := f.produce(t, id, pid, e, 0, 0, "hanging"); code != 0 {
		t.Fatalf("produce: %v", kerr.ErrorForCode(code))
	}
	leader := f.c.waitLeaders(f.adm, "wm", 3)[0]
	abort := func(node int32, epoch int16) int16 {
		req := kmsg.NewPtrWriteTxnMarkersRequest()
		m := kmsg.NewWriteTxnMarkersRequestMarker()
		m.ProducerID, m.ProducerEpoch, m.Committed, m.TransactionVersion = pid, epoch, false, 2
		m.Topics = []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: "wm", Partitions: []int32{0}}}
		req.Markers = append(req.Markers, m)
		resp, err := req.RequestWith(f.ctx, f.cl.Broker(int(node)))
		if err != nil {
			t.Fatalf("WriteTxnMarkers at node %d: %v", node, err)
		}
		if resp.Version != 2 {
			t.Fatalf("WriteTxnMarkers v%d, want v2", resp.Version)
		}
		return resp.Markers[0].Topics[0].Partitions[0].ErrorCode
	}
	other := leader%3 + 1
	if code := abort(other, e+1); code != kerr.NotLeaderForPartition.Code {
		t.Fatalf("WriteTxnMarkers at node %d, not the leader %d: %v, want NOT_LEADER_OR_FOLLOWER", other, leader, kerr.ErrorForCode(code))
	}
	if code := abort(leader, e); code != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("TV2 marker at the batches' epoch: %v, want INVALID_PRODUCER_EPOCH", kerr.ErrorForCode(code))
	}
	if code := abort(leader, e+1); code != 0 {
		t.Fatalf("WriteTxnMarkers at the leader: %v", kerr.ErrorForCode(code))
	}
	produceToLeaderPartition(t, f, 0, "plain")
	if got := readCommitted(t, f.c, "wm", 1); !slices.Equal(got, []string{"plain"}) {
		t.Fatalf("read_committed after the abort: %v, want [plain]", got)
	}
}

// produceToLeaderPartition writes one non-transactional record to p.
func produceToLeaderPartition(t *testing.T, f *tv2Fixture, p int32, v string) {
	t.Helper()
	cl := f.c.client(kgo.DefaultProduceTopic(f.topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := cl.ProduceSync(f.ctx, &kgo.Record{Partition: p, Value: []byte(v)}).FirstErr(); err != nil {
		t.Fatalf("produce %s: %v", v, err)
	}
}

// TestClusterTxnV2NextWaitsForMarkers: answer once decided, across nodes.
// EndTxn v5 is answered while the coordinator's first marker is still
// paused; the next transaction's Produce v12 batches, at the bumped
// epoch, on every partition (led by any node), are added only once every
// marker of the first transaction is durable, so no marker of the first
// ends a batch of the next: the next one, aborted, is never read by
// read_committed, the first one is.
func TestClusterTxnV2NextWaitsForMarkers(t *testing.T) {
	f := newTV2Fixture(t, "nextw")
	const id = "nextw-tx"
	pid, e := f.init(t, id)
	var first, all []string
	for part := range int32(3) {
		v := "a" + string(rune('0'+part))
		if code := f.produce(t, id, pid, e, part, 0, v); code != 0 {
			t.Fatalf("produce %s: %v", v, kerr.ErrorForCode(code))
		}
		first = append(first, v)
	}
	p := f.armAll("marker")
	end := f.endAsync(id, pid, e, true)
	f.entered(t, p, "the first marker")
	e1 := await(t, end) // answered, a marker still paused
	var next []<-chan int16
	for part := range int32(3) {
		next = append(next, f.produceAsync(t, id, pid, e1, part, 0, "b"+string(rune('0'+part))))
	}
	f.waitAddAskedOr(t, next)
	close(p.proceed)
	for part, ch := range next {
		v := "b" + string(rune('0'+part))
		code := <-ch
		for code == kerr.NotEnoughReplicas.Code && f.ctx.Err() == nil {
			code = f.produce(t, id, pid, e1, int32(part), 0, v) // retriable: the add was not answered in time
		}
		if code != 0 {
			t.Fatalf("produce %s of the next transaction: %v", v, kerr.ErrorForCode(code))
		}
		all = append(all, v)
	}
	f.mustEnd(t, id, pid, e1, false)
	// Plain records after the abort: read_committed reads up to them, so
	// a record of the next transaction that a marker of the first had
	// committed would be read among them.
	want := slices.Clone(first)
	for part := range int32(3) {
		v := "z" + string(rune('0'+part))
		produceToLeaderPartition(t, f, part, v)
		want = append(want, v)
	}
	if got := readCommitted(t, f.c, "nextw", len(want)); !slices.Equal(got, want) {
		t.Fatalf("read_committed: %v, want %v (the next transaction aborted)", got, want)
	}
	if got, want := consumeAll(t, f.c, "nextw", len(want)+len(all)), sortedCopy(append(all, want...)); !slices.Equal(got, want) {
		t.Fatalf("read_uncommitted: %v, want %v", got, want)
	}
	checkNoTxnRecords(t, f.c, f.ctx)
	checkNoAddRecords(t, f.c, f.ctx)
}

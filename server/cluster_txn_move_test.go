package server

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/kafka/txn"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The transaction coordinator role moving in the middle of a request
// (the InitProducerId bump, completion at open; coordinator-fenced records): the node that loses it
// cannot finish, the new one restores what was durable, and the client,
// retrying there, sees only retriable errors and is never fenced.

// pauseParts is a node's txn.Partitions that, once armed, stops the
// coordinator in the chosen step (a registration or a marker, both after
// the state they follow is durable) until the test lets it go on.
type pauseParts struct {
	txn.Partitions
	mu      sync.Mutex
	step    string        // "register" or "marker"; "" when not armed
	entered chan struct{} // closed when the step is reached
	proceed chan struct{} // the step goes on once closed
	once    *sync.Once    // closes entered (shared by parts armed together)
}

func (p *pauseParts) arm(step string) {
	p.armWith(step, make(chan struct{}), make(chan struct{}), new(sync.Once))
}

func (p *pauseParts) armWith(step string, entered, proceed chan struct{}, once *sync.Once) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.step, p.entered, p.proceed, p.once = step, entered, proceed, once
}

// pause blocks the first call of the armed step until proceed.
func (p *pauseParts) pause(step string) {
	p.mu.Lock()
	if p.step != step {
		p.mu.Unlock()
		return
	}
	p.step = ""
	entered, proceed, once := p.entered, p.proceed, p.once
	p.mu.Unlock()
	once.Do(func() { close(entered) })
	<-proceed
}

func (p *pauseParts) AddTxnPartition(topic string, partition int32, pid int64, epoch int16) error {
	p.pause("register")
	return p.Partitions.AddTxnPartition(topic, partition, pid, epoch)
}

func (p *pauseParts) WriteTxnMarker(topic string, partition int32, pid int64, epoch int16, commit bool, ce int32) error {
	p.pause("marker")
	return p.Partitions.WriteTxnMarker(topic, partition, pid, epoch, commit, ce)
}

// moveFixture is a 3-node cluster whose nodes' coordinator steps can be
// paused, with a topic "mv" of one partition.
type moveFixture struct {
	c     *testCluster
	cl    *kgo.Client
	adm   *kadm.Client
	ctx   context.Context
	parts map[int32]*pauseParts
}

func newMoveFixture(t *testing.T) *moveFixture {
	f := &moveFixture{parts: map[int32]*pauseParts{}}
	var mu sync.Mutex
	f.c, f.cl, f.adm, f.ctx = startWithTopic(t, 3, "mv", 1, func(cfg *Config) {
		id := cfg.Cluster.NodeID
		cfg.wrapTxnParts = func(inner txn.Partitions) txn.Partitions {
			p := &pauseParts{Partitions: inner}
			mu.Lock()
			f.parts[id] = p
			mu.Unlock()
			return p
		}
	})
	f.c.waitLeaders(f.adm, "mv", 1)
	return f
}

// initTxn is InitProducerId v4 for id through the cluster's coordinator
// (kgo routes it), naming pid and epoch (-1, -1: none).
func (f *moveFixture) initTxn(id string, pid int64, epoch int16) (*kmsg.InitProducerIDResponse, error) {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version, req.TransactionalID, req.TransactionTimeoutMillis = 4, &id, 60_000
	req.ProducerID, req.ProducerEpoch = pid, epoch
	return req.RequestWith(f.ctx, f.cl)
}

// mustInit is initTxn's first answer from a coordinator (coordAnswer).
func (f *moveFixture) mustInit(t *testing.T, id string, pid int64, epoch int16) *kmsg.InitProducerIDResponse {
	t.Helper()
	var r *kmsg.InitProducerIDResponse
	retry(t, "InitProducerId", moving, func() (int16, error) { return f.initInto(&r, id, pid, epoch) })
	return r
}

// moving tells the answers of a coordinator that is moving, or of none.
func moving(code int16) bool {
	return code == kerr.NotCoordinator.Code || code == kerr.CoordinatorNotAvailable.Code || code == kerr.CoordinatorLoadInProgress.Code
}

// retriable tells the answers Kafka calls retriable.
func retriable(code int16) bool {
	var ke *kerr.Error
	return errors.As(kerr.ErrorForCode(code), &ke) && ke.Retriable
}

// settle repeats a request while it fails in transport or answers a
// retriable error, as a client does, and returns the first other answer.
func settle(t *testing.T, what string, do func() (int16, error)) int16 {
	t.Helper()
	return retry(t, what, retriable, do)
}

// retry repeats a request while it fails in transport or again(its
// answer), and returns the first other answer.
func retry(t *testing.T, what string, again func(int16) bool, do func() (int16, error)) int16 {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, err := do()
		if err == nil && (code == 0 || !again(code)) {
			return code
		}
		if err == nil {
			err = kerr.ErrorForCode(code)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %v after 30s", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// initInto is initTxn's answer into *r, as settle takes it.
func (f *moveFixture) initInto(r **kmsg.InitProducerIDResponse, id string, pid int64, epoch int16) (int16, error) {
	resp, err := f.initTxn(id, pid, epoch)
	if err != nil {
		return 0, err
	}
	*r = resp
	return resp.ErrorCode, nil
}

// addPartition is AddPartitionsToTxn v3 of mv/0 sent to node (-1: the
// coordinator kgo finds).
func (f *moveFixture) addPartition(ctx context.Context, node int32, id string, pid int64, epoch int16) (int16, error) {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch = 3, id, pid, epoch
	rt := kmsg.NewAddPartitionsToTxnRequestTopic()
	rt.Topic, rt.Partitions = "mv", []int32{0}
	req.Topics = append(req.Topics, rt)
	// kgo sends the highest version both sides know: v4+ carries the
	// same add in the brokers' batched form (not VerifyOnly).
	tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch = id, pid, epoch
	tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
	tt.Topic, tt.Partitions = "mv", []int32{0}
	tx.Topics = append(tx.Topics, tt)
	req.Transactions = append(req.Transactions, tx)
	var to kmsg.Requestor = f.cl
	if node >= 0 {
		to = f.cl.Broker(int(node))
	}
	resp, err := req.RequestWith(ctx, to)
	if err != nil {
		return 0, err
	}
	switch {
	case resp.ErrorCode != 0:
		return resp.ErrorCode, nil
	case len(resp.Transactions) > 0:
		return resp.Transactions[0].Topics[0].Partitions[0].ErrorCode, nil
	}
	return resp.Topics[0].Partitions[0].ErrorCode, nil
}

// endTxn is EndTxn v3 sent to node (-1: the coordinator kgo finds).
func (f *moveFixture) endTxn(ctx context.Context, node int32, id string, pid int64, epoch int16, commit bool) (int16, error) {
	req := kmsg.NewPtrEndTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = 3, id, pid, epoch, commit
	var to kmsg.Requestor = f.cl
	if node >= 0 {
		to = f.cl.Broker(int(node))
	}
	resp, err := req.RequestWith(ctx, to)
	if err != nil {
		return 0, err
	}
	return resp.ErrorCode, nil
}

// produceTxn writes one transactional record valued v of producer pid at
// epoch and sequence seq to mv/0's leader.
func (f *moveFixture) produceTxn(t *testing.T, id string, pid int64, epoch int16, seq int32, v string) {
	t.Helper()
	r := kmsg.Record{Value: []byte(v)}
	r.Length = int32(len(r.AppendTo(nil)) - 1)
	b := kmsg.RecordBatch{Magic: 2, Attributes: 0x10, NumRecords: 1, Records: r.AppendTo(nil), PartitionLeaderEpoch: -1,
		ProducerID: pid, ProducerEpoch: epoch, FirstSequence: seq, FirstTimestamp: 1, MaxTimestamp: 1}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	deadline := time.Now().Add(30 * time.Second)
	for {
		leader := f.c.servingLeader(f.ctx, f.adm, f.cl, "mv")
		req := produceReq("mv", raw)
		req.TransactionID = &id
		resp, err := req.RequestWith(f.ctx, f.cl.Broker(int(leader)))
		if err != nil {
			t.Fatal(err)
		}
		code := resp.Topics[0].Partitions[0].ErrorCode
		switch {
		case code == 0:
			return
		case code != kerr.NotLeaderForPartition.Code || time.Now().After(deadline):
			t.Fatalf("transactional produce %s to node %d: %v", v, leader, kerr.ErrorForCode(code))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// answer is a request's error code, or its transport error.
type answer struct {
	code int16
	err  error
}

// pauseAt sends a request for id to its coordinator, whose step is armed
// to pause, and returns once the request is paused there: the node, its
// parts and the channel the request's answer comes on once it goes on.
// The role can still move while the cluster settles (a node that joined
// last may be the one rendezvous placement prefers): an answer before the
// pause that says so, or a closed connection, is sent again to the
// coordinator found then, as a client does. An EndTxn answered NONE
// before its "marker" step is not sent again (answer once decided): the
// step still comes, after the answer.
func (f *moveFixture) pauseAt(t *testing.T, id, step string, send func(node int32) (int16, error)) (int32, *pauseParts, <-chan answer) {
	t.Helper()
	for {
		from := f.c.coordinator(f.adm, id)
		p := f.parts[from]
		p.arm(step)
		answered := make(chan answer, 1)
		go func() {
			code, err := send(from)
			answered <- answer{code, err}
		}()
		select {
		case <-p.entered:
			return from, p, answered
		case a := <-answered:
			if step == "marker" && a.err == nil && a.code == 0 {
				// Answer once decided: EndTxn answers once its decision
				// is durable, its markers still to come.
				f.awaitEntered(t, p, step)
				answered <- a
				return from, p, answered
			}
			p.arm("")
			if a.err == nil && !moving(a.code) {
				t.Fatalf("node %d answered before its %s step: %v", from, step, kerr.ErrorForCode(a.code))
			}
			t.Logf("node %d answered before its %s step (%v, %v): again", from, step, kerr.ErrorForCode(a.code), a.err)
		case <-f.ctx.Done():
			t.Fatalf("the %s step was never reached", step)
		}
	}
}

// awaitEntered waits until p's armed step is reached.
func (f *moveFixture) awaitEntered(t *testing.T, p *pauseParts, step string) {
	t.Helper()
	select {
	case <-p.entered:
	case <-f.ctx.Done():
		t.Fatalf("the %s step was never reached", step)
	}
}

// loseCoordinator stops node from, whose request is paused in step, and
// lets the request go on once another node has become the coordinator
// (restored from etcd what from had made durable). It returns the new
// coordinator.
func (f *moveFixture) loseCoordinator(t *testing.T, from int32, p *pauseParts) int32 {
	t.Helper()
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		f.c.stop(from)
	}()
	// A client connected to the others only: from is leaving.
	var seeds []string
	f.c.mu.Lock()
	for id, s := range f.c.nodes {
		if id != from {
			seeds = append(seeds, s.Addr().String())
		}
	}
	f.c.mu.Unlock()
	other, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.MetadataMinAge(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	to := f.c.coordinatorOtherThan(kadm.NewClient(other), "mv-probe", from)
	close(p.proceed)
	<-stopped
	return to
}

// coordinatorOtherThan waits until FindCoordinator names a node other
// than from.
func (c *testCluster) coordinatorOtherThan(adm *kadm.Client, group string, from int32) int32 {
	c.t.Helper()
	return c.coordinatorWhere(adm, group, fmt.Sprintf("a node other than %d", from), func(id int32) bool { return id != from })
}

// retriableOrGone is what a client may see from the node that lost the
// coordinator role mid-request: a retriable error, or the connection
// closed under it. Success is allowed too where the step paused follows
// the durable decision (Kafka answers EndTxn once PrepareCommit is
// written).
func retriableOrGone(t *testing.T, what string, code int16, err error, successOK bool) {
	t.Helper()
	if err != nil {
		return // the leaving node closed the connection: the client retries
	}
	var ke *kerr.Error
	if e := kerr.ErrorForCode(code); code == 0 && !successOK || code != 0 && (!errors.As(e, &ke) || !ke.Retriable) {
		t.Fatalf("%s on the node losing the coordinator role: %v", what, e)
	}
}

// TestClusterTxnCoordinatorMovesMidAdd: the coordinator loses its role
// after an AddPartitionsToTxn is durable but before the partition is
// registered (the relay's write is then fenced, coordinator-fenced records); the client gets a
// retriable error and recovers as franz-go does, with a KIP-360
// InitProducerId naming its own producer id and epoch. The new
// coordinator restored the transaction Ongoing: it aborts it
// (CONCURRENT_TRANSACTIONS) and the retry continues at the abort's epoch
// (the InitProducerId bump) instead of PRODUCER_FENCED, and the next transaction commits.
func TestClusterTxnCoordinatorMovesMidAdd(t *testing.T) {
	f := newMoveFixture(t)
	const id = "mid-add"
	ir := f.mustInit(t, id, -1, -1)
	if ir.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %v", kerr.ErrorForCode(ir.ErrorCode))
	}
	pid, e := ir.ProducerID, ir.ProducerEpoch
	from, p, added := f.pauseAt(t, id, "register", func(node int32) (int16, error) {
		return f.addPartition(f.ctx, node, id, pid, e)
	})
	to := f.loseCoordinator(t, from, p)
	a := <-added
	retriableOrGone(t, "AddPartitionsToTxn", a.code, a.err, false)

	if code := f.mustInit(t, id, pid, e).ErrorCode; code != kerr.ConcurrentTransactions.Code {
		t.Fatalf("KIP-360 InitProducerId at node %d with the transaction restored Ongoing: %v, want CONCURRENT_TRANSACTIONS (its abort)", to, kerr.ErrorForCode(code))
	}
	var r *kmsg.InitProducerIDResponse
	settle(t, "the KIP-360 retry", func() (int16, error) { return f.initInto(&r, id, pid, e) })
	if r.ErrorCode != 0 || r.ProducerID != pid || r.ProducerEpoch <= e {
		t.Fatalf("the client's KIP-360 retry at the new coordinator: %v %d/%d, want NONE with %d at an epoch above %d",
			kerr.ErrorForCode(r.ErrorCode), r.ProducerID, r.ProducerEpoch, pid, e)
	}
	e2 := r.ProducerEpoch
	if code := settle(t, "add", func() (int16, error) { return f.addPartition(f.ctx, -1, id, pid, e2) }); code != 0 {
		t.Fatalf("AddPartitionsToTxn at epoch %d: %v", e2, kerr.ErrorForCode(code))
	}
	f.produceTxn(t, id, pid, e2, 0, "after-move")
	if code := settle(t, "commit", func() (int16, error) { return f.endTxn(f.ctx, -1, id, pid, e2, true) }); code != 0 {
		t.Fatalf("EndTxn commit at epoch %d: %v", e2, kerr.ErrorForCode(code))
	}
	if got := readCommitted(t, f.c, "mv", 1); !slices.Equal(got, []string{"after-move"}) {
		t.Fatalf("read_committed: %v, want [after-move]", got)
	}
	checkNoTxnRecords(t, f.c, f.ctx)
}

// TestClusterTxnCoordinatorMovesMidEndTxn: the coordinator loses its role
// after EndTxn's decision (PrepareCommit) is durable but before any
// marker is written: EndTxn has been answered NONE by then (answer once
// decided), or its answer is lost with the node. The new coordinator
// restores PrepareCommit and completes it (completion at open), so the
// acknowledged commit is read; the client's EndTxn, retried there, is answered
// CONCURRENT_TRANSACTIONS while it does and then NONE, at the same epoch,
// and a KIP-360 InitProducerId after it bumps the epoch without fencing.
func TestClusterTxnCoordinatorMovesMidEndTxn(t *testing.T) {
	f := newMoveFixture(t)
	const id = "mid-end"
	ir := f.mustInit(t, id, -1, -1)
	if ir.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %v", kerr.ErrorForCode(ir.ErrorCode))
	}
	pid, e := ir.ProducerID, ir.ProducerEpoch
	if code := settle(t, "add", func() (int16, error) { return f.addPartition(f.ctx, -1, id, pid, e) }); code != 0 {
		t.Fatalf("AddPartitionsToTxn: %v", kerr.ErrorForCode(code))
	}
	f.produceTxn(t, id, pid, e, 0, "before-move")
	from, p, ended := f.pauseAt(t, id, "marker", func(node int32) (int16, error) {
		return f.endTxn(f.ctx, node, id, pid, e, true)
	})
	f.loseCoordinator(t, from, p)
	a := <-ended
	retriableOrGone(t, "EndTxn", a.code, a.err, true)

	if code := settle(t, "the EndTxn retry", func() (int16, error) { return f.endTxn(f.ctx, -1, id, pid, e, true) }); code != 0 {
		t.Fatalf("the client's EndTxn retry at the new coordinator: %v, want NONE", kerr.ErrorForCode(code))
	}
	var r *kmsg.InitProducerIDResponse
	settle(t, "KIP-360 init", func() (int16, error) { return f.initInto(&r, id, pid, e) })
	if r.ErrorCode != 0 || r.ProducerID != pid || r.ProducerEpoch != e+1 {
		t.Fatalf("KIP-360 InitProducerId after the commit: %v %d/%d, want NONE %d/%d", kerr.ErrorForCode(r.ErrorCode), r.ProducerID, r.ProducerEpoch, pid, e+1)
	}
	if got := readCommitted(t, f.c, "mv", 1); !slices.Equal(got, []string{"before-move"}) {
		t.Fatalf("read_committed: %v, want [before-move]", got)
	}
	checkNoTxnRecords(t, f.c, f.ctx)
}

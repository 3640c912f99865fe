package txn

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgateway/kgateway/kafka/group"
	"github.com/kgateway/kgateway/offsets"
	"github.com/kgateway/kgateway/offsets/offsetstest"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/resolver/resolvertest"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// manualClock is a clock the test moves; timers never fire (tests run the
// loops' passes directly).
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

type nopTimer struct{}

func (nopTimer) Stop() bool { return true }

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) AfterFunc(time.Duration, func()) Timer { return nopTimer{} }

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// marker is one WriteTxnMarker call.
type marker struct {
	tp     offsets.TopicPartition
	pid    int64
	epoch  int16
	commit bool
}

// faultParts is the real resolver with a record of the coordinator's
// calls and injectable marker failures.
type faultParts struct {
	*resolver.Resolver
	mu          sync.Mutex
	markers     []marker
	registered  []marker
	failMarkers bool
	failOn      map[offsets.TopicPartition]bool // markers failing on these partitions only
	failAllocs  atomic.Int32                    // the next this many AllocateProducerID calls fail
	failRegs    atomic.Int32                    // the next this many AddTxnPartition calls fail
	slowFail    time.Duration
	// holdMarkers, when set, holds every WriteTxnMarker until it is
	// closed; markerHeld gets a value (if it has room) as each one waits.
	holdMarkers chan struct{}
	markerHeld  chan struct{}
	// order lists, in the order they took effect, the durable markers
	// ("marker a-0 e1") and the registrations ("register a-0 e1").
	order []string
}

// note appends one entry to p.order.
func (p *faultParts) note(what string, topic string, partition int32, epoch int16) {
	p.mu.Lock()
	p.order = append(p.order, fmt.Sprintf("%s %s-%d e%d", what, topic, partition, epoch))
	p.mu.Unlock()
}

func (p *faultParts) AllocateProducerID(ctx context.Context) (int64, error) {
	if p.failAllocs.Add(-1) >= 0 {
		time.Sleep(p.slowFail) // a slow failure: other requests queue behind it
		return -1, errInjected
	}
	return p.Resolver.AllocateProducerID(ctx)
}

var errInjected = errors.New("injected marker failure")

func (p *faultParts) AddTxnPartition(topic string, partition int32, pid int64, epoch int16) error {
	if p.failRegs.Add(-1) >= 0 {
		return errInjected
	}
	p.mu.Lock()
	p.registered = append(p.registered, marker{tp: offsets.TopicPartition{Topic: topic, Partition: partition}, pid: pid, epoch: epoch})
	p.mu.Unlock()
	err := p.Resolver.AddTxnPartition(topic, partition, pid, epoch)
	if err == nil {
		p.note("register", topic, partition, epoch)
	}
	return err
}

func (p *faultParts) WriteTxnMarker(topic string, partition int32, pid int64, epoch int16, commit bool, ce int32) error {
	p.mu.Lock()
	hold, held := p.holdMarkers, p.markerHeld
	p.mu.Unlock()
	if hold != nil {
		select {
		case held <- struct{}{}:
		default:
		}
		<-hold
	}
	p.mu.Lock()
	fail := p.failMarkers || p.failOn[offsets.TopicPartition{Topic: topic, Partition: partition}]
	if !fail {
		p.markers = append(p.markers, marker{offsets.TopicPartition{Topic: topic, Partition: partition}, pid, epoch, commit})
	}
	p.mu.Unlock()
	if fail {
		return errInjected
	}
	if err := p.Resolver.WriteTxnMarker(topic, partition, pid, epoch, commit, ce); err != nil {
		return err
	}
	p.note("marker", topic, partition, epoch)
	return nil
}

// settle waits until every transaction's completion after the answer is
// done (answer once decided): it takes and releases each id's lock.
func (h *harness) settle() {
	for _, t := range h.c.snapshot() {
		t.mu.Lock()
		t.mu.Unlock() //nolint:staticcheck // an empty critical section: a wait
	}
}

// markers is takeMarkers once every completion is done (settle).
func (h *harness) markers() []marker {
	h.settle()
	return h.parts.takeMarkers()
}

func (p *faultParts) takeMarkers() []marker {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.markers
	p.markers = nil
	return m
}

func (p *faultParts) takeRegistered() []marker {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.registered
	p.registered = nil
	return m
}

type topics struct{ r *resolver.Resolver }

func (t topics) PartitionExists(topic string, partition int32) bool {
	n, ok := t.r.Partitions(topic)
	return ok && partition >= 0 && partition < n
}

// harness is a coordinator over a real offsets store and a real resolver,
// both on t.TempDir(), reopenable.
type harness struct {
	t      *testing.T
	dir    string
	clock  *manualClock
	parts  *faultParts
	store  *offsets.Store
	groups *group.Coordinator
	c      *Coordinator
	cfg    Config
	// wrap, when set, is what the coordinator gets instead of parts.
	wrap func(*faultParts) Partitions
	// writeHook, when set at open, runs before every synced write of the
	// store (offsetstest.WithWriteHook).
	writeHook func() error
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	res := resolvertest.Open(t, resolver.Config{NumPartitions: 3, AutoCreate: true})
	for _, name := range []string{"a", "b"} {
		if _, err := res.EnsureTopic(name); err != nil {
			t.Fatal(err)
		}
	}
	h := &harness{t: t, dir: t.TempDir(), clock: &manualClock{now: time.UnixMilli(1_700_000_000_000)},
		parts: &faultParts{Resolver: res}, cfg: cfg}
	h.open()
	t.Cleanup(h.close)
	return h
}

func (h *harness) open() {
	h.t.Helper()
	opts := offsets.Options{Now: h.clock.Now}
	if h.writeHook != nil {
		opts = offsetstest.WithWriteHook(opts, h.writeHook)
	}
	st, err := offsets.Open(filepath.Join(h.dir, "offsets"), opts)
	if err != nil {
		h.t.Fatal(err)
	}
	h.store = st
	if h.groups, err = group.NewCoordinator(st, group.Config{Topics: topics{h.parts.Resolver}}); err != nil {
		h.t.Fatal(err)
	}
	cfg := h.cfg
	cfg.Clock, cfg.Partitions, cfg.Topics = h.clock, h.parts, topics{h.parts.Resolver}
	if h.wrap != nil {
		cfg.Partitions = h.wrap(h.parts)
	}
	if h.c, err = NewCoordinator(st, cfg); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) close() {
	if h.c == nil {
		return
	}
	h.c.Close()
	h.groups.Close()
	h.store.Close()
	h.c = nil
}

// reopen closes the coordinator and the store and opens both again: what a
// restart keeps is what was durable (durable transitions).
func (h *harness) reopen() {
	h.t.Helper()
	h.close()
	h.open()
}

func str(s string) *string { return &s }

func (h *harness) init(id string, version int16, pid int64, epoch int16) *kmsg.InitProducerIDResponse {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version, req.TransactionalID, req.TransactionTimeoutMillis = version, str(id), 60000
	req.ProducerID, req.ProducerEpoch = pid, epoch
	return h.c.InitProducerID(context.Background(), req, "")
}

// mustInit inits id without a KIP-360 id and returns its producer.
func (h *harness) mustInit(id string) (int64, int16) {
	h.t.Helper()
	r := h.init(id, 4, -1, -1)
	if r.ErrorCode != 0 {
		h.t.Fatalf("init %s: %v", id, kerr.ErrorForCode(r.ErrorCode))
	}
	return r.ProducerID, r.ProducerEpoch
}

func (h *harness) add(id string, pid int64, epoch int16, version int16, tps ...offsets.TopicPartition) int16 {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch = version, id, pid, epoch
	for _, tp := range tps {
		rt := kmsg.NewAddPartitionsToTxnRequestTopic()
		rt.Topic, rt.Partitions = tp.Topic, []int32{tp.Partition}
		req.Topics = append(req.Topics, rt)
	}
	resp := h.c.AddPartitionsToTxn(req)
	code := int16(0)
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				code = p.ErrorCode
			}
		}
	}
	return code
}

func (h *harness) addOffsets(id string, pid int64, epoch int16, grp string) int16 {
	req := kmsg.NewPtrAddOffsetsToTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = 3, id, pid, epoch, grp
	return h.c.AddOffsetsToTxn(req).ErrorCode
}

func (h *harness) end(id string, pid int64, epoch int16, commit bool, version int16) int16 {
	req := kmsg.NewPtrEndTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = version, id, pid, epoch, commit
	return h.c.EndTxn(req).ErrorCode
}

func (h *harness) txnCommit(id string, pid int64, epoch int16, grp string, tp offsets.TopicPartition, off int64) int16 {
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = 3, id, pid, epoch, grp
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = tp.Topic
	rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = tp.Partition, off
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := h.c.TxnOffsetCommit(req, h.groups)
	return resp.Topics[0].Partitions[0].ErrorCode
}

// state returns id's state as DescribeTransactions reports it.
func (h *harness) state(id string) kmsg.DescribeTransactionsResponseTransactionState {
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{id}
	return h.c.DescribeTransactions(req).TransactionStates[0]
}

func tp(topic string, p int32) offsets.TopicPartition {
	return offsets.TopicPartition{Topic: topic, Partition: p}
}

func wantCode(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	wc := int16(0)
	if want != nil {
		wc = want.Code
	}
	if got != wc {
		t.Fatalf("%s: got %v, want %v", what, kerr.ErrorForCode(got), want)
	}
}

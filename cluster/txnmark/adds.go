package txnmark

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/kgateway/kgateway/cluster/owner"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Implicit adds across nodes (doc.go): the leader's request and the
// coordinator's answer, both records below txnadd/.

// Adder is the coordinator's implicit add: kafka/txn's
// AddPartitionImplicitlyWaiting, answering a Kafka error code. It calls
// waiting, at most once, when the add must wait for the completion of
// its transactional id's previous transaction, and answers
// CONCURRENT_TRANSACTIONS at once if waiting returns false.
type Adder func(id string, pid int64, epoch int16, topic string, partition int32, waiting func() bool) int16

// maxWaitingAdds bounds the answers waiting for their transactional id's
// completion, outside the answer slots (a waiting add holds no slot).
const maxWaitingAdds = 1024

// ErrNotServing: an implicit add asked for a partition this node does
// not serve.
var ErrNotServing = errors.New("txnmark: partition not served here")

// addRequest is a txnadd/ record's value.
type addRequest struct {
	ID        string `json:"id"`
	PID       int64  `json:"pid"`
	Epoch     int16  `json:"epoch"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Answered  bool   `json:"answered,omitempty"`
	Code      int16  `json:"code,omitempty"`
}

// adds is the relay's implicit-add state: the requests as the watch
// last saw them and the asks waiting for their answer.
type adds struct {
	dir   string // P txnadd/
	asker string // <nonce>/: this relay's requests

	mu      sync.Mutex
	adder   Adder
	reqs    map[string]*addEntry // by full key
	waiters map[string]chan int16
	seq     uint64
	// sem bounds the answers under way (the answer slots). Not the
	// appliers' semaphore: an answer waits for its transactional id's
	// lock, which an EndTxn holds while its markers wait for this node's
	// appliers.
	sem chan struct{}
	// waiting counts the answers that gave their slot up to wait for
	// their id's completion, at most maxWaiting (a waiting add holds no
	// slot).
	waiting, maxWaiting int
}

// addEntry is one unanswered request as the watch last saw it.
type addEntry struct {
	req     addRequest
	rev     int64
	busy    bool
	done    bool // answered here, or refused: the watch brings what follows
	retryAt time.Time
}

// newAdds names this relay's requests by a random nonce: a restarted
// node never reuses a key its previous incarnation may have left.
func newAdds(prefix string) *adds {
	nonce := make([]byte, 8)
	_, _ = rand.Read(nonce)
	return &adds{dir: prefix + "txnadd/", asker: hex.EncodeToString(nonce) + "/",
		reqs: map[string]*addEntry{}, waiters: map[string]chan int16{},
		sem: make(chan struct{}, maxAppliers), maxWaiting: maxWaitingAdds}
}

// SetAdder makes add the coordinator's answer to implicit adds; the
// relay answers only while it also holds a coordinator ownership
// (SetCoordinator).
func (r *Relay) SetAdder(add Adder) {
	r.adds.mu.Lock()
	r.adds.adder = add
	r.adds.mu.Unlock()
	r.wakeAdds()
}

// AddImplicitly has the coordinator add the partition, led here, to
// producer pid's transaction at epoch (implicit adds across nodes) and
// returns its answer, a Kafka error code; an error when no answer came
// within Options.MarkerTimeout or the request could not be written.
// NONE means the add is durable and its registration record written:
// the caller appends once Verify finds it.
func (r *Relay) AddImplicitly(ctx context.Context, id, topic string, partition int32, pid int64, epoch int16) (int16, error) {
	o, ok := r.serving(topic, partition)
	if !ok {
		return 0, ErrNotServing
	}
	v, err := json.Marshal(addRequest{ID: id, PID: pid, Epoch: epoch, Topic: topic, Partition: partition})
	if err != nil {
		return 0, err
	}
	a := r.adds
	ans := make(chan int16, 1)
	a.mu.Lock()
	a.seq++
	key := a.dir + a.asker + strconv.FormatUint(a.seq, 10)
	a.waiters[key] = ans
	a.mu.Unlock()
	defer r.dropAsk(key)
	ctx, cancel := context.WithTimeout(ctx, r.opts.MarkerTimeout) // a failover of the coordinator may come between
	defer cancel()
	if _, err := r.cli.Put(ctx, key, string(v), clientv3.WithLease(o.Lease)); err != nil {
		return 0, err
	}
	select {
	case code := <-ans:
		return code, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// dropAsk forgets an ask and deletes its request (answered or given up).
func (r *Relay) dropAsk(key string) {
	r.adds.mu.Lock()
	delete(r.adds.waiters, key)
	r.adds.mu.Unlock()
	ctx, cancel := r.ctx()
	defer cancel()
	if _, err := r.cli.Delete(ctx, key); err != nil {
		r.log.Debug("txnmark-add-delete-failed", zap.String("key", key), zap.Error(err)) // its lease ends it
	}
}

// watchAdds keeps the requests current: a load, then the changes; a
// watch that ends starts over with a load.
func (r *Relay) watchAdds(ctx context.Context) {
	a := r.adds
	for ctx.Err() == nil {
		lctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
		resp, err := r.cli.Get(lctx, a.dir, clientv3.WithPrefix())
		cancel()
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
			continue
		}
		a.mu.Lock()
		a.reqs = map[string]*addEntry{}
		for _, kv := range resp.Kvs {
			r.setAddLocked(kv, false)
		}
		a.mu.Unlock()
		r.wakeAdds()
		wc := r.cli.Watch(clientv3.WithRequireLeader(ctx), a.dir, clientv3.WithPrefix(), clientv3.WithRev(resp.Header.Revision+1))
		for wr := range wc {
			if wr.Err() != nil || wr.Canceled {
				break
			}
			a.mu.Lock()
			for _, ev := range wr.Events {
				r.setAddLocked(ev.Kv, ev.Type == mvccpb.DELETE)
			}
			a.mu.Unlock()
			r.wakeAdds()
		}
	}
}

// setAddLocked records one request's new state: an answer goes to its
// asker, an unanswered request waits for the coordinator.
func (r *Relay) setAddLocked(kv *mvccpb.KeyValue, deleted bool) {
	a := r.adds
	k := string(kv.Key)
	if deleted {
		delete(a.reqs, k)
		return
	}
	var req addRequest
	if err := json.Unmarshal(kv.Value, &req); err != nil {
		r.log.Warn("txnmark-bad-add", zap.String("key", k))
		return
	}
	if req.Answered {
		delete(a.reqs, k)
		if w := a.waiters[k]; w != nil {
			select {
			case w <- req.Code:
			default:
			}
		}
		return
	}
	if e := a.reqs[k]; e != nil && e.rev == kv.ModRevision {
		return
	}
	a.reqs[k] = &addEntry{req: req, rev: kv.ModRevision}
}

// wakeAdds has the answer loop look at the requests now.
func (r *Relay) wakeAdds() {
	select {
	case r.addKick <- struct{}{}:
	default:
	}
}

// answerLoop answers the unanswered requests while this relay is the
// coordinator's, when they change and every Retry.
func (r *Relay) answerLoop(ctx context.Context) {
	tick := time.NewTicker(r.opts.Retry)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.addKick:
		case <-tick.C:
		}
		r.answerDue(ctx)
	}
}

// answerDue starts an answer for every unanswered request not being
// answered nor waiting for a retry.
func (r *Relay) answerDue(ctx context.Context) {
	a := r.adds
	g := r.coord.Load()
	a.mu.Lock()
	add := a.adder
	if g == nil || add == nil {
		a.mu.Unlock()
		return
	}
	now := time.Now()
	type job struct {
		key string
		e   *addEntry
		req addRequest
		rev int64
	}
	var jobs []job
	for k, e := range a.reqs {
		if e.busy || e.done || now.Before(e.retryAt) {
			continue
		}
		e.busy = true
		jobs = append(jobs, job{k, e, e.req, e.rev})
	}
	a.mu.Unlock()
	for _, j := range jobs {
		select {
		case <-ctx.Done():
			return
		case a.sem <- struct{}{}:
		}
		r.wg.Add(1)
		go func() {
			s := &answerSlot{a: a}
			defer func() { s.release(); r.wg.Done() }()
			ok := r.answer(ctx, add, s.wait, *g, j.key, j.req, j.rev)
			a.mu.Lock()
			// Done only under the ownership still held: one taken
			// meanwhile (SetCoordinator) answers the request again.
			j.e.busy, j.e.done = false, ok && r.coord.Load() == g
			if !ok {
				j.e.retryAt = time.Now().Add(r.opts.Retry)
			}
			a.mu.Unlock()
		}()
	}
}

// answerSlot is one answer's slot (adds.sem), taken before the answer
// starts and given up as soon as the add waits for its transactional id's
// completion (a waiting add holds no slot).
type answerSlot struct {
	a       *adds
	waiting bool // the slot was given up for a wait
}

// wait gives the slot up for the wait, counted among the waiting
// answers; false, the slot kept, when maxWaiting answers wait already
// (the add is then answered CONCURRENT_TRANSACTIONS). It never blocks:
// kafka/txn calls it under its add queue's lock.
func (s *answerSlot) wait() bool {
	a := s.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if s.waiting {
		return true
	}
	if a.waiting >= a.maxWaiting {
		return false
	}
	a.waiting++
	s.waiting = true
	<-a.sem // held by this answer: never blocks
	return true
}

// release ends the answer: its slot, or its count among the waiting.
func (s *answerSlot) release() {
	a := s.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if s.waiting {
		a.waiting--
		return
	}
	<-a.sem
}

// Kafka's codes for a coordinator that cannot answer now: a relay whose
// node is taking the role over (its restored coordinator not swapped in
// yet) or losing it.
const (
	codeNotCoordinator     = 16
	codeCoordinatorNA      = 15
	codeCoordinatorLoading = 14
)

// notReady tells the answers that are not the coordinator's to give:
// the request waits for one that is.
func notReady(code int16) bool {
	return code == codeNotCoordinator || code == codeCoordinatorNA || code == codeCoordinatorLoading
}

// answer has the coordinator add the request's partition and writes its
// answer over the request as asked, under the coordinator ownership
// (implicit adds across nodes). False when the answer is to be tried
// again (etcd failed); true when written, or refused because the
// request changed or went or the ownership is lost.
func (r *Relay) answer(ctx context.Context, add Adder, waiting func() bool, guard []clientv3.Cmp, key string, req addRequest, rev int64) bool {
	req.Code = add(req.ID, req.PID, req.Epoch, req.Topic, req.Partition, waiting)
	if notReady(req.Code) {
		return false // the coordinator being restored here: its asker waits
	}
	req.Answered = true
	v, err := json.Marshal(req)
	if err != nil {
		return true
	}
	cctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	cmp := append(append([]clientv3.Cmp(nil), guard...), clientv3.Compare(clientv3.ModRevision(key), "=", rev))
	resp, err := r.cli.Txn(cctx).If(cmp...).Then(clientv3.OpPut(key, string(v), clientv3.WithIgnoreLease())).Commit()
	if err != nil {
		return false
	}
	if !resp.Succeeded {
		// The request changed or went (its asker gave up), or this
		// relay's coordinator ownership is lost: its successor answers.
		r.log.Debug("txnmark-add-answer-refused", zap.String("key", key), zap.Error(owner.ErrFenced))
	}
	return true
}

package txnmark

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgateway/kgateway/cluster/owner"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// ErrNotCoordinator: a coordinator call on a relay that has no
// coordinator ownership (SetCoordinator), or whose ownership was lost.
var ErrNotCoordinator = errors.New("txnmark: not the transaction coordinator")

// Partitions is the local partition side: the resolver.
type Partitions interface {
	AddTxnPartition(topic string, partition int32, pid int64, epoch int16) error
	WriteTxnMarker(topic string, partition int32, pid int64, epoch int16, commit bool, coordinatorEpoch int32) error
}

// Serving reports the ownership under which this node serves a partition
// now; ok is false when it does not serve it.
type Serving func(topic string, partition int32) (o owner.Ownership, ok bool)

// Options tune a Relay; zero values are the defaults.
type Options struct {
	Logger *zap.Logger
	// MarkerTimeout bounds how long WriteTxnMarker waits for the
	// partition's leader (a failover takes a session timeout); past it
	// the coordinator's timeout loop tries again (the transaction timeout).
	MarkerTimeout time.Duration
	// Retry is how often records not applied yet are tried again.
	Retry time.Duration
	// Timeout bounds one etcd call.
	Timeout time.Duration
	// Exists tells whether a partition exists: a marker whose partition
	// is gone (its topic deleted) has its record deleted by the
	// coordinator when it times out. Nil: every partition exists.
	Exists func(topic string, partition int32) bool
	// MaxTxnOps is etcd's --max-txn-ops (128 by default): the most
	// decisions one etcd transaction holds (WriteTxnMarkers).
	MaxTxnOps int
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.MarkerTimeout <= 0 {
		o.MarkerTimeout = 15 * time.Second
	}
	if o.Retry <= 0 {
		o.Retry = time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.MaxTxnOps <= 0 {
		o.MaxTxnOps = 128
	}
	return o
}

// maxAppliers bounds the records applied at once (each a registration or
// a marker's group commit).
const maxAppliers = 16

// Relay is one node's end of the relay: the coordinator side when the
// node holds the coordinator role, and the partition side always.
type Relay struct {
	cli     *clientv3.Client
	owners  func() *owner.Manager
	dir     string // P txn/
	parts   Partitions
	serving Serving
	opts    Options
	log     *zap.Logger

	coord atomic.Pointer[[]clientv3.Cmp] // the coordinator ownership's guard

	adds    *adds         // implicit adds across nodes (adds.go)
	addKick chan struct{} // wakes the answer loop

	locks keyLocks // one partition and producer at a time (markers.go)

	kick    chan struct{}
	sem     chan struct{}
	stop    chan struct{}
	wg      sync.WaitGroup // the watch, the apply loop and the appliers
	started atomic.Bool
	closed  atomic.Bool

	mu struct {
		sync.Mutex
		recs map[string]*entry // by key below dir
		// rev is the etcd revision recs reflect (0: none loaded yet);
		// waiters are WriteTxnMarker calls waiting for a key to go.
		rev     int64
		waiters map[*waiter]struct{}
		// dirty are the keys changed since the last pass; all asks the
		// next pass to look at every key (a load, a partition newly
		// served).
		dirty map[string]struct{}
		all   bool
		// floors are the keys whose record a direct marker deleted,
		// by the deletion's revision: no job for an older record is
		// applied (markers.go); dropped once recs reflect it.
		floors map[string]int64
	}
}

// waiter waits until key (below dir) is absent from recs as of a
// revision at or after rev: its record, written at rev, was deleted.
type waiter struct {
	key  string
	rev  int64
	gone chan struct{}
}

// record is a key's value.
type record struct {
	Epoch    int16  `json:"epoch"`
	Decision string `json:"decision,omitempty"` // "", "commit" or "abort"
}

// entry is one record as the watch last saw it, and what this node did
// with it.
type entry struct {
	topic     string
	partition int32
	pid       int64
	rec       record
	rev       int64 // the record's mod revision

	busy bool
	// appliedRev and appliedEpoch: the registration at appliedRev was
	// handed to the resolver under the ownership of that epoch. A new
	// ownership (a new local copy) applies it again.
	appliedRev   int64
	appliedEpoch uint64
	retryAt      time.Time
}

// New returns a relay under prefix (the cluster's), applying records to
// parts for the partitions serving reports. Start it before use: its
// watch applies records and tells WriteTxnMarker when one is gone.
func New(cli *clientv3.Client, owners func() *owner.Manager, prefix string, parts Partitions, serving Serving, opts Options) *Relay {
	opts = opts.withDefaults()
	r := &Relay{cli: cli, owners: owners, dir: prefix + "txn/", parts: parts, serving: serving, opts: opts,
		log: opts.Logger, kick: make(chan struct{}, 1), sem: make(chan struct{}, maxAppliers),
		stop: make(chan struct{}), adds: newAdds(prefix), addKick: make(chan struct{}, 1)}
	r.mu.recs = map[string]*entry{}
	r.mu.waiters = map[*waiter]struct{}{}
	r.mu.dirty = map[string]struct{}{}
	r.mu.floors = map[string]int64{}
	return r
}

func (r *Relay) key(topic string, partition int32, pid int64) string {
	return r.dir + topic + "/" + strconv.Itoa(int(partition)) + "/" + strconv.FormatInt(pid, 10)
}

// parseKey splits a key below dir; topic names hold no '/', but the
// parse takes the last two parts so that it never depends on it.
func parseKey(k string) (topic string, partition int32, pid int64, ok bool) {
	i := strings.LastIndexByte(k, '/')
	if i < 0 {
		return "", 0, 0, false
	}
	j := strings.LastIndexByte(k[:i], '/')
	if j <= 0 {
		return "", 0, 0, false
	}
	p, err1 := strconv.ParseInt(k[j+1:i], 10, 32)
	id, err2 := strconv.ParseInt(k[i+1:], 10, 64)
	if err1 != nil || err2 != nil {
		return "", 0, 0, false
	}
	return k[:j], int32(p), id, true
}

func (r *Relay) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), r.opts.Timeout)
}

// Start begins watching the records and applying those of the partitions
// this node serves.
func (r *Relay) Start() {
	if r.started.Swap(true) {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.wg.Add(5)
	go func() {
		defer r.wg.Done()
		<-r.stop
		cancel()
	}()
	go func() {
		defer r.wg.Done()
		r.watch(ctx)
	}()
	go func() {
		defer r.wg.Done()
		r.applyLoop(ctx)
	}()
	go func() {
		defer r.wg.Done()
		r.watchAdds(ctx)
	}()
	go func() {
		defer r.wg.Done()
		r.answerLoop(ctx)
	}()
}

// Close stops the relay and waits for its appliers.
func (r *Relay) Close() {
	if r.closed.Swap(true) {
		return
	}
	close(r.stop)
	r.wg.Wait()
}

// Kick has the relay look at every record now: a partition may have
// become served.
func (r *Relay) Kick() {
	r.mu.Lock()
	r.mu.all = true
	r.mu.Unlock()
	r.wake()
	r.wakeAdds() // the coordinator role may be served now
}

// wake has the relay look at the records changed since its last pass.
func (r *Relay) wake() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

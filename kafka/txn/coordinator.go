package txn

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgateway/kgateway/kafka/clock"
	"github.com/kgateway/kgateway/offsets"
	"go.uber.org/zap"
)

// Kafka's broker defaults for the transaction settings below, and the
// bounds kgateway adds so that no client can grow the coordinator's state
// without limit (the transaction bounds).
const (
	DefaultMaxTimeout            = 15 * time.Minute   // transaction.max.timeout.ms
	DefaultIDExpiration          = 7 * 24 * time.Hour // transactional.id.expiration.ms
	DefaultAbortTimedOutInterval = 10 * time.Second   // transaction.abort.timed.out.transaction.cleanup.interval.ms
	DefaultRemoveExpiredInterval = time.Hour          // transaction.remove.expired.transaction.cleanup.interval.ms
	DefaultMaxPartitionsPerTxn   = 10000
	DefaultMaxGroupsPerTxn       = 1000
	DefaultMaxTransactionalIDs   = 100000
	DefaultMaxHeldEntries        = 1000000
	// Per principal (owners.go): a tenth of the global bounds.
	DefaultMaxTransactionalIDsPerPrincipal       = DefaultMaxTransactionalIDs / 10
	DefaultMaxHeldEntriesPerPrincipal            = DefaultMaxHeldEntries / 10
	maxIDLen                                     = 1 << 15 // a Kafka string's length limit
	coordinatorEpoch                       int32 = 0       // one node: the coordinator epoch never changes
)

// Partitions is the partition side of transactions: the resolver
// (resolver/txn.go). Tests inject faults through it.
type Partitions interface {
	AllocateProducerID(ctx context.Context) (int64, error)
	AddTxnPartition(topic string, partition int32, pid int64, epoch int16) error
	WriteTxnMarker(topic string, partition int32, pid int64, epoch int16, commit bool, coordinatorEpoch int32) error
}

// MarkerBatcher is a Partitions that writes one transaction's markers on
// all its partitions in one call (cluster mode: cluster/txnmark writes
// every decision in one etcd transaction). errs[i] is the outcome of
// partitions[i]; nil means its marker is durable.
type MarkerBatcher interface {
	WriteTxnMarkers(pid int64, epoch int16, commit bool, coordinatorEpoch int32, partitions []offsets.TopicPartition) (errs []error)
}

// Decider is a Partitions told of a transaction's decision before its
// markers (a single node's resolver): a partition registered in the
// transaction without a batch of it then refuses a batch that would start
// it (a decided registration takes no first batch), as Kafka's
// verification answers CONCURRENT_TRANSACTIONS while the transaction
// completes.
type Decider interface {
	DecideTxnPartition(topic string, partition int32, pid int64, epoch int16) error
}

// TopicChecker tells whether a partition exists: AddPartitionsToTxn
// refuses unknown ones, and a marker for a partition that no longer
// exists (its topic was deleted) counts as written.
type TopicChecker interface {
	PartitionExists(topic string, partition int32) bool
}

// Config configures a Coordinator; zero values mean Kafka's defaults.
type Config struct {
	Logger *zap.Logger
	Clock  Clock
	// Partitions writes markers and registers partitions (required).
	Partitions Partitions
	// Topics checks partitions (required).
	Topics TopicChecker

	MaxTimeout            time.Duration // transaction.max.timeout.ms
	IDExpiration          time.Duration // transactional.id.expiration.ms
	AbortTimedOutInterval time.Duration // transaction.abort.timed.out.transaction.cleanup.interval.ms
	RemoveExpiredInterval time.Duration // transaction.remove.expired.transaction.cleanup.interval.ms
	MaxPartitionsPerTxn   int           // partitions one transaction may hold (the transaction bounds)
	MaxGroupsPerTxn       int           // groups one transaction may commit offsets to (the transaction bounds)
	MaxTransactionalIDs   int           // transactional ids kept at once (the transaction bounds)
	// MaxHeldEntries bounds the partitions and groups of all transactions
	// together (the transaction bounds): ids times partitions per transaction would be too
	// many to keep.
	MaxHeldEntries int
	// MaxTransactionalIDsPerPrincipal and MaxHeldEntriesPerPrincipal are
	// the same bounds per principal (owners.go; the transaction bounds).
	MaxTransactionalIDsPerPrincipal int
	MaxHeldEntriesPerPrincipal      int
}

// Validate reports every problem with cfg at once.
func (cfg Config) Validate() error {
	var errs []error
	if cfg.Partitions == nil || cfg.Topics == nil {
		errs = append(errs, errors.New("txn: config: Partitions and Topics are required"))
	}
	for name, d := range map[string]time.Duration{
		"transaction.max.timeout.ms": cfg.MaxTimeout, "transactional.id.expiration.ms": cfg.IDExpiration,
		"transaction.abort.timed.out.transaction.cleanup.interval.ms": cfg.AbortTimedOutInterval,
		"transaction.remove.expired.transaction.cleanup.interval.ms":  cfg.RemoveExpiredInterval,
	} {
		if d < 0 {
			errs = append(errs, fmt.Errorf("txn: config: %s %v is negative", name, d))
		}
	}
	if cfg.MaxTimeout > time.Duration(1<<31-1)*time.Millisecond {
		errs = append(errs, fmt.Errorf("txn: config: transaction.max.timeout.ms %v exceeds an int32 of ms", cfg.MaxTimeout))
	}
	if cfg.MaxPartitionsPerTxn < 0 || cfg.MaxGroupsPerTxn < 0 || cfg.MaxTransactionalIDs < 0 || cfg.MaxHeldEntries < 0 ||
		cfg.MaxTransactionalIDsPerPrincipal < 0 || cfg.MaxHeldEntriesPerPrincipal < 0 {
		errs = append(errs, errors.New("txn: config: bounds must not be negative"))
	}
	return errors.Join(errs...)
}

func (cfg Config) withDefaults() Config {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&cfg.MaxTimeout, DefaultMaxTimeout)
	def(&cfg.IDExpiration, DefaultIDExpiration)
	def(&cfg.AbortTimedOutInterval, DefaultAbortTimedOutInterval)
	def(&cfg.RemoveExpiredInterval, DefaultRemoveExpiredInterval)
	defInt := func(n *int, v int) {
		if *n == 0 {
			*n = v
		}
	}
	defInt(&cfg.MaxPartitionsPerTxn, DefaultMaxPartitionsPerTxn)
	defInt(&cfg.MaxGroupsPerTxn, DefaultMaxGroupsPerTxn)
	defInt(&cfg.MaxTransactionalIDs, DefaultMaxTransactionalIDs)
	defInt(&cfg.MaxHeldEntries, DefaultMaxHeldEntries)
	defInt(&cfg.MaxTransactionalIDsPerPrincipal, min(DefaultMaxTransactionalIDsPerPrincipal, cfg.MaxTransactionalIDs))
	defInt(&cfg.MaxHeldEntriesPerPrincipal, min(DefaultMaxHeldEntriesPerPrincipal, cfg.MaxHeldEntries))
	return cfg
}

// Coordinator coordinates every transactional id of this node. It is safe
// for concurrent use.
type Coordinator struct {
	store *offsets.Store
	cfg   Config
	log   *zap.Logger
	clock Clock
	parts Partitions

	closing atomic.Bool
	// stop is closed by Close: a completion stops waiting for its
	// markers then (a prompt Close).
	stop chan struct{}
	// held counts the partitions and groups of every transaction's state
	// (the transaction bounds), changed only with a txn's state (setState, forget).
	held atomic.Int64

	mu struct {
		sync.Mutex
		txns         map[string]*txn
		owners       map[string]*usage // by principal (owners.go)
		abortTimer   Timer
		removeTimer  Timer
		closed       bool
		backgroundWG sync.WaitGroup
	}
}

// txn is one transactional id. st is its durable state as last written
// (durable transitions): every change is written to the store first and applied to st
// only once durable.
type txn struct {
	id   string // st.ID, readable without mu
	mu   sync.Mutex
	st   offsets.Txn
	dead bool // removed from the map (expired); lookups retry
	// owner is the principal's usage the id counts against (owners.go);
	// nil: none. Set under mu and Coordinator.mu, read under either.
	owner *usage
	// ownerStored: the owner's record is in the store (owners.go).
	// Under mu.
	ownerStored bool
	// adds queues the id's partition adds to write them together
	// (addQueue); its own lock.
	adds addQueue
}

// NewCoordinator loads every transactional id the store holds and recovers
// them before it returns (completion at open): transactions in PrepareCommit or
// PrepareAbort are completed, and the partitions of Ongoing ones are
// registered again with the resolver. Then it starts the timeout and
// expiration loops. The store stays owned by the caller; Close the
// coordinator before the store.
func NewCoordinator(store *offsets.Store, cfg Config) (*Coordinator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	c := &Coordinator{store: store, cfg: cfg, log: cfg.Logger, clock: cfg.Clock, parts: cfg.Partitions, stop: make(chan struct{})}
	c.mu.txns = make(map[string]*txn)
	c.mu.owners = make(map[string]*usage)
	persisted, err := store.Txns()
	if err != nil {
		return nil, fmt.Errorf("txn: load transactions: %w", err)
	}
	owners, err := store.Owners(offsets.OwnerTxn)
	if err != nil {
		return nil, fmt.Errorf("txn: load owners: %w", err)
	}
	for _, st := range persisted {
		t := &txn{id: st.ID, st: st}
		c.mu.txns[st.ID] = t
		c.held.Add(entries(st))
		c.loadOwner(t, owners)
		c.recover(t)
	}
	c.dropStaleOwners(owners)
	c.mu.Lock()
	c.scheduleLocked()
	c.mu.Unlock()
	return c, nil
}

// recover brings one loaded transaction back to a state requests can
// continue from (completion at open).
func (c *Coordinator) recover(t *txn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch t.st.State {
	case offsets.TxnPrepareCommit, offsets.TxnPrepareAbort:
		if err := c.completeLocked(t); err != nil {
			c.log.Warn("txn-recovery-incomplete", zap.String("transactional-id", t.st.ID), zap.Error(err))
		}
	case offsets.TxnOngoing:
		for _, tp := range t.st.Partitions {
			if err := c.parts.AddTxnPartition(tp.Topic, tp.Partition, t.st.ProducerID, t.st.Epoch); err != nil &&
				c.cfg.Topics.PartitionExists(tp.Topic, tp.Partition) {
				c.log.Warn("txn-recovery-register-failed", zap.String("transactional-id", t.st.ID),
					zap.Stringer("partition", tp), zap.Error(err))
			}
		}
	}
}

// Close stops the background loops and returns once none of them can
// write the store any more; it does not close the store. A completion
// waiting for its markers stops waiting (a prompt Close): its
// transaction stays in its durable Prepare state, whose markers
// recovery writes at the next open (completion at open).
func (c *Coordinator) Close() {
	if c.closing.Swap(true) {
		return
	}
	c.mu.Lock()
	c.mu.closed = true
	close(c.stop)
	for _, tm := range []Timer{c.mu.abortTimer, c.mu.removeTimer} {
		if tm != nil {
			tm.Stop()
		}
	}
	c.mu.Unlock()
	c.mu.backgroundWG.Wait()
}

func (c *Coordinator) scheduleLocked() {
	c.mu.abortTimer = c.every(c.cfg.AbortTimedOutInterval, c.AbortTimedOut, func(t Timer) { c.mu.abortTimer = t })
	c.mu.removeTimer = c.every(c.cfg.RemoveExpiredInterval, c.RemoveExpired, func(t Timer) { c.mu.removeTimer = t })
}

// every runs f every d until Close; set records the next timer (under
// c.mu).
func (c *Coordinator) every(d time.Duration, f func(), set func(Timer)) Timer {
	return c.clock.AfterFunc(d, func() {
		c.mu.Lock()
		if c.mu.closed {
			c.mu.Unlock()
			return
		}
		c.mu.backgroundWG.Add(1)
		c.mu.Unlock()
		f()
		c.mu.backgroundWG.Done()
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.mu.closed {
			set(c.every(d, f, set))
		}
	})
}

// lookup returns the live transaction of id, locked, or nil.
func (c *Coordinator) lookup(id string) *txn {
	for {
		c.mu.Lock()
		t := c.mu.txns[id]
		c.mu.Unlock()
		if t == nil {
			return nil
		}
		t.mu.Lock()
		if !t.dead {
			return t
		}
		t.mu.Unlock()
	}
}

// create adds a new transactional id (not yet durable: the caller writes
// it), owned by principal, and returns it locked; nil when
// MaxTransactionalIDs are kept, or principal's
// MaxTransactionalIDsPerPrincipal (the transaction bounds). If another request created id
// meanwhile, that one is returned.
func (c *Coordinator) create(id, principal string) *txn {
	for {
		c.mu.Lock()
		if t := c.mu.txns[id]; t != nil {
			c.mu.Unlock()
			if t := c.lookup(id); t != nil {
				return t
			}
			continue // forgotten (a failed first InitProducerId) while waiting: create it
		}
		u := c.ownerLocked(principal)
		if len(c.mu.txns) >= c.cfg.MaxTransactionalIDs || u != nil && u.ids >= c.cfg.MaxTransactionalIDsPerPrincipal {
			c.mu.Unlock()
			return nil
		}
		t := &txn{id: id, st: offsets.Txn{ID: id, ProducerID: -1, LastProducerID: -1, Epoch: -1, LastEpoch: -1, State: offsets.TxnEmpty, NextProducerID: noPID}}
		if u != nil {
			u.ids++
			t.owner = u
		}
		t.mu.Lock()
		c.mu.txns[id] = t
		c.mu.Unlock()
		return t
	}
}

// forget removes t, which the caller holds locked and marks dead.
func (c *Coordinator) forget(t *txn) {
	t.dead = true
	c.held.Add(-entries(t.st))
	c.mu.Lock()
	if c.mu.txns[t.id] == t {
		delete(c.mu.txns, t.id)
		c.disownLocked(t)
	}
	c.mu.Unlock()
}

// snapshot returns every transaction, sorted by id.
func (c *Coordinator) snapshot() []*txn {
	c.mu.Lock()
	out := make([]*txn, 0, len(c.mu.txns))
	for _, t := range c.mu.txns {
		out = append(out, t)
	}
	c.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// persist writes next durably and, once it is, makes it t's state (durable transitions).
func (c *Coordinator) persist(t *txn, next offsets.Txn) error {
	if err := c.store.PutTxn(next); err != nil {
		c.log.Warn("txn-persist-failed", zap.String("transactional-id", next.ID), zap.Error(err))
		return err
	}
	c.setState(t, next)
	return nil
}

// setState makes next t's state (the caller wrote it) and keeps held.
func (c *Coordinator) setState(t *txn, next offsets.Txn) {
	c.held.Add(entries(next) - entries(t.st))
	if u := t.owner; u != nil {
		u.held.Add(entries(next) - entries(t.st))
	}
	t.st = next
}

// entries is what a state holds of MaxHeldEntries.
func entries(st offsets.Txn) int64 { return int64(len(st.Partitions) + len(st.Groups)) }

// overHeld reports whether moving t to next would hold more than
// MaxHeldEntries, or than its owner's MaxHeldEntriesPerPrincipal (the transaction bounds).
// Concurrent transactions may each pass the check at once: a bound is
// exceeded by at most one request per transaction.
func (c *Coordinator) overHeld(t *txn, next offsets.Txn) bool {
	delta := entries(next) - entries(t.st)
	return c.held.Load()+delta > int64(c.cfg.MaxHeldEntries) || c.overOwnerHeld(t, delta)
}

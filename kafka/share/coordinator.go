package share

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/kgateway/kgateway/offsets"
	"go.uber.org/zap"
)

// Kafka's defaults of the group.share.* broker configs.
const (
	DefaultRecordLockDuration      = 30 * time.Second
	DefaultDeliveryCountLimit      = 5
	DefaultPartitionMaxRecordLocks = 2000
	DefaultSessionTimeout          = 45 * time.Second
	DefaultHeartbeatInterval       = 5 * time.Second
	DefaultMaxSize                 = 200
	DefaultMaxShareSessions        = 2000
	// Per principal and per connection (the share bounds): a tenth of the sessions,
	// and as many as one client process has any use for (one session
	// per share group a consumer of that connection is a member of).
	DefaultMaxShareSessionsPerPrincipal  = DefaultMaxShareSessions / 10
	DefaultMaxShareSessionsPerConnection = 10
	DefaultMinRecordLockDuration         = 15 * time.Second
	DefaultMaxRecordLockDuration         = 60 * time.Second
)

// Bounds on what one request may make the coordinator hold (the share bounds).
const (
	maxSessionPartitions = 10000 // partitions of one share session
	maxAckBatches        = 1000  // acknowledgement batches of one partition in one request
	defaultMaxRecords    = 500   // a ShareFetch without MaxRecords (v0)
	maxMemberIDLen       = 36    // a client-generated UUID
)

// Config is the share coordinator's configuration (group.share.*).
type Config struct {
	RecordLockDuration      time.Duration // group.share.record.lock.duration.ms
	MinRecordLockDuration   time.Duration // group.share.min.record.lock.duration.ms
	MaxRecordLockDuration   time.Duration // group.share.max.record.lock.duration.ms
	DeliveryCountLimit      int           // group.share.delivery.count.limit
	PartitionMaxRecordLocks int           // group.share.partition.max.record.locks
	SessionTimeout          time.Duration // group.share.session.timeout.ms
	HeartbeatInterval       time.Duration // group.share.heartbeat.interval.ms
	MaxSize                 int           // group.share.max.size
	MaxShareSessions        int           // group.share.max.share.sessions
	// MaxShareSessionsPerPrincipal and MaxShareSessionsPerConnection
	// bound the share sessions one principal and one connection hold
	// (the share bounds).
	MaxShareSessionsPerPrincipal  int
	MaxShareSessionsPerConnection int
	// Consumer are the broker's consumer-group settings, the defaults and
	// bounds of the consumer.* group configs.
	Consumer ConsumerConfig
	Logger   *zap.Logger
	Now      func() time.Time
	// States holds the share-partition states in cluster mode (share states outside the offsets store); nil
	// on a single node, where the offset store does.
	States States
	// DeadLetters is where the DLQ writer (dlq.go, KIP-1191) writes:
	// nil, or a leader side, serves no dead-letter queues.
	DeadLetters DeadLetterLog
	// DLQEnabled reports whether share.version is finalized at 2 or
	// more, which turns dead-letter queues on (Kafka's
	// ShareVersion.supportsShareGroupDLQ); nil: never.
	DLQEnabled func() bool
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	defInt := func(d *int, v int) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.RecordLockDuration, DefaultRecordLockDuration)
	def(&c.MinRecordLockDuration, min(DefaultMinRecordLockDuration, c.RecordLockDuration))
	def(&c.MaxRecordLockDuration, max(DefaultMaxRecordLockDuration, c.RecordLockDuration))
	def(&c.SessionTimeout, DefaultSessionTimeout)
	// Kafka's consumer-group defaults, where kafka/ gave none.
	def(&c.Consumer.Session, 45*time.Second)
	def(&c.Consumer.MinSession, 45*time.Second)
	def(&c.Consumer.MaxSession, 60*time.Second)
	def(&c.Consumer.Heartbeat, 5*time.Second)
	def(&c.Consumer.MinHeartbeat, 5*time.Second)
	def(&c.Consumer.MaxHeartbeat, 15*time.Second)
	def(&c.HeartbeatInterval, DefaultHeartbeatInterval)
	defInt(&c.DeliveryCountLimit, DefaultDeliveryCountLimit)
	defInt(&c.PartitionMaxRecordLocks, DefaultPartitionMaxRecordLocks)
	defInt(&c.MaxSize, DefaultMaxSize)
	defInt(&c.MaxShareSessions, DefaultMaxShareSessions)
	defInt(&c.MaxShareSessionsPerPrincipal, min(DefaultMaxShareSessionsPerPrincipal, c.MaxShareSessions))
	defInt(&c.MaxShareSessionsPerConnection, min(DefaultMaxShareSessionsPerConnection, c.MaxShareSessions))
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Log is what the coordinator needs of the partitions. Read must be a
// cursorless read of the log (R1): the coordinator keeps its positions in
// its own state, never in the ledger (cursorless share reads).
type Log interface {
	Partitions(topic string) (int32, bool)
	TopicID(topic string) ([16]byte, bool)
	TopicName(id [16]byte) (string, bool)
	Bounds(topic string, partition int32) (logStart, hwm int64, err error)
	// Read and ReadCommitted read into `into` (a ShareFetch's response,
	// wire.go): its lease holds the batches' buffers until the response
	// is written; nil reads unleased, the batches the caller's.
	Read(topic string, partition int32, offset int64, maxBytes int, into Wire) ([][]byte, error)
	// ReadCommitted is Read at isolation read_committed: batches below
	// the last stable offset only, the last stable offset, and the
	// aborted transactions overlapping the batches, in first-offset
	// order (a group with share.isolation.level=read_committed).
	ReadCommitted(topic string, partition int32, offset int64, maxBytes int, into Wire) (batches [][]byte, lso int64, aborted []AbortedTxn, err error)
	// MaxBytes bounds the record bytes of one ShareFetch response
	// (fetch.max.bytes).
	MaxBytes() int
	// Wait blocks until an append to one of parts, a receive on one of
	// wake, the time until, or ctx ends; false when the wait should end
	// (ctx done or the server closing).
	Wait(ctx context.Context, parts []offsets.TopicPartition, wake []<-chan struct{}, until time.Time) bool
	// Code maps an error of Bounds or Read to a Kafka error code.
	Code(err error) int16
}

// AbortedTxn is an aborted transaction of a partition: its producer and
// the offset of its first record (Kafka's AbortedTransaction).
type AbortedTxn struct {
	ProducerID  int64
	FirstOffset int64
}

// Namespace tells whether a group id is taken by a group of another type
// (classic or consumer): share groups share the id namespace with them.
type Namespace interface {
	OtherGroup(id string) bool
}

// Coordinator is the share-group coordinator: membership, assignment,
// share sessions and share-partition state, durable in the offset store.
type Coordinator struct {
	cfg   Config
	store *offsets.Store
	log   Log
	ns    Namespace
	// writer makes share-partition states durable in the store,
	// gathering concurrent requests' states into one sync (stateWriter);
	// nil on a cluster's leader side.
	writer *stateWriter
	// dlq writes the copies of archiving records to the groups'
	// dead-letter queues (dlq.go).
	dlq dlqRunner
	// published mirrors mu.configs (group id to its configs, each map
	// never changed once stored) for GroupConfig, which the group
	// coordinator calls under its own locks and so must not take mu.
	published sync.Map

	mu struct {
		sync.Mutex
		groups   map[string]*group
		sessions map[sessKey]*session
		// byOwner and byConn count the sessions of each principal and
		// connection (the share bounds).
		byOwner map[string]int
		byConn  map[<-chan struct{}]int
		configs map[string]map[string]string // dynamic group configs
	}
}

// NewCoordinator loads the persisted share groups and group configs.
func NewCoordinator(store *offsets.Store, log Log, ns Namespace, cfg Config) (*Coordinator, error) {
	c := &Coordinator{cfg: cfg.withDefaults(), store: store, log: log, ns: ns, writer: newStateWriter(store.PutShareStates)}
	c.mu.groups = make(map[string]*group)
	c.mu.sessions = make(map[sessKey]*session)
	persisted, err := store.ShareGroups()
	if err != nil {
		return nil, fmt.Errorf("share: load groups: %w", err)
	}
	for _, pg := range persisted {
		g, err := c.loadGroup(pg)
		if err != nil {
			return nil, err
		}
		c.mu.groups[pg.ID] = g
	}
	if c.mu.configs, err = store.GroupConfigs(); err != nil {
		return nil, fmt.Errorf("share: load group configs: %w", err)
	}
	for id, set := range c.mu.configs {
		c.published.Store(id, set)
	}
	c.kickDLQ() // records left archiving by a crash (dlq.go)
	return c, nil
}

// loadGroup rebuilds a group without members: acquired records were
// persisted available (acquisitions persisted as available), so every lock held at the crash is released,
// with its delivery count kept (locks released at restart).
func (c *Coordinator) loadGroup(pg offsets.ShareGroup) (*group, error) {
	g := newGroup(pg.ID)
	g.mu.epoch = pg.Epoch
	parts, err := c.store.ShareState(pg.ID)
	if err != nil {
		return nil, fmt.Errorf("share: load group %q: %w", pg.ID, err)
	}
	for _, sp := range parts {
		g.mu.parts[sp.TopicPartition] = loadPartition(sp)
	}
	return g, nil
}

// IsShareGroup reports whether id names a share group.
func (c *Coordinator) IsShareGroup(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.mu.groups[id]
	return ok
}

func (c *Coordinator) lookup(id string) *group {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.groups[id]
}

// getOrCreate returns the share group id, creating (and persisting) it
// when create is set; nil when it does not exist or the id is another
// type's (one group-id namespace).
func (c *Coordinator) getOrCreate(id string, create bool) (*group, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g := c.mu.groups[id]; g != nil {
		return g, nil
	}
	if !create || (c.ns != nil && c.ns.OtherGroup(id)) {
		return nil, nil
	}
	if c.leaderSide() {
		// The leader side keeps a group only as the holder of its
		// partitions' cached states (the coordinator persists groups).
		c.evictGroupsLocked()
		g := newGroup(id)
		c.mu.groups[id] = g
		return g, nil
	}
	if err := c.store.PutShareGroup(offsets.ShareGroup{ID: id}); err != nil {
		return nil, err
	}
	g := newGroup(id)
	c.mu.groups[id] = g
	return g, nil
}

// groupConfig returns a dynamic config of group id ("" if unset).
func (c *Coordinator) groupConfig(id, name string) string {
	if c.leaderSide() {
		return c.cfg.States.GroupConfigs(id)[name]
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.configs[id][name]
}

// lockDuration is the group's share.record.lock.duration.ms, else the
// broker's.
func (c *Coordinator) lockDuration(id string) time.Duration {
	if v, ok := parseMillis(c.groupConfig(id, ConfigRecordLockDuration)); ok {
		return v
	}
	return c.cfg.RecordLockDuration
}

// deliveryLimit is group.share.delivery.count.limit.
func (c *Coordinator) deliveryLimit() int32 { return int32(c.cfg.DeliveryCountLimit) }

// ListedGroup is a share group as ListGroups reports it.
type ListedGroup struct {
	ID, State string
}

// List returns every share group, by id.
func (c *Coordinator) List() []ListedGroup {
	c.mu.Lock()
	groups := make([]*group, 0, len(c.mu.groups))
	for _, g := range c.mu.groups {
		groups = append(groups, g)
	}
	c.mu.Unlock()
	now := c.cfg.Now()
	out := make([]ListedGroup, 0, len(groups))
	for _, g := range groups {
		g.mu.Lock()
		c.expireMembersLocked(g, now)
		out = append(out, ListedGroup{ID: g.id, State: g.stateLocked()})
		g.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// ErrNotEmpty is Delete's error for a group with members.
var ErrNotEmpty = errors.New("share: group has members")

// Delete removes an empty share group with all its state (DeleteGroups);
// ok is false when id is not a share group.
func (c *Coordinator) Delete(id string) (ok bool, err error) {
	g := c.lookup(id)
	if g == nil {
		return false, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	c.expireMembersLocked(g, c.cfg.Now())
	if len(g.mu.members) > 0 {
		return true, ErrNotEmpty
	}
	if err := c.writer.flush().wait(); err != nil {
		return true, err // no state write may land after the delete
	}
	if err := c.store.DeleteShareGroup(id); err != nil {
		return true, err
	}
	if c.adminViaStates() {
		if err := c.cfg.States.DeleteGroup(id); err != nil {
			return true, err
		}
	}
	c.mu.Lock()
	delete(c.mu.groups, id)
	delete(c.mu.configs, id)
	c.published.Delete(id)
	c.mu.Unlock()
	g.mu.deleted = true
	return true, nil
}

package group

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgateway/kgateway/kafka/clock"
	"github.com/kgateway/kgateway/offsets"
	"go.uber.org/zap"
)

// ErrClosed is returned by handlers that were waiting when Close ran.
var ErrClosed = errors.New("group: coordinator closed")

// Kafka's broker defaults for the group settings below.
const (
	DefaultMinSessionTimeout            = 6 * time.Second  // group.min.session.timeout.ms
	DefaultMaxSessionTimeout            = 30 * time.Minute // group.max.session.timeout.ms
	DefaultMaxMetadataBytes             = 4096             // offset.metadata.max.bytes
	DefaultRetentionCheckInterval       = 10 * time.Minute // offsets.retention.check.interval.ms
	DefaultNewMemberJoinTimeout         = 5 * time.Minute  // GroupCoordinator.NewMemberJoinTimeoutMs
	DefaultInitialRebalanceDelay        = 3 * time.Second  // group.initial.rebalance.delay.ms (the binary's default; 0 in a zero Config)
	maxGroupIDLen                       = 1 << 15          // a Kafka string's length limit
	noMember                            = ""               // JoinGroupRequest.UNKNOWN_MEMBER_ID
	noGeneration                  int32 = -1               // simple consumers commit with -1
	authOpsNotRequested           int32 = -2147483648      // DescribeGroups without IncludeAuthorizedOperations
)

// TopicChecker tells the coordinator whether a partition exists, so that
// commits to unknown partitions get UNKNOWN_TOPIC_OR_PARTITION as from
// Kafka. Optional.
type TopicChecker interface {
	PartitionExists(topic string, partition int32) bool
}

// Config configures a Coordinator; zero values mean Kafka's defaults.
type Config struct {
	Logger *zap.Logger
	Clock  Clock
	Topics TopicChecker

	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration
	// InitialRebalanceDelay is group.initial.rebalance.delay.ms: the
	// first rebalance of an Empty classic group waits this long, and again
	// while members keep joining, up to the rebalance timeout (rebalance completion). Zero
	// (the zero Config's value) does not wait; the binary defaults to
	// Kafka's DefaultInitialRebalanceDelay.
	InitialRebalanceDelay  time.Duration
	MaxMetadataBytes       int
	RetentionCheckInterval time.Duration
	NewMemberJoinTimeout   time.Duration
	// MaxGroupStateBytes bounds a group's persisted membership (durable classic membership);
	// default DefaultMaxGroupStateBytes.
	MaxGroupStateBytes int
	// MaxGroupSize is group.max.size: members plus member ids handed out
	// and not yet joined (the group size bound); default DefaultMaxGroupSize.
	MaxGroupSize int

	// Metadata lists the topics consumer groups (KIP-848) subscribe to.
	Metadata TopicLister
	// ConsumerSessionTimeout is group.consumer.session.timeout.ms and
	// ConsumerHeartbeatInterval group.consumer.heartbeat.interval.ms,
	// each within its min and max (Kafka's bounds by default).
	ConsumerSessionTimeout       time.Duration
	ConsumerHeartbeatInterval    time.Duration
	ConsumerMinSessionTimeout    time.Duration
	ConsumerMaxSessionTimeout    time.Duration
	ConsumerMinHeartbeatInterval time.Duration
	ConsumerMaxHeartbeatInterval time.Duration
	// ConsumerReleaseWait is how long a member's heartbeat may wait for
	// partitions of its target whose owners are about to release them
	// (consumer_await.go); zero: a fifth of the heartbeat interval, at
	// most 100 ms; negative: never.
	ConsumerReleaseWait time.Duration
	// GroupConfig is a group's dynamic config ("" when unset, or nil:
	// none): its consumer.session.timeout.ms and
	// consumer.heartbeat.interval.ms (KIP-848 group configs, set with
	// IncrementalAlterConfigs) replace the two above for that group.
	GroupConfig func(group, name string) string
	// ConsumerAssignors is group.consumer.assignors; the first is the
	// default. Default DefaultConsumerAssignors.
	ConsumerAssignors []string
	// ConsumerMigrationPolicy is group.consumer.migration.policy:
	// whether a classic group with members may become a consumer group
	// online and back (migrate.go): bidirectional (Kafka's default, and
	// the zero value's), upgrade, downgrade or disabled.
	ConsumerMigrationPolicy string
	// MayDescribe says whether principal, connecting from host, may
	// DESCRIBE topic; nil: authorization is off. With it, a consumer
	// group member is subscribed only to the topics its own principal
	// may describe (server-side regex subscriptions), whoever's heartbeat resolves the group.
	MayDescribe func(principal, host, topic string) bool

	// StreamsSessionTimeout is group.streams.session.timeout.ms,
	// StreamsHeartbeatInterval group.streams.heartbeat.interval.ms and
	// StreamsNumStandby group.streams.num.standby.replicas (KIP-1071);
	// zero: Kafka's defaults (45 s, 5 s, 0).
	StreamsSessionTimeout    time.Duration
	StreamsHeartbeatInterval time.Duration
	StreamsNumStandby        int
	// StreamsInitialRebalanceDelay is
	// group.streams.initial.rebalance.delay.ms: a new streams group's
	// first assignment waits this long for more members (0, the zero
	// Config's value: no wait; the binary defaults to Kafka's 3 s).
	StreamsInitialRebalanceDelay time.Duration
	// StreamsDescriptionBytesPerPrincipal bounds the topology
	// descriptions (KIP-1331) one principal stores over all streams
	// groups; zero: DefaultStreamsDescriptionBytesPerPrincipal.
	StreamsDescriptionBytesPerPrincipal int
}

// Validate reports every problem with cfg at once.
func (cfg Config) Validate() error {
	var errs []error
	if cfg.InitialRebalanceDelay < 0 {
		errs = append(errs, errors.New("group: config: group.initial.rebalance.delay.ms must not be negative"))
	}
	if cfg.MinSessionTimeout < 0 || cfg.MaxSessionTimeout < 0 {
		errs = append(errs, errors.New("group: config: session timeouts must not be negative"))
	}
	if cfg.MinSessionTimeout > 0 && cfg.MaxSessionTimeout > 0 && cfg.MinSessionTimeout > cfg.MaxSessionTimeout {
		errs = append(errs, fmt.Errorf("group: config: group.min.session.timeout.ms %v > group.max.session.timeout.ms %v",
			cfg.MinSessionTimeout, cfg.MaxSessionTimeout))
	}
	if cfg.MaxMetadataBytes < 0 {
		errs = append(errs, fmt.Errorf("group: config: offset.metadata.max.bytes %d is negative", cfg.MaxMetadataBytes))
	}
	if cfg.MaxGroupStateBytes < 0 || cfg.MaxGroupSize < 0 {
		errs = append(errs, fmt.Errorf("group: config: group state bound %d or group.max.size %d is negative",
			cfg.MaxGroupStateBytes, cfg.MaxGroupSize))
	}
	if cfg.RetentionCheckInterval < 0 || cfg.NewMemberJoinTimeout < 0 {
		errs = append(errs, errors.New("group: config: intervals must not be negative"))
	}
	errs = append(errs, cfg.validateConsumer()...)
	if cfg.ConsumerMigrationPolicy != "" && !validMigrationPolicy(cfg.ConsumerMigrationPolicy) {
		errs = append(errs, fmt.Errorf("group: config: group.consumer.migration.policy %q is not one of bidirectional, upgrade, downgrade, disabled",
			cfg.ConsumerMigrationPolicy))
	}
	if cfg.StreamsSessionTimeout < 0 || cfg.StreamsHeartbeatInterval < 0 || cfg.StreamsNumStandby < 0 || cfg.StreamsInitialRebalanceDelay < 0 {
		errs = append(errs, errors.New("group: config: group.streams.* settings must not be negative"))
	}
	if s := cfg.streamsConfigOf(); s.HeartbeatInterval >= s.SessionTimeout {
		errs = append(errs, fmt.Errorf("group: config: group.streams.heartbeat.interval.ms %v must be below group.streams.session.timeout.ms %v",
			s.HeartbeatInterval, s.SessionTimeout))
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
	if cfg.MinSessionTimeout == 0 {
		cfg.MinSessionTimeout = DefaultMinSessionTimeout
	}
	if cfg.MaxSessionTimeout == 0 {
		cfg.MaxSessionTimeout = DefaultMaxSessionTimeout
	}
	if cfg.MaxMetadataBytes == 0 {
		cfg.MaxMetadataBytes = DefaultMaxMetadataBytes
	}
	if cfg.RetentionCheckInterval == 0 {
		cfg.RetentionCheckInterval = DefaultRetentionCheckInterval
	}
	if cfg.NewMemberJoinTimeout == 0 {
		cfg.NewMemberJoinTimeout = DefaultNewMemberJoinTimeout
	}
	if cfg.MaxGroupStateBytes == 0 {
		cfg.MaxGroupStateBytes = DefaultMaxGroupStateBytes
	}
	if cfg.MaxGroupSize == 0 {
		cfg.MaxGroupSize = DefaultMaxGroupSize
	}
	if cfg.ConsumerMigrationPolicy == "" {
		cfg.ConsumerMigrationPolicy = MigrationBidirectional
	}
	return cfg.consumerDefaults()
}

// Coordinator coordinates every group of this node. It is safe for
// concurrent use; JoinGroup and SyncGroup block until their rebalance
// completes, so callers must handle requests concurrently.
type Coordinator struct {
	store  *offsets.Store
	cfg    Config
	log    *zap.Logger
	clock  Clock
	closed chan struct{}

	// closing makes timers that fire during or after Close do nothing.
	closing atomic.Bool

	mu struct {
		sync.Mutex
		groups      map[string]*group
		expiryTimer Timer
	}
}

// NewCoordinator loads the groups the store knows (those persisted with
// members Stable, classic membership restored at restart; the others Empty) and starts the retention loop. The
// store stays owned by the caller; Close the coordinator before the store.
func NewCoordinator(store *offsets.Store, cfg Config) (*Coordinator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	c := &Coordinator{store: store, cfg: cfg, log: cfg.Logger, clock: cfg.Clock, closed: make(chan struct{})}
	c.mu.groups = make(map[string]*group)
	persisted, err := store.Groups()
	if err != nil {
		return nil, fmt.Errorf("group: load groups: %w", err)
	}
	withMembers, err := store.ClassicGroups()
	if err != nil {
		return nil, fmt.Errorf("group: load group members: %w", err)
	}
	consumers, err := store.ConsumerGroups()
	if err != nil {
		return nil, fmt.Errorf("group: load consumer groups: %w", err)
	}
	streamGroups, err := store.StreamsGroups()
	if err != nil {
		return nil, fmt.Errorf("group: load streams groups: %w", err)
	}
	for _, pg := range persisted {
		if sg, ok := streamGroups[pg.ID]; ok {
			g, err := c.loadStreamsGroup(sg)
			if err != nil {
				return nil, fmt.Errorf("group: load streams group %q: %w", pg.ID, err)
			}
			c.mu.groups[pg.ID] = g
			continue
		}
		if cg, ok := consumers[pg.ID]; ok {
			c.mu.groups[pg.ID] = c.loadConsumerGroup(cg)
			continue
		}
		if cg, ok := withMembers[pg.ID]; ok {
			c.mu.groups[pg.ID] = c.loadGroup(cg)
			continue
		}
		g := newGroup(c, pg.ID)
		g.mu.protocolType = pg.ProtocolType
		g.mu.generation = pg.Generation
		g.mu.stateTime = pg.StateTime
		c.mu.groups[pg.ID] = g
	}
	c.mu.Lock()
	c.scheduleExpiryLocked()
	c.mu.Unlock()
	return c, nil
}

// Close stops timers and wakes every blocked handler with ErrClosed. It
// does not close the store.
func (c *Coordinator) Close() {
	if c.closing.Swap(true) {
		return
	}
	close(c.closed)
	c.mu.Lock()
	if c.mu.expiryTimer != nil {
		c.mu.expiryTimer.Stop()
	}
	groups := make([]*group, 0, len(c.mu.groups))
	for _, g := range c.mu.groups {
		groups = append(groups, g)
	}
	c.mu.Unlock()
	for _, g := range groups {
		g.mu.Lock()
		g.stopTimersLocked()
		g.mu.Unlock()
		g.assigns.Wait() // an assignment being written (assign_store.go) ends before the store closes
	}
}

// lookup returns the live group id, or nil.
func (c *Coordinator) lookup(id string) *group {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g := c.mu.groups[id]; g != nil && !g.dead.Load() {
		return g
	}
	return nil
}

// HasGroup reports whether id is a live group of this coordinator, classic
// or consumer, empty or not: the group-id namespace it shares with share
// groups (one group-id namespace).
func (c *Coordinator) HasGroup(id string) bool { return c.lookup(id) != nil }

// getOrCreate returns the live group id, creating an Empty one if needed.
func (c *Coordinator) getOrCreate(id string) *group {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g := c.mu.groups[id]; g != nil && !g.dead.Load() {
		return g
	}
	g := newGroup(c, id)
	g.mu.stateTime = c.clock.Now()
	c.mu.groups[id] = g
	return g
}

// forget drops g from the map; g must already be marked dead.
func (c *Coordinator) forget(g *group) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.groups[g.id] == g {
		delete(c.mu.groups, g.id)
	}
}

// snapshot returns the live groups.
func (c *Coordinator) snapshot() []*group {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*group, 0, len(c.mu.groups))
	for _, g := range c.mu.groups {
		if !g.dead.Load() {
			out = append(out, g)
		}
	}
	return out
}

func (c *Coordinator) scheduleExpiryLocked() {
	c.mu.expiryTimer = c.clock.AfterFunc(c.cfg.RetentionCheckInterval, func() {
		if c.closing.Load() {
			return
		}
		c.ExpireOffsets()
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.closing.Load() {
			c.scheduleExpiryLocked()
		}
	})
}

// ExpireOffsets runs one retention pass (KIP-211): the store drops expired
// offsets, and Empty groups with nothing stored become Dead. It runs
// every offsets.retention.check.interval.ms; tests call it directly.
func (c *Coordinator) ExpireOffsets() {
	// Persisted empty groups: a group the store has as Empty may be
	// rebalancing (its start is not written); as in Kafka, the group's
	// own state decides.
	active := func(id string) bool {
		g := c.lookup(id)
		return g != nil && g.active.Load()
	}
	if _, err := c.store.ExpireUnless(c.clock.Now(), active); err != nil {
		c.log.Warn("group-expire-failed", zap.Error(err))
		return
	}
	// Besides the groups the store just dropped, an Empty group it never
	// knew (a join that never completed) goes too, as in Kafka's cleanup.
	for _, g := range c.snapshot() {
		g.mu.Lock()
		gone := false
		if g.mu.state == stateEmpty && len(g.mu.pending) == 0 && !g.hasConsumerMembersLocked() {
			// A commit or a join may have landed after the store's pass:
			// only a group the store no longer knows goes.
			has, err := c.store.HasGroup(g.id)
			gone = err == nil && !has
		}
		if gone {
			g.markDeadLocked()
		}
		g.mu.Unlock()
		if gone {
			c.forget(g)
		}
	}
}

package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/kgateway/kgateway/logging"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/kgateway/kgateway/cluster/diskless"
	"github.com/kgateway/kgateway/cluster/owner"
	"github.com/kgateway/kgateway/kafka"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/storage"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
)

// startTimeout bounds each etcd step of a start (the session's lease in
// Open, the registration in Start): a node that cannot reach etcd fails
// to start, saying so, instead of hanging.
const startTimeout = 10 * time.Second

// Defaults of Config.
const (
	DefaultPrefix         = "/kgateway/"
	DefaultSessionTimeout = 10 * time.Second
	// CoordinatorKey is the pkey of the group coordinator role (the coordinator role).
	CoordinatorKey = "coordinator"
)

// DefaultCommitDepth is Config.CommitDepth's default: two group
// commits in flight, one publishing while the next is written
// (in-order publication). An acknowledgement then waits for about one
// commit instead of the rest of the one in flight and then its own
// (BENCHMARKS.md "Cluster mode: the commit depth"); where the object
// store is a round trip away, the second PUT in flight costs nothing.
// 1 commits one at a time: fewer, larger commits, for an object store
// that is throughput-bound.
const DefaultCommitDepth = 2

// Config configures a node.
type Config struct {
	NodeID    int32
	Endpoints []string // cluster.etcd.endpoints
	Prefix    string   // cluster.etcd.prefix; default DefaultPrefix
	// SessionTimeout is cluster.session.timeout.ms: how long after a node
	// stops renewing its session its ownerships end. etcd counts leases in
	// whole seconds: it is rounded up, at least 1 s.
	SessionTimeout time.Duration
	// CommitInterval is cluster.commit.interval.ms, for storage.
	CommitInterval time.Duration
	// CommitDepth is how many group commits may be in flight at once,
	// for storage (ReplicateDepth, in-order publication): the next object fills
	// while the last one's PUT and etcd transaction run. 0:
	// DefaultCommitDepth; 1: one at a time.
	CommitDepth int
	// Tick is how often placement and upkeep run without a change to
	// react to (default 1 s).
	Tick time.Duration
	// CacheRebuildBytes is cluster.cache.rebuild.bytes: at most how many
	// bytes of published ranges a rebuild copies into the local cache,
	// the newest (the bounded rebuild); older offsets are read from the object store.
	// 0: DefaultCacheRebuildBytes; negative: the whole partition.
	CacheRebuildBytes int64
	// StateInterval is cluster.producer.state.interval.ms: how often an owner exports a partition's producer
	// and transaction state to the object store, when it grew (periodic state export); 0:
	// DefaultStateInterval.
	StateInterval time.Duration
	// RangeCacheBytes bounds the node's cache of published ranges read
	// below its local copies (the range cache); 0: DefaultRangeCacheBytes.
	RangeCacheBytes int64
	Logger          *zap.Logger
	// Observer, when set, is told of rebuilds (metrics).
	Observer Observer
}

// DefaultStateInterval is StateInterval's default: a failover replays
// at most this much of the log's recent past from the object store.
const DefaultStateInterval = 10 * time.Second

// DefaultRangeCacheBytes is RangeCacheBytes's default: four merged
// objects of the largest size (diskless Options.MergeMax).
const DefaultRangeCacheBytes = int64(256) << 20

// DefaultCacheRebuildBytes is cluster.cache.rebuild.bytes's default,
// 128 MiB: the recent past most consumers read, copied in well under a
// second, where Kafka's segment.bytes (1 GiB) would take seconds; older
// offsets are read from the object store (pinned reads below the cache, the range cache).
const DefaultCacheRebuildBytes = int64(128) << 20

func (c Config) withDefaults() Config {
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = DefaultSessionTimeout
	}
	if c.Tick <= 0 {
		c.Tick = time.Second
	}
	if c.StateInterval <= 0 {
		c.StateInterval = DefaultStateInterval
	}
	if c.RangeCacheBytes <= 0 {
		c.RangeCacheBytes = DefaultRangeCacheBytes
	}
	if c.CacheRebuildBytes == 0 {
		c.CacheRebuildBytes = DefaultCacheRebuildBytes
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	return c
}

// Parts are the layers a node drives, opened by the server after the
// node's etcd client (they need it).
type Parts struct {
	Resolver *resolver.Resolver
	Diskless *diskless.Committer
	Catalog  kafka.Catalog
	// BecomeCoordinator is called with a fresh coordinator ownership: it
	// restores the group state from etcd and serves it under o (the coordinator role).
	BecomeCoordinator func(ctx context.Context, o owner.Ownership) error
	// Txn is the relay of transaction registrations and markers (the transaction relay):
	// woken when a partition starts being served, asked by VerifyTxn.
	Txn TxnRelay
}

// TxnRelay is the part of cluster/txnmark's Relay a node drives.
type TxnRelay interface {
	Kick()
	Verify(ctx context.Context, topic string, partition int32, pid int64, epoch int16) (bool, error)
	AddImplicitly(ctx context.Context, id, topic string, partition int32, pid int64, epoch int16) (int16, error)
}

// Node is one cluster node.
type Node struct {
	cfg  Config
	log  *zap.Logger
	cli  *clientv3.Client
	name string // the node id in decimal: owner records' node
	p    Parts
	// ranges caches published ranges read below the local copies (the range cache).
	ranges *rangeCache
	// retries spaces the acquisitions of partitions whose rebuild failed.
	retries retries
	// upload counts the group commits in flight (Stats).
	upload upload
	// acquiring are the acquisitions in flight (placement.go).
	acquiring acquisitions

	kick chan struct{} // capacity 1: "placement may have changed"
	stop chan struct{}
	done chan struct{}
	// bg is the parent of every background call's context (rebuilds,
	// upkeep's merges, exports and collections): Leave and Close cancel
	// it, so a loop blocked in a slow object-store read or etcd call
	// stops at once instead of holding a graceful stop for its timeout.
	bg       context.Context
	bgCancel context.CancelFunc

	mu struct {
		sync.Mutex
		sess    *concurrency.Session
		newSess chan struct{} // closed when sess is replaced
		own     *owner.Manager
		self    kafka.Broker
		brokers map[int32]kafka.Broker
		owners  map[string]owner.Record // pkey → owner, from the watch
		held    map[string]*held        // pkey → an ownership of this node
		byLog   map[storage.LogID]*held
		started bool
		// regLease is the lease of the session the registration was
		// last made under: a new session must register again.
		regLease clientv3.LeaseID
		leaving  bool
	}
}

// held is one ownership of this node.
type held struct {
	pkey    string
	topic   string
	idx     int32
	o       owner.Ownership
	log     storage.LogID
	serving bool // Rebuild before serving: rebuilt and not being released
	broken  bool // Replication under ownership: a publication failed other than by fencing
	// start is the local start last published (or found at the
	// rebuild): upkeep publishes the local start when it passes it.
	start int64
	// pubStart is the published start, what reads below the local copy
	// start at (pinned reads below the cache). Guarded by Node.mu.
	pubStart int64
	merged   time.Time
	// stated is when upkeep last exported the producer state, and
	// stateCovered the offset the last one published covers (periodic state export).
	stated       time.Time
	stateCovered int64
}

// Open connects to etcd and starts the node's session; nothing is
// registered or owned until Start.
func Open(cfg Config) (*Node, error) {
	cfg = cfg.withDefaults()
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("cluster: no etcd endpoints")
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   cfg.Endpoints,
		DialTimeout: 5 * time.Second,
		Logger:      logging.Named(cfg.Logger, "etcd"),
		// gRPC's default reconnect backoff grows to two minutes: after
		// an etcd outage of half a minute a node would wait that much
		// longer to register again and serve. Retry every second at
		// most instead (one node's dial a second is nothing to etcd).
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: 5 * time.Second,
		})},
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: etcd: %w", err)
	}
	n := &Node{cfg: cfg, log: cfg.Logger, cli: cli, name: strconv.Itoa(int(cfg.NodeID)),
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		ranges: newRangeCache(cfg.RangeCacheBytes)}
	n.bg, n.bgCancel = context.WithCancel(context.Background())
	n.mu.brokers = map[int32]kafka.Broker{}
	n.mu.owners = map[string]owner.Record{}
	n.mu.held = map[string]*held{}
	n.mu.byLog = map[storage.LogID]*held{}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := n.newSession(ctx); err != nil {
		n.bgCancel()
		cli.Close()
		return nil, err
	}
	return n, nil
}

// Client is the node's etcd client (the server builds the other cluster
// parts on it).
func (n *Node) Client() *clientv3.Client { return n.cli }

// Prefix is the cluster's etcd prefix.
func (n *Node) Prefix() string { return n.cfg.Prefix }

// Name is the node id as owner records name it.
func (n *Node) Name() string { return n.name }

// Owners is the ownership manager of the current session (fenced
// transactions only need its client and prefix, which never change).
func (n *Node) Owners() *owner.Manager {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.mu.own
}

func (n *Node) newSession(ctx context.Context) error {
	ttl := int((n.cfg.SessionTimeout + time.Second - 1) / time.Second)
	// The lease is granted under ctx, so that an unreachable etcd fails
	// the call instead of blocking it for ever (the client waits for a
	// connection); the session's keep-alive must outlive ctx.
	lease, err := n.cli.Grant(ctx, int64(max(ttl, 1)))
	if err != nil {
		return fmt.Errorf("cluster: session: no lease from etcd at %v: %w", n.cfg.Endpoints, err)
	}
	s, err := concurrency.NewSession(n.cli, concurrency.WithLease(lease.ID), concurrency.WithContext(context.Background()))
	if err != nil {
		return fmt.Errorf("cluster: session: %w", err)
	}
	n.mu.Lock()
	n.mu.sess = s
	n.mu.own = owner.New(n.cli, s, n.name, n.cfg.Prefix)
	if n.mu.newSess != nil {
		close(n.mu.newSess)
	}
	n.mu.newSess = make(chan struct{})
	n.mu.Unlock()
	return nil
}

// watchSession stops serving everything the moment the session ends (the
// node was cut off from etcd, or paused, past its lease: rebuild before serving), without
// waiting for the placement round, which may be blocked in etcd calls
// meanwhile. The round then drops the ownerships and starts a new session.
func (n *Node) watchSession() {
	for {
		n.mu.Lock()
		sess, next := n.mu.sess, n.mu.newSess
		n.mu.Unlock()
		select {
		case <-n.stop:
			return
		case <-sess.Done():
		}
		n.mu.Lock()
		for _, h := range n.mu.held {
			h.serving = false
		}
		n.mu.Unlock()
		n.log.Warn("cluster-session-ended")
		n.Kick()
		select {
		case <-n.stop:
			return
		case <-next: // the round started a new session
		}
	}
}

func (n *Node) nodeKey(id int32) string { return n.cfg.Prefix + "nodes/" + strconv.Itoa(int(id)) }

// registration is a node key's value.
type registration struct {
	Host string  `json:"host"`
	Port int32   `json:"port"`
	Rack *string `json:"rack,omitempty"`
}

// register creates this node's key under its session (one registration per node id). A key held
// under another lease is a previous incarnation's: a process of this id
// killed before its lease expired, or this node's own lost session. Like
// a Kafka broker coming back under its id, the new incarnation takes the
// id over at once: it revokes the old lease, which deletes the old
// registration and every ownership under it (fencing that incarnation's
// publications, ownership ending with the lease), so its partitions are placed again now, not after
// cluster.session.timeout.ms. Only a start takes over any registration
// (start); later, after a session loss, the node takes back only its own
// previous one: a registration under another lease is then a newer
// incarnation's, which fenced this one, and the two must not take the id
// from each other in turn.
func (n *Node) register(ctx context.Context, start bool) error {
	n.mu.Lock()
	self, sess, prev := n.mu.self, n.mu.sess, n.mu.regLease
	n.mu.Unlock()
	val, _ := json.Marshal(registration{Host: self.Host, Port: self.Port, Rack: self.Rack})
	k := n.nodeKey(n.cfg.NodeID)
	for attempt := 0; ; attempt++ {
		resp, err := n.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(k), "=", 0)).
			Then(clientv3.OpPut(k, string(val), clientv3.WithLease(sess.Lease()))).
			Else(clientv3.OpGet(k)).
			Commit()
		if err != nil {
			return fmt.Errorf("cluster: register node id %d: %w", n.cfg.NodeID, err)
		}
		kvs := resp.Responses[0].GetResponseRange().GetKvs()
		if resp.Succeeded || (len(kvs) > 0 && clientv3.LeaseID(kvs[0].Lease) == sess.Lease()) {
			break
		}
		if len(kvs) == 0 {
			continue // deleted meanwhile: create it
		}
		if !start && clientv3.LeaseID(kvs[0].Lease) != prev {
			return fmt.Errorf("cluster: node id %d was taken over by another process (%s): two nodes share the id, or this one was replaced", n.cfg.NodeID, kvs[0].Value)
		}
		if attempt >= 3 {
			return fmt.Errorf("cluster: node id %d: registered again by another process (%s) each time this one took it over: two nodes share the id", n.cfg.NodeID, kvs[0].Value)
		}
		if err := n.fence(ctx, k, kvs[0]); err != nil {
			return err
		}
	}
	n.mu.Lock()
	n.mu.regLease = sess.Lease()
	n.mu.Unlock()
	return nil
}

// fence ends the previous incarnation's registration old of key k: it
// revokes its lease (ownerships included) or, with no lease, deletes the
// key if it is still that registration.
func (n *Node) fence(ctx context.Context, k string, old *mvccpb.KeyValue) error {
	n.log.Warn("cluster-register-takeover", zap.Int32("node", n.cfg.NodeID),
		zap.ByteString("previous", old.Value), zap.Int64("previous-lease", old.Lease))
	if old.Lease == 0 {
		_, err := n.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(k), "=", old.ModRevision)).
			Then(clientv3.OpDelete(k)).Commit()
		if err != nil {
			return fmt.Errorf("cluster: node id %d: remove previous registration: %w", n.cfg.NodeID, err)
		}
		return nil
	}
	if _, err := n.cli.Revoke(ctx, clientv3.LeaseID(old.Lease)); err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return fmt.Errorf("cluster: node id %d: fence previous incarnation (lease %x): %w", n.cfg.NodeID, old.Lease, err)
	}
	return nil
}

// ensureRegistered registers the current session if it is not yet (one registration per node id).
// After a session loss, the registration of the lost session can outlive
// it until its lease expires (etcd's clock, or an etcd restart that
// renewed it): register takes it back; a failure (etcd unreachable, or
// the id taken by a newer incarnation) is retried every round.
func (n *Node) ensureRegistered() bool {
	n.mu.Lock()
	ok := n.mu.regLease == n.mu.sess.Lease()
	n.mu.Unlock()
	if ok {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n.register(ctx, false); err != nil {
		n.log.Debug("cluster-register-retry", zap.Error(err))
		return false
	}
	n.log.Info("cluster-registered-again")
	return true
}

// Start registers the node as self (its advertised address) and starts
// watching membership and ownership and placing partitions.
func (n *Node) Start(self kafka.Broker, p Parts) error {
	self.NodeID = n.cfg.NodeID
	n.mu.Lock()
	n.mu.self, n.p = self, p
	n.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := n.register(ctx, true); err != nil {
		return err // not started: Leave and Close return at once
	}
	n.mu.Lock()
	n.mu.started = true
	n.mu.Unlock()
	wctx, wcancel := context.WithCancel(context.Background())
	go n.watch(wctx, n.cfg.Prefix+"nodes/", n.setNodes)
	go n.watch(wctx, n.cfg.Prefix+"owner/", n.setOwners)
	go n.watchSession()
	go func() {
		defer close(n.done)
		defer wcancel()
		upkept := make(chan struct{})
		go func() {
			defer close(upkept)
			n.upkeepLoop()
		}()
		n.run()
		<-upkept
	}()
	return nil
}

// Kick asks for a placement round soon (a topic appeared or went).
func (n *Node) Kick() {
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// Leave hands everything over (graceful handover): deregisters, so the others stop
// preferring this node, then releases every ownership. Entries already
// acknowledged stay published; later produces get NOT_LEADER_OR_FOLLOWER.
func (n *Node) Leave(ctx context.Context) {
	n.mu.Lock()
	if !n.mu.started || n.mu.leaving {
		n.mu.Unlock()
		return
	}
	n.mu.leaving = true
	n.mu.Unlock()
	close(n.stop)
	n.bgCancel() // background calls in flight end now, not at their timeout
	<-n.done
	n.log.Info("cluster-leaving")
	if _, err := n.cli.Delete(ctx, n.nodeKey(n.cfg.NodeID)); err != nil {
		n.log.Warn("cluster-deregister-failed", zap.Error(err))
	}
	n.mu.Lock()
	hs := make([]*held, 0, len(n.mu.held))
	for _, h := range n.mu.held {
		h.serving = false
		hs = append(hs, h)
	}
	n.mu.Unlock()
	for _, h := range hs {
		n.release(ctx, h)
	}
}

// Close ends the session (its leases, so whatever Leave did not release
// is free at once) and the etcd client.
func (n *Node) Close() error {
	n.Leave(context.Background())
	n.bgCancel()
	n.mu.Lock()
	sess := n.mu.sess
	n.mu.Unlock()
	var errs []error
	if sess != nil {
		errs = append(errs, sess.Close())
	}
	return errors.Join(append(errs, n.cli.Close())...)
}

// PrepareDataDir empties dir for a cluster node (the data directory as a cache): it must be missing,
// empty, or a former cluster node's cache (it holds the marker).
func PrepareDataDir(dir string) error {
	const marker = ".kgateway-cluster-cache"
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	if len(ents) > 0 {
		if _, err := os.Stat(filepath.Join(dir, marker)); err != nil {
			return fmt.Errorf("cluster: %s holds data of a single node (no %s): refusing to empty it", dir, marker)
		}
		for _, e := range ents {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, marker), []byte("this directory is a kgateway cluster node's cache; it is emptied at start\n"), 0o644)
}

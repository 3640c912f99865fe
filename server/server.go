package server

import (
	"errors"
	"fmt"
	"github.com/kgateway/kgateway/logging"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/cluster/node"
	"github.com/kgateway/kgateway/kafka"
	"github.com/kgateway/kgateway/kafka/quota"
	"github.com/kgateway/kgateway/kafka/token"
	"github.com/kgateway/kgateway/kafka/txn"
	"github.com/kgateway/kgateway/metrics"
	"github.com/kgateway/kgateway/offsets"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/tier"
	"go.uber.org/zap"
	"gocloud.dev/blob"
)

// Config is one server's configuration: the data directory, the Kafka
// listener and each layer's own configuration. The zero value of each
// layer's part is that layer's defaults.
type Config struct {
	// DataDir holds the segment files and the index; the group offsets
	// store lives in DataDir/offsets (O3: a pebble instance of its own).
	DataDir string
	// Listen is the Kafka listener's address, bound by Open (port 0: an
	// ephemeral port, see Addr): one PLAINTEXT listener advertising
	// Kafka.AdvertisedAddr, a shorthand for Listeners. Empty, with no
	// Listeners: the layers are open but Serve fails.
	Listen string
	// Listeners are the Kafka listeners (listeners, advertised.listeners,
	// listener.security.protocol.map), each bound by Open at its Addr;
	// they follow Listen's listener when both are set.
	Listeners []kafka.Listener
	// Logger is the root logger; each layer whose own Logger is nil logs
	// to a child named after it. Nil: no logging.
	Logger *zap.Logger

	// ObjectStoreURL is object.store.url: the object store that topics
	// with remote.storage.enable=true keep sealed ledgers in (a gocloud
	// blob URL, e.g. file:///var/lib/kgateway/objects). Empty: none, and
	// nothing is uploaded. Tier configures the tier over it.
	ObjectStoreURL string
	Tier           tier.Options

	// Cluster, when set, runs this server as one node of a cluster
	// (cluster/node): partitions live in ObjectStoreURL and etcd, DataDir
	// is a cache emptied at start, and the tier is not used.
	Cluster *node.Config

	// Storage configures the store. FS and PebbleFS replace the file
	// systems under the segment files and the index. Open chains its
	// group-commit metrics after OnCommit, and gives BulkEntryBytes
	// storage.DefaultBulkEntryBytes when zero (negative: one lane), and
	// BulkStepBytes storage.DefaultBulkStepBytes (negative: in one go),
	// and JournalBytes storage.DefaultJournalBytes (negative: no journal;
	// BENCHMARKS.md "Many partitions on one node").
	Storage storage.Options
	// Resolver configures the topic catalog, produce and fetch.
	Resolver resolver.Config
	// Offsets configures the group offsets store; PebbleFS replaces its
	// file system.
	Offsets offsets.Options
	// Authorizer turns authorization on (the authorizer's decisions); its ACLs are kept in
	// DataDir (the durable ACL store), or in a cluster's etcd with the credentials (credentials and ACLs shared in etcd).
	Authorizer AuthorizerConfig
	// Kafka configures the front end. Open sets Resolver and Offsets to
	// the layers it opened, and Observer to the server's metrics when nil.
	Kafka kafka.Config
	// Tokens configures the delegation tokens (KIP-48; kafka/token).
	Tokens token.Config
	// TelemetryMaxBytes is telemetry.max.bytes: the largest client
	// metrics payload a client may push (KIP-714; 0: 1 MiB).
	TelemetryMaxBytes int32

	// wrapBucket, when set (tests), replaces cluster mode's bucket by
	// one over it.
	wrapBucket func(*blob.Bucket) *blob.Bucket
	// wrapTxnParts, when set (tests), wraps what cluster mode's
	// transaction coordinator registers partitions and writes markers
	// through, to inject faults between its steps.
	wrapTxnParts func(txn.Partitions) txn.Partitions
}

// Server is one running kgateway: the layers, the Kafka front end and the
// listener.
type Server struct {
	cfg     Config
	store   *storage.Store
	res     *resolver.Resolver
	offs    *offsets.Store
	kafka   *kafka.Server
	metrics *metrics.Metrics
	tier    *tier.Tier     // nil without an object store
	bucket  *blob.Bucket   // the tier's, or cluster mode's
	cluster *clusterParts  // nil: a single node
	tokens  *token.Manager // its sweeps stop with the layers
	lns     []net.Listener // bound, one per listeners entry
	lis     []kafka.Listener
	open    atomic.Bool // the layers are open (Ready)

	mu struct {
		sync.Mutex
		closed  bool
		serving chan struct{} // closed when Serve returns; nil before Serve
	}
	closeOnce sync.Once
	closeErr  error
}

// ErrNoListener is returned by Serve when there is no listener.
var ErrNoListener = errors.New("server: no listener (Config.Listen and Config.Listeners are empty)")

// Open opens storage -> resolver -> offsets -> the Kafka front end over
// cfg.DataDir and binds cfg.Listen; nothing is served until Serve. On
// error everything it opened is closed again.
func Open(cfg Config) (_ *Server, err error) {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	s := &Server{cfg: cfg, metrics: metrics.New()}
	defer func() {
		if err != nil {
			s.closeListeners() // bound by bind: no port stays taken by a failed Open
			err = errors.Join(err, s.closeLayers())
		}
	}()
	if err := s.openLayers(); err != nil {
		return nil, err
	}
	s.open.Store(true)
	if err := s.metrics.Register(s.snapshot); err != nil {
		return nil, err
	}
	if err := s.bind(); err != nil {
		return nil, err
	}
	if s.cluster != nil {
		if err := s.startCluster(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// bind binds every listener (Listen's first); on error none stays bound.
func (s *Server) bind() error {
	lis := s.cfg.Listeners
	if s.cfg.Listen != "" {
		pl := kafka.Listener{Name: string(kafka.Plaintext), Protocol: kafka.Plaintext,
			Addr: s.cfg.Listen, Advertised: s.cfg.Kafka.AdvertisedAddr}
		lis = append([]kafka.Listener{pl}, lis...)
	}
	for _, l := range lis {
		ln, err := net.Listen("tcp", l.Addr)
		if err != nil {
			s.closeListeners()
			return fmt.Errorf("listener %s: %w", l.Name, err)
		}
		s.lns, s.lis = append(s.lns, ln), append(s.lis, l)
	}
	return nil
}

func (s *Server) closeListeners() {
	for _, ln := range s.lns {
		ln.Close()
	}
}

// openLayers opens each layer over the one below; fields set so far are
// closed by closeLayers on error.
func (s *Server) openLayers() error {
	if err := s.openStorage(); err != nil {
		return err
	}
	if err := s.openResolver(); err != nil {
		return err
	}
	if err := s.openOffsets(); err != nil {
		return err
	}
	return s.openKafka()
}

// openStorage opens the managed ledgers' store; in cluster mode, first
// the node (etcd, the bucket) that replicates its group commits.
func (s *Server) openStorage() (err error) {
	cfg := s.cfg
	so := cfg.Storage
	so.Logger = named(so.Logger, cfg.Logger, "storage")
	so.OnCommit = s.onCommit(so.OnCommit)
	if so.BulkEntryBytes == 0 {
		so.BulkEntryBytes = storage.DefaultBulkEntryBytes
	}
	if so.BulkStepBytes == 0 {
		so.BulkStepBytes = storage.DefaultBulkStepBytes
	}
	if so.JournalBytes == 0 {
		so.JournalBytes = storage.DefaultJournalBytes
	}
	if cfg.Cluster != nil {
		if err := s.openClusterBase(); err != nil {
			return err
		}
		so.Replicator, so.CommitInterval = s.cluster.node, cfg.Cluster.CommitInterval
		so.ReplicateDepth = cfg.Cluster.CommitDepth
		if so.ReplicateDepth == 0 {
			so.ReplicateDepth = node.DefaultCommitDepth
		}
	}
	if s.store, err = storage.Open(cfg.DataDir, so); err != nil {
		return fmt.Errorf("open storage: %w", err)
	}
	return nil
}

// openResolver opens the resolver over the store: with the cluster's
// bindings, or a single node's object tier, or neither (a store that
// has objects then needs its bucket).
func (s *Server) openResolver() (err error) {
	cfg := s.cfg
	rc := cfg.Resolver
	rc.Logger = named(rc.Logger, cfg.Logger, "resolver")
	if cfg.Cluster != nil {
		s.clusterResolver(&rc)
	} else if cfg.ObjectStoreURL != "" {
		to := cfg.Tier
		to.Logger = named(to.Logger, cfg.Logger, "tier")
		if s.tier, s.bucket, err = openTier(s.store, cfg.ObjectStoreURL, to); err != nil {
			return err
		}
		rc.Tier = s.tier
	} else if err := checkNoObjects(s.store); err != nil {
		return err
	}
	if s.res, err = resolver.Open(s.store, rc); err != nil {
		return fmt.Errorf("open resolver: %w", err)
	}
	return nil
}

// openOffsets opens the offsets, groups and transactions store: a local
// pebble, or in cluster mode the catalog's.
func (s *Server) openOffsets() (err error) {
	cfg := s.cfg
	oo := cfg.Offsets
	oo.Logger = named(oo.Logger, cfg.Logger, "offsets")
	if cfg.Cluster != nil {
		if err := s.openClusterCatalog(); err != nil {
			return fmt.Errorf("cluster catalog: %w", err)
		}
		s.offs, err = s.openClusterOffsets(oo)
	} else {
		s.offs, err = offsets.Open(filepath.Join(cfg.DataDir, "offsets"), oo)
	}
	if err != nil {
		return fmt.Errorf("open offsets: %w", err)
	}
	return nil
}

// openKafka builds the protocol server over the layers, with the
// stores it owns (credentials, quotas, ACLs, tokens, telemetry).
func (s *Server) openKafka() (err error) {
	cfg := s.cfg
	kc := cfg.Kafka
	kc.Resolver, kc.Offsets = s.res, s.offs
	if kc.LogDir == "" {
		if kc.LogDir, err = filepath.Abs(cfg.DataDir); err != nil { // the one log dir (DescribeLogDirs)
			return err
		}
	}
	if s.cluster != nil {
		kc.Cluster = s.cluster.node
		if err := s.clusterID(&kc); err != nil {
			return err
		}
		s.clusterShare(&kc) // Share groups in cluster mode
		s.clusterTxn(&kc)
		if err := s.openClusterAuth(&kc); err != nil { // Credentials and ACLs shared in etcd
			return err
		}
	}
	if err := s.openKafkaStores(&kc); err != nil {
		return err
	}
	kc.Logger = named(kc.Logger, cfg.Logger, "kafka")
	if kc.Observer == nil {
		kc.Observer = s.metrics
	}
	if s.kafka, err = kafka.NewServer(kc); err != nil {
		return fmt.Errorf("kafka server: %w", err)
	}
	if s.cluster != nil {
		s.cluster.txn.SetAdder(s.kafka.AddPartitionImplicitly) // Implicit adds across nodes
	}
	return nil
}

// openKafkaStores opens what kc does not have yet of the single node's
// stores under the data directory: SCRAM credentials, client quotas,
// the configured authorizer's ACLs; then tokens and telemetry.
func (s *Server) openKafkaStores(kc *kafka.Config) (err error) {
	dir := s.cfg.DataDir
	if kc.SASL.Credentials == nil {
		kc.SASL.Credentials = auth.OpenStore(dir)
	}
	if kc.Quotas == nil {
		if kc.Quotas, err = quota.OpenStore(dir); err != nil {
			return fmt.Errorf("client quotas: %w", err)
		}
	}
	if kc.Authorizer == nil && s.cfg.Authorizer.ClassName != "" {
		if kc.Authorizer, err = s.cfg.Authorizer.open(dir); err != nil {
			return err
		}
	}
	if err := s.openTokens(kc); err != nil {
		return err
	}
	return s.openTelemetry(kc)
}

func named(own, root *zap.Logger, name string) *zap.Logger {
	if own != nil {
		return own
	}
	return logging.Named(root, name) // a broker logger (package logging)
}

// onCommit records every group commit in the metrics, then calls next.
func (s *Server) onCommit(next func(storage.CommitStats)) func(storage.CommitStats) {
	return func(st storage.CommitStats) {
		s.metrics.GroupCommit(st.Lane(), st.Sync+st.Replicate, st.Bytes) // one of the two is zero
		if next != nil {
			next(st)
		}
	}
}

// Serve accepts Kafka connections on every listener until Close, then
// returns nil; any other return is a listener's failure (the others stop
// too). It may be called once.
func (s *Server) Serve() error {
	if len(s.lns) == 0 {
		return ErrNoListener
	}
	s.mu.Lock()
	if s.mu.closed || s.mu.serving != nil {
		s.mu.Unlock()
		return kafka.ErrServerClosed
	}
	done := make(chan struct{})
	s.mu.serving = done
	s.mu.Unlock()
	defer close(done)
	errs := make(chan error, len(s.lns))
	for i, ln := range s.lns {
		go func() { errs <- s.kafka.ServeListener(ln, s.lis[i]) }()
	}
	var first error
	for range s.lns {
		err := <-errs
		if errors.Is(err, kafka.ErrServerClosed) {
			continue
		}
		if first == nil {
			first = err
			s.closeListeners() // one failed: stop the others
		}
	}
	return first
}

// Addr is the first Kafka listener's bound address (nil without one).
func (s *Server) Addr() net.Addr {
	if len(s.lns) == 0 {
		return nil
	}
	return s.lns[0].Addr()
}

// ListenerAddrs maps each listener's name to its bound address.
func (s *Server) ListenerAddrs() map[string]net.Addr {
	out := make(map[string]net.Addr, len(s.lis))
	for i, l := range s.lis {
		out[l.Name] = s.lns[i].Addr()
	}
	return out
}

// ListenerAddr is the bound address of the listener named name (nil if
// there is none).
func (s *Server) ListenerAddr(name string) net.Addr {
	for i, l := range s.lis {
		if l.Name == name {
			return s.lns[i].Addr()
		}
	}
	return nil
}

// Ready is nil when the layers are open and the Kafka listener is
// accepting (/readyz), else why not.
func (s *Server) Ready() error {
	switch {
	case !s.open.Load():
		return errors.New("store closed")
	case !s.kafka.Ready():
		return errors.New("kafka listener not accepting")
	case s.cluster != nil:
		// A cluster node is ready once it serves what placement gives it.
		return s.cluster.node.Ready()
	}
	return nil
}

// Metrics is the server's registry and instruments (a registry per server).
func (s *Server) Metrics() *metrics.Metrics { return s.metrics }

// Resolver, Offsets and Store are the open layers, for the inspection of
// a running server (tests); they are closed by Close.
func (s *Server) Resolver() *resolver.Resolver { return s.res }
func (s *Server) Offsets() *offsets.Store      { return s.offs }
func (s *Server) Store() *storage.Store        { return s.store }

// Close stops serving (in-flight requests finish, up to the Kafka
// ShutdownTimeout), waits for Serve to return, then closes offsets, the
// resolver and the store, in that order. Later calls return the first
// call's result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Server) close() error {
	s.mu.Lock()
	s.mu.closed = true
	serving := s.mu.serving
	s.mu.Unlock()
	s.leaveCluster() // Graceful handover: hand the partitions over while still answering
	err := s.kafka.Close()
	if errors.Is(err, kafka.ErrServerClosed) {
		err = nil
	}
	if serving != nil {
		<-serving
	} else {
		s.closeListeners() // never handed to the Kafka server
	}
	return errors.Join(err, s.closeLayers())
}

func (s *Server) closeLayers() error {
	s.open.Store(false)
	var errs []error
	if s.offs != nil {
		errs = append(errs, s.offs.Close())
	}
	s.tokens.Close() // before the cluster's documents close
	errs = append(errs, s.closeCluster())
	if s.res != nil {
		errs = append(errs, s.res.Close())
	}
	if s.tier != nil {
		s.tier.Close()
	}
	if s.bucket != nil {
		errs = append(errs, s.bucket.Close())
	}
	if s.store != nil {
		errs = append(errs, s.store.Close())
	}
	return errors.Join(errs...)
}

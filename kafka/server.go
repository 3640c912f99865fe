package kafka

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/autocreate"
	"github.com/kgateway/kgateway/kafka/connection"
	"github.com/kgateway/kgateway/kafka/features"
	"github.com/kgateway/kgateway/kafka/fetchsession"
	"github.com/kgateway/kgateway/kafka/quota"
	"github.com/kgateway/kgateway/kafka/share"
	"github.com/kgateway/kgateway/kafka/tenancy"
	"github.com/kgateway/kgateway/kafka/wire"
	"github.com/kgateway/kgateway/resolver"
	"go.uber.org/zap"
)

// ErrServerClosed is returned by Serve after Close.
var ErrServerClosed = errors.New("kafka: server closed")

// Server serves the Kafka protocol on its listeners.
type Server struct {
	cfg Config
	res *resolver.Resolver
	log *zap.Logger
	// coord holds the group, share-group and transaction coordinators
	// over the offsets store, never nil; SwapOffsets replaces it whole
	// (coordinators.go).
	coord atomic.Pointer[coordinators]
	// swapMu serializes SwapOffsets.
	swapMu sync.Mutex
	// shareLeader serves ShareFetch and ShareAcknowledge in cluster mode
	// (share_cluster.go, share reads at the leaders); nil otherwise.
	shareLeader *share.Coordinator
	// features are the finalized feature levels (ApiVersions,
	// UpdateFeatures; kafka/features).
	features *features.Levels
	// sessions is the fetch session cache (KIP-227, kafka/fetchsession).
	sessions fetchsession.Cache

	// auto runs Metadata's topic auto-creations (kafka/autocreate), made
	// at first use (autoCreator); its goroutines are counted by conns.
	auto     *autocreate.Creator
	autoOnce sync.Once

	// closing is closed when Close starts: long-poll waits return early
	// and readers stop taking new requests.
	closing chan struct{}
	// conns counts every connection goroutine (reader, writer, handlers).
	conns sync.WaitGroup
	// handling counts requests whose handler is running.
	handling atomic.Int64
	// budget is queued.max.request.bytes (the request memory budget).
	budget *wire.Budget
	// plainBudget bounds the CPU failed PLAIN logins take (auth.DeriveBudget).
	plainBudget *auth.DeriveBudget
	// groupBound is groups.max.per.principal (tenant.go).
	groupBound *tenancy.Groups
	// quotaStore is the client quota configuration and quotas measures
	// clients against it (quotas.go).
	quotaStore *quota.Store
	quotas     *quota.Manager
	// open is the open connections, under the connection limit
	// (kafka/connection.Set).
	open *connection.Set

	mu struct {
		sync.Mutex
		// lns are the listeners being served, in the order they started.
		lns    []net.Listener
		closed bool
	}
}

// NewServer validates cfg and returns a server that is not yet serving.
func NewServer(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	s := &Server{cfg: cfg, res: cfg.Resolver, log: cfg.Logger, closing: make(chan struct{}),
		budget:      wire.NewBudget(cfg.QueuedMaxRequestBytes),
		plainBudget: auth.NewDeriveBudget(cfg.SASL.PlainFailuresPerAddress, cfg.SASL.PlainFailuresPerUser),
		groupBound:  tenancy.NewGroups(cfg.GroupsPerPrincipal)}
	s.quotaStore = cfg.Quotas
	if s.quotaStore == nil {
		s.quotaStore = quota.NewMemStore()
	}
	s.quotas = quota.NewManager(cfg.QuotaWindow, s.quotaStore.Quotas)
	ipLimits, err := quota.ResolveIPLimits(cfg.MaxConnectionsPerIPOverrides)
	if err != nil {
		return nil, err
	}
	s.open = connection.NewSet(connection.Limits{Max: cfg.MaxConnections, Log: s.log,
		PerIP: func(ip string, open int) (int, bool) {
			return quota.ConnectionLimit(ipLimits, cfg.MaxConnectionsPerIP, ip, open)
		},
		Throttle: func(ip string) time.Duration {
			return time.Duration(s.quotas.RecordConnection(ip, time.Now().UnixMilli())) * time.Millisecond
		}})
	// Features first: share coordinators read share.version (a cluster serves no DLQs: 1 at most).
	if s.features, err = features.Open(s.featuresPath(), features.Capped(featureSpecs, shareVersionFeature, 1, cfg.Cluster != nil)); err != nil {
		return nil, err
	}
	c, err := s.newCoordinators(cfg.Offsets, true)
	if err != nil {
		return nil, err
	}
	s.coord.Store(c)
	s.shareLeader = s.newShareLeader()
	return s, nil
}

// featuresPath is the file the finalized feature levels persist in: in
// the log dir of a single node; none in cluster mode, whose data
// directory is a cache (the data directory as a cache) and whose features cannot
// change (no share groups without States, share groups in cluster mode).
func (s *Server) featuresPath() string {
	if s.cfg.LogDir == "" || s.cfg.Cluster != nil {
		return ""
	}
	return filepath.Join(s.cfg.LogDir, "features.json")
}

// Serve accepts connections on ln, as one PLAINTEXT listener advertising
// Config.AdvertisedAddr, until Close; it always returns a non-nil error,
// ErrServerClosed after Close.
func (s *Server) Serve(ln net.Listener) error {
	return s.ServeListener(ln, s.plaintextListener())
}

// Start is Serve in the background: Addr is valid when it returns.
func (s *Server) Start(ln net.Listener) error {
	return s.StartListener(ln, s.plaintextListener())
}

// ServeListener is Serve for a listener of any protocol (the per-listener advertised address); a server
// may serve several, each on its own goroutine.
func (s *Server) ServeListener(ln net.Listener, l Listener) error {
	if err := s.setListener(ln, l); err != nil {
		return err
	}
	return s.acceptLoop(ln, &l)
}

// StartListener is ServeListener in the background.
func (s *Server) StartListener(ln net.Listener, l Listener) error {
	if err := s.setListener(ln, l); err != nil {
		return err
	}
	go s.acceptLoop(ln, &l)
	return nil
}

func (s *Server) setListener(ln net.Listener, l Listener) error {
	if err := l.Validate(s.cfg); err != nil {
		ln.Close()
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		ln.Close()
		return ErrServerClosed
	}
	s.mu.lns = append(s.mu.lns, ln)
	return nil
}

// acceptLoop serves the connections ln accepts (connection.Accept).
func (s *Server) acceptLoop(ln net.Listener, l *Listener) error {
	err := connection.Accept(ln, s.closing, s.log, func(nc net.Conn) bool {
		return s.open.Add(nc, func(string) *connection.Conn { return newConn(s, nc, l).loop })
	})
	if err == nil {
		return ErrServerClosed
	}
	return err
}

// Addr returns the first listener's address (nil before Serve).
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.mu.lns) == 0 {
		return nil
	}
	return s.mu.lns[0].Addr()
}

func (s *Server) isClosing() bool {
	select {
	case <-s.closing:
		return true
	default:
		return false
	}
}

// Close stops accepting, lets in-flight requests finish and their responses
// be written (long-poll fetches return early), then closes every
// connection. Connections still busy after ShutdownTimeout are closed
// anyway. Close does not close the resolver.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	return s.Shutdown(ctx)
}

// Shutdown is Close with the caller's deadline.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		s.conns.Wait()
		return nil
	}
	s.mu.closed = true
	close(s.closing)
	s.coords().stop()
	var errs []error
	for _, ln := range s.mu.lns {
		if err := ln.Close(); !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	err := errors.Join(errs...)
	s.mu.Unlock()
	s.open.Close()

	done := make(chan struct{})
	go func() { s.conns.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		s.log.Warn("shutdown-forced", zap.Error(ctx.Err()))
		s.open.Kill()
		<-done
	}
	return err
}

// plaintextListener is what Serve and Start serve: one PLAINTEXT listener
// advertising Config.AdvertisedAddr.
func (s *Server) plaintextListener() Listener {
	return Listener{Name: string(Plaintext), Protocol: Plaintext, Advertised: s.cfg.AdvertisedAddr}
}

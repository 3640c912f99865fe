package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgateway/kgateway/kafka"
	"github.com/kgateway/kgateway/metrics"
	"github.com/kgateway/kgateway/offsets"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/storage"
	"go.uber.org/zap"
)

// gateway is one running server: the layers, the Kafka listener and the
// metrics listener.
type gateway struct {
	cfg   Config
	log   *zap.Logger
	store *storage.Store
	res   *resolver.Resolver
	offs  *offsets.Store
	srv   *kafka.Server
	m     *metrics.Metrics

	ln       net.Listener
	served   chan error
	httpSrv  *http.Server
	httpLn   net.Listener
	httpDone chan struct{}
	open     atomic.Bool // the layers are open (readyz)

	closeOnce sync.Once
	closeErr  error
}

// startGateway opens storage -> resolver -> offsets -> kafka server and
// starts serving; on error everything opened is closed again.
// metricsExplicit says whether the metrics address was configured (its
// bind must succeed) or is the default (best effort).
func startGateway(cfg Config, metricsExplicit bool, log *zap.Logger) (_ *gateway, err error) {
	g := &gateway{cfg: cfg, log: log, m: metrics.New(), served: make(chan error, 1)}
	defer func() {
		if err != nil {
			err = errors.Join(err, g.closeLayers())
		}
	}()
	if g.store, err = storage.Open(cfg.DataDir, storage.Options{Logger: log.Named("storage"), TailCacheBytes: tailCacheOption(cfg.TailCacheBytes),
		NoReuse:  !cfg.SegmentReuse,
		OnCommit: func(st storage.CommitStats) { g.m.GroupCommit(st.Sync, st.Bytes) }}); err != nil {
		return nil, fmt.Errorf("open storage: %w", err)
	}
	if g.res, err = resolver.Open(g.store, cfg.resolverConfig(log.Named("resolver"))); err != nil {
		return nil, fmt.Errorf("open resolver: %w", err)
	}
	// O3: group offsets live in their own pebble instance.
	if g.offs, err = offsets.Open(filepath.Join(cfg.DataDir, "offsets"), offsets.Options{Logger: log.Named("offsets")}); err != nil {
		return nil, fmt.Errorf("open offsets: %w", err)
	}
	slow := time.Duration(cfg.SlowRequestMs) * time.Millisecond
	if g.srv, err = kafka.NewServer(kafka.Config{
		Offsets:                g.offs,
		Resolver:               g.res,
		AdvertisedAddr:         cfg.AdvertisedAddr,
		MaxRequestBytes:        int32(cfg.MaxRequestBytes),
		QueuedMaxRequestBytes:  cfg.QueuedMaxRequestBytes,
		ConnectionsMaxIdle:     time.Duration(cfg.ConnectionsMaxIdleMs) * time.Millisecond,
		MaxConnections:         cfg.MaxConnections,
		FetchSessionCacheSlots: sessionSlots(cfg.FetchSessionSlots),
		FetchMaxBytes:          int32(cfg.FetchMaxBytes),
		Logger:                 log.Named("kafka"),
		Observer:               g.m,
		SlowRequest:            slow,
	}); err != nil {
		return nil, err
	}
	g.open.Store(true)
	if err := g.m.Register(g.snapshot); err != nil {
		return nil, err
	}
	if g.ln, err = net.Listen("tcp", cfg.Listen); err != nil {
		return nil, err
	}
	go func() { g.served <- g.srv.Serve(g.ln) }()
	if err := g.startMetrics(metricsExplicit); err != nil {
		g.srv.Close()
		<-g.served
		return nil, err
	}
	return g, nil
}

func (g *gateway) startMetrics(explicit bool) error {
	if g.cfg.MetricsAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", g.cfg.MetricsAddr)
	if err != nil {
		if explicit {
			return fmt.Errorf("metrics listener: %w", err)
		}
		g.log.Warn("metrics-disabled", zap.String("metrics-addr", g.cfg.MetricsAddr), zap.Error(err))
		return nil
	}
	g.httpLn, g.httpDone = ln, make(chan struct{})
	g.httpSrv = &http.Server{Handler: g.m.Handler(g.ready), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(g.httpDone)
		g.httpSrv.Serve(ln)
	}()
	return nil
}

// ready is /readyz: the store is open and the Kafka listener accepting.
func (g *gateway) ready() error {
	switch {
	case !g.open.Load():
		return errors.New("store closed")
	case !g.srv.Ready():
		return errors.New("kafka listener not accepting")
	}
	return nil
}

// Addr and MetricsAddr are the bound addresses (MetricsAddr nil when the
// metrics server is off).
func (g *gateway) Addr() net.Addr { return g.ln.Addr() }

func (g *gateway) MetricsAddr() net.Addr {
	if g.httpLn == nil {
		return nil
	}
	return g.httpLn.Addr()
}

// snapshot is the metrics Source, computed at scrape time (M2).
func (g *gateway) snapshot() metrics.Snapshot {
	var s metrics.Snapshot
	if !g.open.Load() {
		return s
	}
	for _, p := range g.res.PartitionInfos() {
		ps := metrics.PartitionStat{Topic: p.Topic, Partition: p.Partition, LogStart: int64(p.Info.Start),
			HighWatermark: int64(p.Info.End), Ledgers: len(p.Info.Ledgers)}
		for _, l := range p.Info.Ledgers {
			ps.Entries += l.Entries
			ps.Bytes += l.Bytes
		}
		s.Partitions = append(s.Partitions, ps)
	}
	if groups, err := g.offs.Groups(); err == nil {
		for _, gr := range groups {
			commits, err := g.offs.GroupOffsets(gr.ID)
			if err != nil {
				continue
			}
			for _, c := range commits {
				s.Groups = append(s.Groups, metrics.GroupOffset{Group: gr.ID, Topic: c.Topic, Partition: c.Partition, Committed: int64(c.Offset)})
			}
		}
	}
	s.DiskBytes = dirBytes(g.cfg.DataDir)
	s.Connections = g.srv.OpenConnections()
	s.InFlight = g.srv.InFlightRequests()
	return s
}

// dirBytes sums the sizes of the files under dir (files vanishing during
// the walk are skipped).
func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// Close stops serving (in-flight requests finish), then closes the layers
// in reverse order. Later calls return the first call's result.
func (g *gateway) Close() error {
	g.closeOnce.Do(func() { g.closeErr = g.close() })
	return g.closeErr
}

func (g *gateway) close() error {
	err := g.srv.Close()
	if errors.Is(err, kafka.ErrServerClosed) {
		err = nil
	}
	<-g.served
	if g.httpSrv != nil {
		err = errors.Join(err, g.httpSrv.Close())
		<-g.httpDone
	}
	return errors.Join(err, g.closeLayers())
}

func (g *gateway) closeLayers() error {
	g.open.Store(false)
	var errs []error
	if g.offs != nil {
		errs = append(errs, g.offs.Close())
	}
	if g.res != nil {
		errs = append(errs, g.res.Close())
	}
	if g.store != nil {
		errs = append(errs, g.store.Close())
	}
	return errors.Join(errs...)
}

// sessionSlots maps Kafka's max.incremental.fetch.session.cache.slots (0:
// no sessions) to kafka.Config's (0: the default, negative: no sessions).
func sessionSlots(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// tailCacheOption maps tail.cache.bytes to storage's option, where zero
// means the default and a negative value disables the cache.
func tailCacheOption(n int64) int64 {
	if n == 0 {
		return -1
	}
	return n
}

package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"time"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka"
	"github.com/kgateway/kgateway/kafka/quota"
	"github.com/kgateway/kgateway/kafka/token"
	"github.com/kgateway/kgateway/server"
	"go.uber.org/zap"
)

// gateway is one running server (package server) and its metrics
// listener.
type gateway struct {
	*server.Server
	cfg Config
	log *zap.Logger
	// tls are the listeners' TLS configurations, reloaded on SIGHUP (TLS handshake timeouts and certificate reloads).
	tls []*auth.TLS

	served   chan error
	httpSrv  *http.Server
	httpLn   net.Listener
	httpDone chan struct{}

	closeOnce sync.Once
	closeErr  error
}

// startGateway opens the server and starts serving, then starts the
// metrics listener; on error everything opened is closed again.
// metricsExplicit says whether the metrics address was configured (its
// bind must succeed) or is the default (best effort).
func startGateway(cfg Config, metricsExplicit bool, log *zap.Logger) (*gateway, error) {
	sc := cfg.serverConfig(log)
	listeners, tlsCfgs, err := cfg.buildListeners(log)
	if err != nil {
		return nil, err
	}
	if len(listeners) > 0 {
		sc.Listen, sc.Listeners = "", listeners
	}
	s, err := server.Open(sc)
	if err != nil {
		return nil, err
	}
	g := &gateway{Server: s, cfg: cfg, log: log, tls: tlsCfgs, served: make(chan error, 1)}
	go func() { g.served <- s.Serve() }()
	if err := g.startMetrics(metricsExplicit); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return g, nil
}

// serverConfig maps the configuration onto the server's.
func (c Config) serverConfig(log *zap.Logger) server.Config {
	overrides, _ := ipOverrides(c.MaxConnectionsPerIPOverrides) // checked by validate
	return server.Config{
		DataDir:           c.DataDir,
		Listen:            c.Listen,
		ObjectStoreURL:    c.ObjectStoreURL,
		Tier:              server.TierOptions{UploadConcurrency: c.RemoteCopyThreads, UploadBytesPerSec: c.RemoteCopyBytesPerSec},
		Logger:            log,
		Storage:           server.StorageOptions{TailCacheBytes: tailCacheOption(c.TailCacheBytes), NoReuse: !c.SegmentReuse},
		Resolver:          c.resolverConfig(),
		Cluster:           c.clusterConfig(log),
		Offsets:           server.OffsetsOptions{Retention: time.Duration(c.OffsetsRetentionMinutes) * time.Minute},
		TelemetryMaxBytes: int32(c.TelemetryMaxBytes),
		Tokens:            c.tokenConfig(),
		Authorizer: server.AuthorizerConfig{
			ClassName:            c.AuthorizerClassName,
			SuperUsers:           superUsers(c.SuperUsers),
			AllowEveryoneIfNoACL: c.AllowEveryoneIfNoACL,
			MaxACLs:              c.MaxACLs,
		},
		Kafka: kafka.Config{
			NodeID:                             c.NodeID,
			AdvertisedAddr:                     c.AdvertisedAddr,
			MaxRequestBytes:                    int32(c.MaxRequestBytes),
			QueuedMaxRequestBytes:              c.QueuedMaxRequestBytes,
			ConnectionsMaxIdle:                 time.Duration(c.ConnectionsMaxIdleMs) * time.Millisecond,
			MaxConnections:                     c.MaxConnections,
			MaxConnectionsPerIP:                c.MaxConnectionsPerIP,
			MaxConnectionsPerIPOverrides:       overrides,
			QuotaWindow:                        quota.Window{Samples: c.QuotaWindowNum, SizeMs: int64(c.QuotaWindowSizeSeconds) * 1000},
			FetchSessionCacheSlots:             sessionSlots(c.FetchSessionSlots),
			FetchSessionCacheSlotsPerPrincipal: c.FetchSessionSlotsPer,
			MaxPartitions:                      c.MaxPartitions,
			MaxPartitionsPerPrincipal:          c.MaxPartitionsPerPrincipal,
			GroupsPerPrincipal:                 c.GroupsMaxPerPrincipal,
			FetchMaxBytes:                      int32(c.FetchMaxBytes),
			FetchSendfile:                      c.FetchSendfile,
			SlowRequest:                        time.Duration(c.SlowRequestMs) * time.Millisecond,
			TLSHandshakeTimeout:                time.Duration(c.SSLHandshakeTimeoutMs) * time.Millisecond,
			SASL: kafka.SASLConfig{
				Mechanisms:     splitList(c.SASLEnabledMechanisms),
				ReauthAfter:    time.Duration(c.ConnectionsMaxReauthMs) * time.Millisecond,
				FailedDelay:    failedDelay(c.FailedAuthDelayMs),
				MaxReceiveSize: int32(c.SASLMaxReceiveSize),

				PlainFailuresPerAddress: c.PlainFailuresPerAddr,
				PlainFailuresPerUser:    c.PlainFailuresPerUser,
				MaxUsers:                c.ScramUsersMax,
			},
			Txn:   c.txnConfig(),
			Group: c.groupConfig(),
			Share: c.shareConfig(),
		},
	}
}

// tokenConfig is the delegation tokens' configuration: the secret key,
// or its deprecated name when it is empty (as Kafka).
func (c Config) tokenConfig() token.Config {
	secret := c.DelegationTokenSecretKey
	if secret == "" {
		secret = c.DelegationTokenMasterKey
	}
	return token.Config{Secret: secret,
		MaxLifetime:     time.Duration(c.DelegationTokenMaxLifeMs) * time.Millisecond,
		ExpiryTime:      time.Duration(c.DelegationTokenExpiryMs) * time.Millisecond,
		ExpiryCheck:     time.Duration(c.DelegationTokenCheckMs) * time.Millisecond,
		MaxPerPrincipal: c.DelegationTokensMaxPer, Max: c.DelegationTokensMax}
}

// superUsers is super.users as a list (Validate checked it).
func superUsers(s string) []string {
	users, _ := auth.ParseSuperUsers(s)
	return users
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
	g.httpSrv = &http.Server{Handler: g.httpHandler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(g.httpDone)
		g.httpSrv.Serve(ln)
	}()
	return nil
}

// httpHandler is what the metrics listener serves: /metrics, /healthz and
// /readyz, and with debug.pprof.enable Go's profiler under /debug/pprof/
// (CPU and heap profiles, goroutine dumps, execution traces). Off, the
// paths are not found. (Importing net/http/pprof also registers them on
// http.DefaultServeMux, which no listener of kgateway serves.)
func (g *gateway) httpHandler() http.Handler {
	h := g.Metrics().Handler(g.Ready)
	if !g.cfg.DebugPprof {
		return h
	}
	mux := http.NewServeMux()
	mux.Handle("/", h)
	mux.HandleFunc("/debug/pprof/", pprof.Index) // named profiles: heap, allocs, goroutine, ...
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// MetricsAddr is the metrics listener's bound address (nil when the
// metrics server is off).
func (g *gateway) MetricsAddr() net.Addr {
	if g.httpLn == nil {
		return nil
	}
	return g.httpLn.Addr()
}

// Close stops serving Kafka (in-flight requests finish) and closes the
// layers, then stops the metrics listener. Later calls return the first
// call's result.
func (g *gateway) Close() error {
	g.closeOnce.Do(func() {
		err := g.Server.Close()
		if g.httpSrv != nil {
			err = errors.Join(err, g.httpSrv.Close())
			<-g.httpDone
		}
		g.closeErr = err
	})
	return g.closeErr
}

// ReloadTLS re-reads every listener's certificates (SIGHUP, TLS handshake timeouts and certificate reloads); a
// listener whose files fail to load keeps its previous ones.
func (g *gateway) ReloadTLS() error {
	var errs []error
	for _, t := range g.tls {
		errs = append(errs, t.Reload())
	}
	return errors.Join(errs...)
}

// failedDelay maps connection.failed.authentication.delay.ms (0: none) to
// kafka.SASLConfig's (0: the default, negative: none).
func failedDelay(ms int64) time.Duration {
	if ms == 0 {
		return -1
	}
	return time.Duration(ms) * time.Millisecond
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

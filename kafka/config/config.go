package config

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/group"
	"github.com/kgateway/kgateway/kafka/quota"
	"github.com/kgateway/kgateway/kafka/share"
	"github.com/kgateway/kgateway/kafka/telemetry"
	"github.com/kgateway/kgateway/kafka/tenancy"
	"github.com/kgateway/kgateway/kafka/token"
	"github.com/kgateway/kgateway/kafka/txn"
	"github.com/kgateway/kgateway/kafka/wire"
	"github.com/kgateway/kgateway/logging"
	"github.com/kgateway/kgateway/offsets"
	"github.com/kgateway/kgateway/resolver"
	"go.uber.org/zap"
)

// DefaultMaxRequestBytes is Kafka's socket.request.max.bytes default.
const DefaultMaxRequestBytes = 100 << 20

// Connection limit defaults (the request memory budget, the idle
// connection timeout and the connection limit: kafka/connection/doc.go).
const (
	// DefaultQueuedMaxRequestBytes bounds the bytes of requests read and
	// not yet answered: five maximal requests. (Kafka's own default is
	// unbounded; a bound is what keeps the process's memory finite.)
	DefaultQueuedMaxRequestBytes = 500 << 20
	// DefaultConnectionsMaxIdle is Kafka's connections.max.idle.ms.
	DefaultConnectionsMaxIdle = 10 * time.Minute
	// DefaultMaxConnections is max.connections. Kafka's default is
	// unbounded; each connection costs two goroutines and buffers, so
	// bound it well above any real client fleet of one broker.
	DefaultMaxConnections = 10000
	// DefaultFetchSessionCacheSlots is Kafka's
	// max.incremental.fetch.session.cache.slots default.
	DefaultFetchSessionCacheSlots = 1000
	// DefaultFetchSessionCacheSlotsPerPrincipal is a quarter of them.
	DefaultFetchSessionCacheSlotsPerPrincipal = DefaultFetchSessionCacheSlots / 4
	// DefaultFetchMaxBytes is Kafka's fetch.max.bytes default (55 MiB).
	DefaultFetchMaxBytes = 55 << 20
	// MinFetchMaxBytes is the smallest fetch.max.bytes Kafka accepts.
	MinFetchMaxBytes = 1024
)

// DefaultMaxPartitions is partitions.max.
const DefaultMaxPartitions = 100000

// DefaultMaxPartitionsPerPrincipal is partitions.max.per.principal.
const DefaultMaxPartitionsPerPrincipal = tenancy.DefaultPartitionsPerPrincipal

// DefaultSlowRequest is the default slow-request log threshold.
const DefaultSlowRequest = time.Second

// Config configures a Server. Names follow Kafka's broker configs where one
// exists; the zero value of every optional field means its default.
type Config struct {
	// Resolver serves every topic and partition (required).
	Resolver *resolver.Resolver

	// AdvertisedAddr is advertised.listeners' host:port: what Metadata and
	// DescribeCluster tell clients to dial. Empty means the local address
	// of each connection, i.e. exactly what that client dialed, so a
	// listener on 0.0.0.0 is never advertised as 0.0.0.0.
	AdvertisedAddr string

	// MaxRequestBytes is socket.request.max.bytes: a frame declaring a
	// larger size closes the connection before anything is allocated.
	MaxRequestBytes int32

	// NodeID is node.id (default 0). Without Cluster it is the only
	// broker: the leader of every partition and the controller; with
	// Cluster it is this node's id among Cluster.Brokers().
	NodeID int32

	// Cluster is the view of the other nodes when kgateway runs as one
	// node of several (cluster mode, cluster routing in doc.go "Cluster mode:
	// routing"): who leads each partition, who coordinates groups, and
	// the shared catalog topic changes go through. Nil: a single node,
	// and nothing here changes.
	Cluster Cluster

	// LogDir is the data directory, described as the node's one log dir
	// (log.dirs) by DescribeLogDirs and named by AlterReplicaLogDirs: an
	// absolute path. Without Cluster it also keeps the finalized feature
	// levels (UpdateFeatures, kafka/features). Empty: no log dir is
	// described and feature levels are kept in memory only.
	LogDir string

	// ClusterID is returned by Metadata v2+ and DescribeCluster. Empty
	// means the data directory's own, kept id (Resolver.ClusterID).
	ClusterID string

	// MaxInFlightPerConn bounds how many requests of one connection are
	// being handled or waiting to be written at once (default 64). The
	// reader stops reading while the window is full: backpressure.
	MaxInFlightPerConn int

	// QueuedMaxRequestBytes is queued.max.request.bytes: the most request
	// bytes read (or being read) and not yet answered, server-wide (the request memory budget).
	// At least MaxRequestBytes, so any valid frame fits.
	QueuedMaxRequestBytes int64

	// ConnectionsMaxIdle is connections.max.idle.ms (the idle connection timeout).
	ConnectionsMaxIdle time.Duration

	// MaxConnections is max.connections (the connection limit).
	MaxConnections int

	// FetchSessionCacheSlots is max.incremental.fetch.session.cache.slots:
	// how many fetch sessions (KIP-227) the server keeps (default 1000;
	// negative: no sessions, every fetch is sessionless).
	FetchSessionCacheSlots int
	// FetchSessionCacheSlotsPerPrincipal bounds the fetch sessions of one
	// principal, with an authorizer (the fetch session cache bound; default a quarter of the
	// slots).
	FetchSessionCacheSlotsPerPrincipal int

	// GroupsPerPrincipal is groups.max.per.principal: the groups one
	// principal may create, with an authorizer (kafka/tenancy; default
	// tenancy.DefaultGroupsPerPrincipal).
	GroupsPerPrincipal int

	// MaxPartitions is partitions.max: the partitions of all topics
	// together (kafka/topicadmin; default DefaultMaxPartitions).
	MaxPartitions int
	// MaxPartitionsPerPrincipal is partitions.max.per.principal: with an
	// authorizer, the partitions of the topics one principal created
	// (kafka/topicadmin; default DefaultMaxPartitionsPerPrincipal).
	MaxPartitionsPerPrincipal int

	// FetchMaxBytes is fetch.max.bytes: the most record bytes one Fetch
	// response carries, whatever the request's MaxBytes (default 55 MiB;
	// at least 1024). A KIP-74 first batch is still returned whole.
	FetchMaxBytes int32

	// FetchSendfile sends the record batches a Fetch read from segment
	// files with sendfile(2) on plaintext TCP connections (Linux), after
	// their frames' CRCs were checked by a pread as always, keeping the
	// files pinned until the response is written (kafka/fetchwire). Off by
	// default: on the development VM it cost more server CPU per GB than
	// writing the checked bytes from their pooled buffer (BENCHMARKS.md).
	FetchSendfile bool

	// ShutdownTimeout bounds how long Close waits for in-flight requests
	// before it closes connections anyway (default 10s).
	ShutdownTimeout time.Duration

	Logger *zap.Logger

	// Offsets is the consumer-group offset store (O1–O3); the server runs
	// the group coordinator over it. Nil disables the group APIs
	// (FindCoordinator answers COORDINATOR_NOT_AVAILABLE). The caller
	// closes it after the server.
	Offsets *offsets.Store
	// Group configures the coordinator (group.min.session.timeout.ms, …);
	// zero values are Kafka's defaults.
	Group group.Config
	// Share configures the share-group coordinator (group.share.*).
	Share share.Config
	// Txn configures the transaction coordinator
	// (transaction.max.timeout.ms, transactional.id.expiration.ms, …);
	// zero values are Kafka's defaults. Partitions and Topics default to
	// the server's resolver.
	Txn txn.Config

	// SASL configures authentication on SASL listeners (the security rules).
	SASL SASLConfig
	// Authorizer authorizes every request (the authorizer's decisions, per-API authorization) and serves the ACL
	// APIs; nil: authorization is off (authorizer.class.name unset), every
	// request is allowed and the ACL APIs answer SECURITY_DISABLED.
	Authorizer *auth.Authorizer
	// TLSHandshakeTimeout bounds a TLS handshake (TLS handshake timeouts and certificate reloads; default 10s).
	TLSHandshakeTimeout time.Duration

	// Quotas is the client quota configuration (DescribeClientQuotas,
	// AlterClientQuotas; kafka/quota), enforced on every connection. Nil:
	// kept in memory only.
	Quotas *quota.Store
	// QuotaWindow is quota.window.num and quota.window.size.seconds
	// (zero: Kafka's 11 samples of one second).
	QuotaWindow quota.Window
	// MaxConnectionsPerIP is max.connections.per.ip (0: unbounded), and
	// MaxConnectionsPerIPOverrides max.connections.per.ip.overrides: per
	// IP address, or host name resolved at start, its own bound.
	MaxConnectionsPerIP          int
	MaxConnectionsPerIPOverrides map[string]int

	// Observer receives per-request metrics (nil: none).
	Observer Observer
	// Telemetry serves client telemetry (KIP-714): GetTelemetrySubscriptions
	// and PushTelemetry, and the CLIENT_METRICS config resources it keeps
	// its subscriptions in (kafka/telemetry.go). Nil: none of them is served or
	// advertised.
	Telemetry *telemetry.Manager
	// SlowRequest is the slow-request log threshold: a request whose
	// handling, long-poll waits excluded, takes longer is logged at warn
	// (0: DefaultSlowRequest; negative: never).
	SlowRequest time.Duration
}

// SASLConfig is the SASL part of Config, with Kafka's names.
type SASLConfig struct {
	// Mechanisms is sasl.enabled.mechanisms (default SCRAM-SHA-256 and
	// SCRAM-SHA-512); a listener may override it.
	Mechanisms []string
	// Credentials is the user store (the SCRAM credential store); required by a SASL listener.
	Credentials *auth.Store
	// ReauthAfter is connections.max.reauth.ms: a session's lifetime (KIP-368 re-authentication);
	// 0 means sessions never expire.
	ReauthAfter time.Duration
	// FailedDelay is connection.failed.authentication.delay.ms (the failed-authentication delay;
	// default 100ms, negative: none).
	FailedDelay time.Duration
	// MaxReceiveSize is sasl.server.max.receive.size: the largest frame
	// before authentication (the pre-authentication gate; default 512 KiB).
	MaxReceiveSize int32
	// PlainFailuresPerAddress and PlainFailuresPerUser are
	// sasl.plain.failed.logins.per.address.per.minute and
	// sasl.plain.failed.logins.per.user.per.minute: the PBKDF2
	// derivations failed PLAIN logins may cost (auth.DeriveBudget; 0:
	// auth.DefaultFailuresPerAddress, auth.DefaultFailuresPerUser).
	PlainFailuresPerAddress, PlainFailuresPerUser int
	// Tokens are the delegation tokens (KIP-48, kafka/token): the token
	// APIs and SCRAM token authentication. Nil: disabled
	// (DELEGATION_TOKEN_AUTH_DISABLED).
	Tokens *token.Manager
	// MaxUsers is scram.users.max: the users AlterUserScramCredentials
	// may make the store hold (default DefaultMaxUsers).
	MaxUsers int
}

// Defaults of SASLConfig and TLSHandshakeTimeout.
const (
	DefaultFailedAuthDelay     = 100 * time.Millisecond
	DefaultMaxUsers            = 10000
	DefaultSASLMaxReceiveSize  = 512 << 10
	DefaultTLSHandshakeTimeout = 10 * time.Second
)

// DefaultSASLMechanisms is sasl.enabled.mechanisms' default.
var DefaultSASLMechanisms = []string{auth.ScramSHA256, auth.ScramSHA512}

// WithDefaults returns cfg with every unset optional field defaulted.
func (cfg Config) WithDefaults() Config {
	if cfg.MaxRequestBytes == 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.QueuedMaxRequestBytes == 0 {
		cfg.QueuedMaxRequestBytes = max(DefaultQueuedMaxRequestBytes, int64(cfg.MaxRequestBytes))
	}
	if cfg.ConnectionsMaxIdle == 0 {
		cfg.ConnectionsMaxIdle = DefaultConnectionsMaxIdle
	}
	if cfg.MaxConnections == 0 {
		cfg.MaxConnections = DefaultMaxConnections
	}
	if cfg.FetchSessionCacheSlots == 0 {
		cfg.FetchSessionCacheSlots = DefaultFetchSessionCacheSlots
	}
	if cfg.FetchSessionCacheSlotsPerPrincipal <= 0 {
		cfg.FetchSessionCacheSlotsPerPrincipal = max(1, min(DefaultFetchSessionCacheSlotsPerPrincipal, cfg.FetchSessionCacheSlots))
	}
	if cfg.FetchMaxBytes == 0 {
		cfg.FetchMaxBytes = DefaultFetchMaxBytes
	}
	if cfg.MaxPartitions <= 0 {
		cfg.MaxPartitions = DefaultMaxPartitions
	}
	if cfg.MaxPartitionsPerPrincipal <= 0 {
		cfg.MaxPartitionsPerPrincipal = DefaultMaxPartitionsPerPrincipal
	}
	if cfg.ClusterID == "" && cfg.Resolver != nil {
		cfg.ClusterID = cfg.Resolver.ClusterID()
	}
	if cfg.MaxInFlightPerConn == 0 {
		cfg.MaxInFlightPerConn = 64
	}
	if cfg.ShutdownTimeout == 0 {
		cfg.ShutdownTimeout = 10 * time.Second
	}
	cfg.Logger = logging.Wrap(cfg.Logger) // broker loggers (kafka/brokerlogger)
	cfg.Group.Logger = named(cfg.Group.Logger, cfg.Logger, "group")
	cfg.Share.Logger = named(cfg.Share.Logger, cfg.Logger, "share")
	cfg.Txn.Logger = named(cfg.Txn.Logger, cfg.Logger, "txn")
	if cfg.SlowRequest == 0 {
		cfg.SlowRequest = DefaultSlowRequest
	}
	if len(cfg.SASL.Mechanisms) == 0 {
		cfg.SASL.Mechanisms = DefaultSASLMechanisms
	}
	if cfg.SASL.FailedDelay == 0 {
		cfg.SASL.FailedDelay = DefaultFailedAuthDelay
	}
	if cfg.SASL.MaxUsers <= 0 {
		cfg.SASL.MaxUsers = DefaultMaxUsers
	}
	if cfg.SASL.MaxReceiveSize == 0 {
		cfg.SASL.MaxReceiveSize = DefaultSASLMaxReceiveSize
	}
	if cfg.TLSHandshakeTimeout == 0 {
		cfg.TLSHandshakeTimeout = DefaultTLSHandshakeTimeout
	}
	return cfg
}

// named is own, else root's logger named name (a broker logger of its own).
func named(own, root *zap.Logger, name string) *zap.Logger {
	if own != nil {
		return own
	}
	return logging.Named(root, name)
}

// Validate reports every problem with cfg at once (joined), nil if none.
func (cfg Config) Validate() error {
	var errs []error
	if cfg.Resolver == nil {
		errs = append(errs, errors.New("kafka: config: Resolver is required"))
	}
	if cfg.MaxRequestBytes < 0 {
		errs = append(errs, fmt.Errorf("kafka: config: socket.request.max.bytes %d is negative", cfg.MaxRequestBytes))
	} else if cfg.MaxRequestBytes != 0 && cfg.MaxRequestBytes < wire.MinRequest {
		errs = append(errs, fmt.Errorf("kafka: config: socket.request.max.bytes %d is below the smallest request (%d)", cfg.MaxRequestBytes, wire.MinRequest))
	}
	if cfg.NodeID < 0 {
		errs = append(errs, fmt.Errorf("kafka: config: node.id %d is negative", cfg.NodeID))
	}
	if cfg.MaxInFlightPerConn < 0 {
		errs = append(errs, fmt.Errorf("kafka: config: MaxInFlightPerConn %d is negative", cfg.MaxInFlightPerConn))
	}
	if q := cfg.QueuedMaxRequestBytes; q < 0 {
		errs = append(errs, fmt.Errorf("kafka: config: queued.max.request.bytes %d is negative", q))
	} else if mrb := cmp.Or(max(cfg.MaxRequestBytes, 0), DefaultMaxRequestBytes); q != 0 && q < int64(mrb) {
		errs = append(errs, fmt.Errorf("kafka: config: queued.max.request.bytes %d is below socket.request.max.bytes %d (a maximal request could never be read)", q, mrb))
	}
	if cfg.ConnectionsMaxIdle < 0 {
		errs = append(errs, fmt.Errorf("kafka: config: connections.max.idle.ms %v is negative", cfg.ConnectionsMaxIdle))
	}
	if cfg.MaxConnections < 0 {
		errs = append(errs, fmt.Errorf("kafka: config: max.connections %d is negative", cfg.MaxConnections))
	}
	if cfg.FetchMaxBytes != 0 && cfg.FetchMaxBytes < MinFetchMaxBytes {
		errs = append(errs, fmt.Errorf("kafka: config: fetch.max.bytes %d is below %d", cfg.FetchMaxBytes, MinFetchMaxBytes))
	}
	if cfg.MaxConnectionsPerIP < 0 {
		errs = append(errs, fmt.Errorf("kafka: config: max.connections.per.ip %d is negative", cfg.MaxConnectionsPerIP))
	}
	for host, n := range cfg.MaxConnectionsPerIPOverrides {
		if n < 0 {
			errs = append(errs, fmt.Errorf("kafka: config: max.connections.per.ip.overrides: %s:%d is negative", host, n))
		}
	}
	if cfg.ShutdownTimeout < 0 {
		errs = append(errs, fmt.Errorf("kafka: config: ShutdownTimeout %v is negative", cfg.ShutdownTimeout))
	}
	if err := auth.CheckMechanisms(cfg.SASL.Mechanisms); err != nil {
		errs = append(errs, fmt.Errorf("kafka: config: sasl.enabled.mechanisms: %w", err))
	}
	if cfg.SASL.ReauthAfter < 0 {
		errs = append(errs, fmt.Errorf("kafka: config: connections.max.reauth.ms %v is negative", cfg.SASL.ReauthAfter))
	}
	if cfg.SASL.PlainFailuresPerAddress < 0 || cfg.SASL.PlainFailuresPerUser < 0 {
		errs = append(errs, fmt.Errorf("kafka: config: sasl.plain.failed.logins.per.address.per.minute %d and sasl.plain.failed.logins.per.user.per.minute %d must not be negative",
			cfg.SASL.PlainFailuresPerAddress, cfg.SASL.PlainFailuresPerUser))
	}
	if cfg.AdvertisedAddr != "" {
		if err := validateAdvertised(cfg.AdvertisedAddr); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// validateAdvertised checks that addr is a host:port a client can dial.
func validateAdvertised(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("kafka: config: advertised address %q: %w", addr, err)
	}
	if host == "" {
		return fmt.Errorf("kafka: config: advertised address %q has no host", addr)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return fmt.Errorf("kafka: config: advertised address %q is unspecified (clients cannot dial it)", addr)
	}
	if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
		return fmt.Errorf("kafka: config: advertised address %q has an invalid port", addr)
	}
	return nil
}

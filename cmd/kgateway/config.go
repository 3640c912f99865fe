package main

// The configuration model: one plain struct with defaults.
// Every field has a property name (Kafka's where one exists, used in the
// --config file), an environment variable (KGATEWAY_ + the property name
// upper-cased with dots as underscores) and a flag (kebab-case). Values
// apply in the order default < file < environment < flag; Validate
// reports every problem at once.

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/cluster/node"
	"github.com/kgateway/kgateway/kafka"
	"github.com/kgateway/kgateway/kafka/group"
	"github.com/kgateway/kgateway/kafka/quota"
	"github.com/kgateway/kgateway/kafka/share"
	"github.com/kgateway/kgateway/kafka/streams"
	"github.com/kgateway/kgateway/kafka/telemetry"
	"github.com/kgateway/kgateway/kafka/tenancy"
	"github.com/kgateway/kgateway/kafka/token"
	"github.com/kgateway/kgateway/kafka/txn"
	"github.com/kgateway/kgateway/server"
	"go.uber.org/zap/zapcore"
)

// Config is kgateway's whole configuration. Tags: prop is the property
// name, flag the flag name, help the description (the README's
// configuration reference is generated from them: `kgateway config
// --reference`).
type Config struct {
	Listen         string `prop:"listen" flag:"listen" help:"address to serve the Kafka protocol on: a shorthand for listeners=PLAINTEXT://ADDR"`
	AdvertisedAddr string `prop:"advertised.addr" flag:"advertised-addr" help:"host:port clients of the listen listener are told to dial; empty: the address each client dialed"`

	Listeners           string `prop:"listeners" flag:"listeners" help:"NAME://host:port listeners, comma-separated, e.g. PLAINTEXT://127.0.0.1:9092,SASL_SSL://0.0.0.0:9094; replaces listen"`
	AdvertisedListeners string `prop:"advertised.listeners" flag:"advertised-listeners" help:"NAME://host:port that clients of each listener are told to dial; a listener not named advertises the address each client dialed"`
	ListenerProtocolMap string `prop:"listener.security.protocol.map" flag:"listener-security-protocol-map" help:"NAME:PROTOCOL pairs giving each listener's security protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)"`

	SSLKeystoreType       string `prop:"ssl.keystore.type" flag:"ssl-keystore-type" help:"format of ssl.keystore.location; only PEM"`
	SSLKeystoreLocation   string `prop:"ssl.keystore.location" flag:"ssl-keystore-location" help:"PEM file with the server's private key (unencrypted) and certificate chain, for SSL and SASL_SSL listeners; re-read when it changes or on SIGHUP"`
	SSLTruststoreType     string `prop:"ssl.truststore.type" flag:"ssl-truststore-type" help:"format of ssl.truststore.location; only PEM"`
	SSLTruststoreLocation string `prop:"ssl.truststore.location" flag:"ssl-truststore-location" help:"PEM file of the CA certificates client certificates are verified against"`
	SSLClientAuth         string `prop:"ssl.client.auth" flag:"ssl-client-auth" help:"client certificates: none, requested or required"`
	SSLEnabledProtocols   string `prop:"ssl.enabled.protocols" flag:"ssl-enabled-protocols" help:"TLS versions accepted: TLSv1.2, TLSv1.3"`
	SSLPrincipalRules     string `prop:"ssl.principal.mapping.rules" flag:"ssl-principal-mapping-rules" help:"rules mapping a client certificate's subject to a user name: DEFAULT (the whole subject) or RULE:pattern/replacement/[LU], comma-separated"`
	SSLHandshakeTimeoutMs int64  `prop:"ssl.handshake.timeout.ms" flag:"ssl-handshake-timeout-ms" help:"close a connection whose TLS handshake has not finished after this long"`

	SASLEnabledMechanisms    string `prop:"sasl.enabled.mechanisms" flag:"sasl-enabled-mechanisms" help:"SASL mechanisms of SASL listeners: SCRAM-SHA-256, SCRAM-SHA-512, PLAIN"`
	SASLMaxReceiveSize       int    `prop:"sasl.server.max.receive.size" flag:"sasl-server-max-receive-size" help:"largest frame accepted on a SASL listener before authentication"`
	ConnectionsMaxReauthMs   int64  `prop:"connections.max.reauth.ms" flag:"connections-max-reauth-ms" help:"lifetime of a SASL session; a client must re-authenticate before it ends (KIP-368); 0: sessions never end"`
	FailedAuthDelayMs        int64  `prop:"connection.failed.authentication.delay.ms" flag:"connection-failed-authentication-delay-ms" help:"delay before answering a failed authentication (and closing the connection)"`
	PlainFailuresPerAddr     int    `prop:"sasl.plain.failed.logins.per.address.per.minute" flag:"sasl-plain-failed-logins-per-address-per-minute" help:"PLAIN logins with a wrong password (each costs a PBKDF2 derivation) one client address (an IPv6 /64) may make a minute, a minute's worth at once; beyond it a PLAIN login from there fails without checking the password, answered as a wrong one"`
	PlainFailuresPerUser     int    `prop:"sasl.plain.failed.logins.per.user.per.minute" flag:"sasl-plain-failed-logins-per-user-per-minute" help:"PLAIN logins with a wrong password all addresses together may make a minute as one user, a minute's worth at once; beyond it only addresses that logged in as that user before may try it"`
	DelegationTokenSecretKey string `prop:"delegation.token.secret.key" flag:"delegation-token-secret-key" secret:"true" help:"key of the delegation tokens' HMACs (KIP-48), the same on every node of a cluster; empty: the token APIs answer DELEGATION_TOKEN_AUTH_DISABLED. Changing it voids every token. Not shown by kgateway config; set it in the --config file or the environment rather than a flag, which ps shows"`
	DelegationTokenMasterKey string `prop:"delegation.token.master.key" flag:"delegation-token-master-key" secret:"true" help:"deprecated name of delegation.token.secret.key, used when that is empty"`
	DelegationTokenMaxLifeMs int64  `prop:"delegation.token.max.lifetime.ms" flag:"delegation-token-max-lifetime-ms" help:"a delegation token's longest life, renewals included"`
	DelegationTokenExpiryMs  int64  `prop:"delegation.token.expiry.time.ms" flag:"delegation-token-expiry-time-ms" help:"how long a delegation token lives without renewal, and the longest a renewal extends it"`
	DelegationTokenCheckMs   int64  `prop:"delegation.token.expiry.check.interval.ms" flag:"delegation-token-expiry-check-interval-ms" help:"how often expired delegation tokens are removed from the store (they stop authenticating at once)"`
	DelegationTokensMaxPer   int    `prop:"delegation.tokens.max.per.principal" flag:"delegation-tokens-max-per-principal" help:"delegation tokens one principal may have created that have not expired (beyond: POLICY_VIOLATION)"`
	DelegationTokensMax      int    `prop:"delegation.tokens.max" flag:"delegation-tokens-max" help:"delegation tokens that have not expired, all principals together (beyond: POLICY_VIOLATION)"`
	ScramUsersMax            int    `prop:"scram.users.max" flag:"scram-users-max" help:"users AlterUserScramCredentials may make the credential store hold (a new one beyond: POLICY_VIOLATION); kgateway users is not bounded"`

	AuthorizerClassName  string `prop:"authorizer.class.name" flag:"authorizer-class-name" help:"turns authorization by ACLs on: org.apache.kafka.metadata.authorizer.StandardAuthorizer or kafka.security.authorizer.AclAuthorizer (both select the built-in authorizer); empty: every request is allowed"`
	SuperUsers           string `prop:"super.users" flag:"super-users" help:"principals allowed everything whatever the ACLs, separated by semicolons, e.g. User:admin;User:ops"`
	MaxACLs              int    `prop:"authorizer.max.acls" flag:"authorizer-max-acls" help:"ACLs the authorizer holds (a creation beyond: POLICY_VIOLATION)"`
	AllowEveryoneIfNoACL bool   `prop:"allow.everyone.if.no.acl.found" flag:"allow-everyone-if-no-acl-found" help:"with an authorizer, a resource no ACL applies to is open to every principal"`

	// listenerProps holds listener.name.<name>.<key> settings of the
	// --config file.
	listenerProps map[string]string
	DataDir       string `prop:"data.dir" flag:"data-dir" help:"directory for segment files, the index and group offsets (log.dirs)"`
	MetricsAddr   string `prop:"metrics.addr" flag:"metrics-addr" help:"address of the HTTP server for /metrics, /healthz and /readyz; empty disables it. If the default address is taken the server runs without it (and logs why); an address set explicitly must bind"`
	DebugPprof    bool   `prop:"debug.pprof.enable" flag:"debug-pprof" help:"serve Go's profiler (net/http/pprof) under /debug/pprof/ on the metrics.addr listener; off by default: a profile costs CPU and shows internals, so expose it only on a loopback or trusted address"`

	LogLevel      string `prop:"log.level" flag:"log-level" help:"debug, info, warn or error (debug logs every request): the root logger's level at start; kafka-configs --entity-type broker-loggers changes each logger's at run time"`
	LogFormat     string `prop:"log.format" flag:"log-format" help:"json or console"`
	SlowRequestMs int64  `prop:"slow.request.ms" flag:"slow-request-ms" help:"log requests slower than this at warn, long-poll fetch waits excluded; -1 never"`

	NumPartitions             int   `prop:"num.partitions" flag:"num-partitions" help:"partitions of an auto-created topic"`
	MaxPartitions             int   `prop:"partitions.max" flag:"partitions-max" help:"partitions of all topics together; a topic creation (also automatic) or partition growth beyond is refused with POLICY_VIOLATION"`
	MaxPartitionsPerPrincipal int   `prop:"partitions.max.per.principal" flag:"partitions-max-per-principal" help:"with an authorizer, partitions of the topics one principal created and that still exist; a topic creation (also automatic) or partition growth beyond is refused with POLICY_VIOLATION"`
	AutoCreate                bool  `prop:"auto.create.topics.enable" flag:"auto-create-topics" help:"create unknown topics a Metadata request names (Produce never creates, as in Kafka 4)"`
	MaxRequestBytes           int   `prop:"socket.request.max.bytes" flag:"max-request-bytes" help:"largest request frame accepted"`
	QueuedMaxRequestBytes     int64 `prop:"queued.max.request.bytes" flag:"queued-max-request-bytes" help:"most request bytes received and still needed by their handlers, server-wide (bytes other than record batches count 64 times, for decoding; a request that could never fit closes its connection); beyond it the server stops reading sockets"`
	ConnectionsMaxIdleMs      int64 `prop:"connections.max.idle.ms" flag:"connections-max-idle-ms" help:"close a connection idle this long"`
	MaxConnections            int   `prop:"max.connections" flag:"max-connections" help:"most open connections; more are closed at once"`
	MaxConnectionsPerIP       int   `prop:"max.connections.per.ip" flag:"max-connections-per-ip" help:"most open connections from one IP address; more are closed at once"`
	// MaxConnectionsPerIPOverrides is host:count,host:count.
	MaxConnectionsPerIPOverrides string `prop:"max.connections.per.ip.overrides" flag:"max-connections-per-ip-overrides" help:"per-IP or per-host bounds replacing max.connections.per.ip, e.g. 10.0.0.1:200,hostname:50 (0: no connections)"`
	QuotaWindowNum               int    `prop:"quota.window.num" flag:"quota-window-num" help:"samples client quotas are measured over (kafka-configs --entity-type users, clients, ips)"`
	QuotaWindowSizeSeconds       int    `prop:"quota.window.size.seconds" flag:"quota-window-size-seconds" help:"length of each client quota sample"`
	FetchSessionSlots            int    `prop:"max.incremental.fetch.session.cache.slots" flag:"fetch-session-cache-slots" help:"fetch sessions (KIP-227) kept; 0 disables them"`
	FetchSessionSlotsPer         int    `prop:"max.incremental.fetch.session.cache.slots.per.principal" flag:"fetch-session-cache-slots-per-principal" help:"with an authorizer, fetch sessions one principal may hold (beyond, or in a full cache where it holds as many as any other principal, a full fetch gets no session and is served sessionless)"`
	TelemetryMaxBytes            int    `prop:"telemetry.max.bytes" flag:"telemetry-max-bytes" help:"largest client metrics payload a client may push (KIP-714), compressed or not"`
	FetchMaxBytes                int    `prop:"fetch.max.bytes" flag:"fetch-max-bytes" help:"most record bytes one fetch response carries, whatever the request asks (a first batch larger than this is still returned whole)"`
	FetchSendfile                bool   `prop:"fetch.sendfile.enable" flag:"fetch-sendfile" help:"on plaintext listeners, send record batches read from segment files with sendfile (after their CRCs are checked, as always) instead of from memory; off by default: on the development VM it cost more CPU per GB (BENCHMARKS.md)"`
	TailCacheBytes               int64  `prop:"tail.cache.bytes" flag:"tail-cache-bytes" help:"memory for the newest entries of all partitions together, so that tailing consumers are served without touching the files; 0 disables it"`
	SegmentReuse                 bool   `prop:"log.segment.reuse" flag:"log-segment-reuse" help:"write a partition's next segment over one that retention removed (its fsyncs then need no file-system journal commit), so a partition may hold one removed segment's disk space until it rolls; false frees removed segments at once"`

	// Broker defaults of the topic configs (retention.ms, segment.bytes, ...).
	LogRetentionMs      int64  `prop:"log.retention.ms" flag:"log-retention-ms" help:"default retention.ms of topics; -1 keeps data forever"`
	LogRetentionBytes   int64  `prop:"log.retention.bytes" flag:"log-retention-bytes" help:"default retention.bytes per partition; -1 is no limit"`
	LogSegmentBytes     int64  `prop:"log.segment.bytes" flag:"log-segment-bytes" help:"default segment.bytes: roll a ledger at this size"`
	LogRollMs           int64  `prop:"log.roll.ms" flag:"log-roll-ms" help:"default segment.ms: roll a ledger at this age"`
	MessageMaxBytes     int    `prop:"message.max.bytes" flag:"message-max-bytes" help:"default max.message.bytes: largest record batch"`
	LogTimestampType    string `prop:"log.message.timestamp.type" flag:"log-message-timestamp-type" help:"default message.timestamp.type: CreateTime or LogAppendTime"`
	LogCleanupPolicy    string `prop:"log.cleanup.policy" flag:"log-cleanup-policy" help:"default cleanup.policy: delete, compact or compact,delete"`
	LogRetentionCheckMs int64  `prop:"log.retention.check.interval.ms" flag:"log-retention-check-interval-ms" help:"how often the retention pass runs"`

	// The object tier (tiered storage, KIP-405).
	ObjectStoreURL         string `prop:"object.store.url" flag:"object-store-url" help:"object store that topics with remote.storage.enable=true keep sealed segments in, and that a cluster keeps every partition in, e.g. file:///var/lib/kgateway/objects or s3://bucket?endpoint=http://127.0.0.1:7070&region=us-east-1&use_path_style=true; empty: none"`
	LogLocalRetentionMs    int64  `prop:"log.local.retention.ms" flag:"log-local-retention-ms" help:"default local.retention.ms: how long a tiered topic's uploaded segments stay on local disk; -2 is retention.ms"`
	LogLocalRetentionBytes int64  `prop:"log.local.retention.bytes" flag:"log-local-retention-bytes" help:"default local.retention.bytes: how many bytes of a tiered partition stay on local disk; -2 is retention.bytes"`
	RemoteCopyThreads      int    `prop:"remote.log.manager.copier.thread.pool.size" flag:"remote-log-manager-copier-thread-pool-size" help:"segments uploaded to the object store at once"`
	RemoteCopyBytesPerSec  int64  `prop:"remote.log.manager.copy.max.bytes.per.second" flag:"remote-log-manager-copy-max-bytes-per-second" help:"upload bandwidth to the object store, all uploads together; 0 is no limit"`
	RemoteLogTaskMs        int64  `prop:"remote.log.manager.task.interval.ms" flag:"remote-log-manager-task-interval-ms" help:"how often segments are uploaded, removed locally and deleted remotely"`

	// Cluster mode (clusterflags.go).
	NodeID               int32  `prop:"node.id" flag:"node-id" help:"this node's id, unique in its cluster (Metadata names brokers by it)"`
	ClusterEtcdEndpoints string `prop:"cluster.etcd.endpoints" flag:"cluster-etcd-endpoints" help:"etcd endpoints, comma-separated, e.g. http://127.0.0.1:2379: runs this node as one of a cluster whose partitions live in object.store.url; empty: a single node on local disk"`
	ClusterEtcdPrefix    string `prop:"cluster.etcd.prefix" flag:"cluster-etcd-prefix" help:"prefix of the cluster's keys in etcd (several clusters may share one etcd)"`
	ClusterCommitMs      int64  `prop:"cluster.commit.interval.ms" flag:"cluster-commit-interval-ms" help:"in a cluster, the least time between two group commits (each is one object written and one etcd transaction): longer batches more produce requests into each, at that much more acknowledgement latency"`
	ClusterCommitDepth   int    `prop:"cluster.commit.depth" flag:"cluster-commit-depth" help:"in a cluster, how many group commits may be in flight at once: above 1 the next object is written while the last one is published, in order (more commits, each with fewer records, where a commit takes longer than the interval); 1: one at a time"`
	ClusterSessionMs     int64  `prop:"cluster.session.timeout.ms" flag:"cluster-session-timeout-ms" help:"in a cluster, how long after a node stops renewing its etcd session its partitions are free for other nodes (whole seconds, at least 1000)"`
	ClusterRebuildBytes  int64  `prop:"cluster.cache.rebuild.bytes" flag:"cluster-cache-rebuild-bytes" help:"in a cluster, at most how many bytes of a partition, the newest, a node copies into its local cache when it takes the partition over; older offsets are read from the object store; -1: the whole partition"`
	ClusterStateMs       int64  `prop:"cluster.producer.state.interval.ms" flag:"cluster-producer-state-interval-ms" help:"in a cluster, how often a partition's owner writes the partition's producer and transaction state to the object store while the partition grows; a new owner replays the log only from the last one"`

	// The log cleaner of compacted topics.
	LogCleanerThreads          int     `prop:"log.cleaner.threads" flag:"log-cleaner-threads" help:"partitions cleaned at once; 0 turns the cleaner off"`
	LogCleanerDedupeBufferSize int64   `prop:"log.cleaner.dedupe.buffer.size" flag:"log-cleaner-dedupe-buffer-size" help:"memory of all cleaner threads together for their key maps (24 bytes a key); a partition with more keys takes several passes"`
	LogCleanerIOMaxBytesPerSec float64 `prop:"log.cleaner.io.max.bytes.per.second" flag:"log-cleaner-io-max-bytes-per-second" help:"bytes the cleaner threads together read and write per second"`
	LogCleanerBackoffMs        int64   `prop:"log.cleaner.backoff.ms" flag:"log-cleaner-backoff-ms" help:"how long a cleaner thread sleeps when no partition needs cleaning"`

	// Classic groups (groupflags.go).
	GroupInitialRebalanceDelayMs int64 `prop:"group.initial.rebalance.delay.ms" flag:"group-initial-rebalance-delay-ms" help:"the first rebalance of an empty classic group waits this long for more members, again while they keep joining, up to the rebalance timeout; 0 does not wait"`
	GroupMaxSize                 int   `prop:"group.max.size" flag:"group-max-size" help:"members of one classic or consumer group, joined or joining (beyond: GROUP_MAX_SIZE_REACHED)"`
	GroupMinSessionTimeoutMs     int64 `prop:"group.min.session.timeout.ms" flag:"group-min-session-timeout-ms" help:"smallest session.timeout.ms a classic group member may ask for (INVALID_SESSION_TIMEOUT below)"`
	GroupMaxSessionTimeoutMs     int64 `prop:"group.max.session.timeout.ms" flag:"group-max-session-timeout-ms" help:"largest session.timeout.ms a classic group member may ask for (INVALID_SESSION_TIMEOUT above)"`
	OffsetsRetentionMinutes      int64 `prop:"offsets.retention.minutes" flag:"offsets-retention-minutes" help:"how long a group's committed offsets are kept once the group is empty (or, standalone, since their commit)"`
	GroupsMaxPerPrincipal        int   `prop:"groups.max.per.principal" flag:"groups-max-per-principal" help:"with an authorizer, groups (classic, consumer and share) one principal may create and still have; a request creating one more gets POLICY_VIOLATION"`

	// Consumer groups of the KIP-848 protocol (groupflags.go).
	GroupConsumerSessionTimeoutMs       int64  `prop:"group.consumer.session.timeout.ms" flag:"group-consumer-session-timeout-ms" help:"remove a consumer-protocol group member not heard from for this long (within the min and max session timeouts)"`
	GroupConsumerHeartbeatIntervalMs    int64  `prop:"group.consumer.heartbeat.interval.ms" flag:"group-consumer-heartbeat-interval-ms" help:"how often consumer-protocol members heartbeat (within the min and max heartbeat intervals, below the session timeout)"`
	GroupConsumerMinSessionTimeoutMs    int64  `prop:"group.consumer.min.session.timeout.ms" flag:"group-consumer-min-session-timeout-ms" help:"smallest group.consumer.session.timeout.ms allowed"`
	GroupConsumerMaxSessionTimeoutMs    int64  `prop:"group.consumer.max.session.timeout.ms" flag:"group-consumer-max-session-timeout-ms" help:"largest group.consumer.session.timeout.ms allowed"`
	GroupConsumerMinHeartbeatIntervalMs int64  `prop:"group.consumer.min.heartbeat.interval.ms" flag:"group-consumer-min-heartbeat-interval-ms" help:"smallest group.consumer.heartbeat.interval.ms allowed"`
	GroupConsumerMaxHeartbeatIntervalMs int64  `prop:"group.consumer.max.heartbeat.interval.ms" flag:"group-consumer-max-heartbeat-interval-ms" help:"largest group.consumer.heartbeat.interval.ms allowed"`
	GroupConsumerAssignors              string `prop:"group.consumer.assignors" flag:"group-consumer-assignors" help:"server-side assignors, comma-separated (uniform, range); the first is the default"`
	GroupConsumerMigrationPolicy        string `prop:"group.consumer.migration.policy" flag:"group-consumer-migration-policy" help:"online conversion of a classic group with members to a consumer group when a consumer-protocol member joins, and back when the last one leaves: bidirectional, upgrade, downgrade or disabled"`

	// Streams groups of the KIP-1071 protocol (groupflags.go).
	GroupStreamsSessionTimeoutMs        int64 `prop:"group.streams.session.timeout.ms" flag:"group-streams-session-timeout-ms" help:"remove a streams group member not heard from for this long"`
	GroupStreamsHeartbeatIntervalMs     int64 `prop:"group.streams.heartbeat.interval.ms" flag:"group-streams-heartbeat-interval-ms" help:"how often streams group members heartbeat (below the session timeout)"`
	GroupStreamsNumStandbyReplicas      int   `prop:"group.streams.num.standby.replicas" flag:"group-streams-num-standby-replicas" help:"standby replicas of each stateful task of a streams group"`
	GroupStreamsInitialRebalanceDelayMs int64 `prop:"group.streams.initial.rebalance.delay.ms" flag:"group-streams-initial-rebalance-delay-ms" help:"a new streams group's first task assignment waits this long for more members; 0 does not wait"`

	ProducerIDExpirationMs int64 `prop:"producer.id.expiration.ms" flag:"producer-id-expiration-ms" help:"drop an idempotent producer's state on a partition it has not appended to for this long (a partition also keeps at most 1000 producers, the least recently appended dropped first)"`

	TransactionMaxTimeoutMs       int64 `prop:"transaction.max.timeout.ms" flag:"transaction-max-timeout-ms" help:"largest transaction.timeout.ms a transactional producer may ask for (INVALID_TRANSACTION_TIMEOUT beyond it)"`
	TransactionalIDExpirationMs   int64 `prop:"transactional.id.expiration.ms" flag:"transactional-id-expiration-ms" help:"remove a transactional id that has run no transaction for this long"`
	TransactionAbortTimedOutMs    int64 `prop:"transaction.abort.timed.out.transaction.cleanup.interval.ms" flag:"transaction-abort-timed-out-interval-ms" help:"how often transactions past their timeout are aborted (their producer fenced)"`
	TransactionRemoveExpiredIDMs  int64 `prop:"transaction.remove.expired.transaction.cleanup.interval.ms" flag:"transaction-remove-expired-interval-ms" help:"how often expired transactional ids are removed"`
	TransactionalIDsMax           int   `prop:"transactional.ids.max" flag:"transactional-ids-max" help:"transactional ids kept at once (a new one beyond: POLICY_VIOLATION)"`
	TransactionalIDsMaxPerPrinc   int   `prop:"transactional.ids.max.per.principal" flag:"transactional-ids-max-per-principal" help:"with an authorizer, transactional ids one principal's InitProducerId may create (beyond: POLICY_VIOLATION)"`
	TransactionMaxPartitions      int   `prop:"transaction.max.partitions" flag:"transaction-max-partitions" help:"partitions one transaction may add (beyond: POLICY_VIOLATION)"`
	TransactionMaxGroups          int   `prop:"transaction.max.groups" flag:"transaction-max-groups" help:"consumer groups one transaction may add offsets of (beyond: POLICY_VIOLATION)"`
	TransactionEntriesMax         int   `prop:"transaction.entries.max" flag:"transaction-entries-max" help:"partitions and groups of all transactions together (beyond: POLICY_VIOLATION)"`
	TransactionEntriesMaxPerPrinc int   `prop:"transaction.entries.max.per.principal" flag:"transaction-entries-max-per-principal" help:"with an authorizer, partitions and groups of one principal's transactions together (beyond: POLICY_VIOLATION)"`

	// Share groups (KIP-932), shareflags.go.
	ShareRecordLockDurationMs int64 `prop:"group.share.record.lock.duration.ms" flag:"group-share-record-lock-duration-ms" help:"how long a share-group member holds a record it fetched before it is delivered to another (a group's share.record.lock.duration.ms overrides it)"`
	ShareDeliveryCountLimit   int   `prop:"group.share.delivery.count.limit" flag:"group-share-delivery-count-limit" help:"deliveries of a record to share-group members before it is archived"`
	ShareMaxRecordLocks       int   `prop:"group.share.partition.max.record.locks" flag:"group-share-partition-max-record-locks" help:"records in flight (acquired or waiting for acknowledgement) per share-partition"`
	ShareSessionTimeoutMs     int64 `prop:"group.share.session.timeout.ms" flag:"group-share-session-timeout-ms" help:"a share-group member that sends no heartbeat for this long is removed"`
	ShareHeartbeatIntervalMs  int64 `prop:"group.share.heartbeat.interval.ms" flag:"group-share-heartbeat-interval-ms" help:"the heartbeat interval share-group members are told"`
	ShareMaxSize              int   `prop:"group.share.max.size" flag:"group-share-max-size" help:"members of one share group"`
	ShareMaxSessions          int   `prop:"group.share.max.share.sessions" flag:"group-share-max-share-sessions" help:"share sessions open at once, over all share groups"`
	ShareMaxSessionsPerPrinc  int   `prop:"group.share.max.share.sessions.per.principal" flag:"group-share-max-share-sessions-per-principal" help:"with an authorizer, share sessions one principal may hold open (beyond: SHARE_SESSION_LIMIT_REACHED)"`
	ShareMaxSessionsPerConn   int   `prop:"group.share.max.share.sessions.per.connection" flag:"group-share-max-share-sessions-per-connection" help:"share sessions one connection may hold open (beyond: SHARE_SESSION_LIMIT_REACHED)"`
}

// minFrameBytes is the smallest sasl.server.max.receive.size accepted.
const minFrameBytes = 64

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		Listen:                     "127.0.0.1:9092",
		ListenerProtocolMap:        "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
		SSLKeystoreType:            "PEM",
		SSLTruststoreType:          "PEM",
		SSLClientAuth:              "none",
		SSLEnabledProtocols:        "TLSv1.2,TLSv1.3",
		SSLPrincipalRules:          "DEFAULT",
		SSLHandshakeTimeoutMs:      kafka.DefaultTLSHandshakeTimeout.Milliseconds(),
		SASLEnabledMechanisms:      strings.Join(kafka.DefaultSASLMechanisms, ","),
		SASLMaxReceiveSize:         kafka.DefaultSASLMaxReceiveSize,
		FailedAuthDelayMs:          kafka.DefaultFailedAuthDelay.Milliseconds(),
		PlainFailuresPerAddr:       auth.DefaultFailuresPerAddress,
		PlainFailuresPerUser:       auth.DefaultFailuresPerUser,
		ScramUsersMax:              kafka.DefaultMaxUsers,
		DelegationTokenMaxLifeMs:   token.DefaultMaxLifetime.Milliseconds(),
		DelegationTokenExpiryMs:    token.DefaultExpiryTime.Milliseconds(),
		DelegationTokenCheckMs:     token.DefaultExpiryCheck.Milliseconds(),
		DelegationTokensMaxPer:     token.DefaultMaxPerPrincipal,
		DelegationTokensMax:        token.DefaultMax,
		DataDir:                    "./data",
		MetricsAddr:                "127.0.0.1:9644",
		LogLevel:                   "info",
		LogFormat:                  "json",
		SlowRequestMs:              kafka.DefaultSlowRequest.Milliseconds(),
		NumPartitions:              1,
		AutoCreate:                 true,
		MaxRequestBytes:            kafka.DefaultMaxRequestBytes,
		QueuedMaxRequestBytes:      kafka.DefaultQueuedMaxRequestBytes,
		ConnectionsMaxIdleMs:       kafka.DefaultConnectionsMaxIdle.Milliseconds(),
		MaxConnections:             kafka.DefaultMaxConnections,
		MaxConnectionsPerIP:        math.MaxInt32,
		QuotaWindowNum:             quota.DefaultWindow.Samples,
		QuotaWindowSizeSeconds:     int(quota.DefaultWindow.SizeMs / 1000),
		FetchSessionSlots:          kafka.DefaultFetchSessionCacheSlots,
		TelemetryMaxBytes:          telemetry.DefaultMaxBytes,
		FetchMaxBytes:              kafka.DefaultFetchMaxBytes,
		TailCacheBytes:             server.DefaultTailCacheBytes,
		SegmentReuse:               true,
		LogRetentionMs:             7 * 24 * 3600 * 1000,
		LogRetentionBytes:          -1,
		LogSegmentBytes:            1 << 30,
		LogRollMs:                  7 * 24 * 3600 * 1000,
		MessageMaxBytes:            1048588,
		LogTimestampType:           "CreateTime",
		LogCleanupPolicy:           "delete",
		LogCleanerThreads:          1,
		LogCleanerDedupeBufferSize: 128 << 20,
		LogCleanerIOMaxBytesPerSec: math.MaxFloat64,
		LogCleanerBackoffMs:        15000,
		LogRetentionCheckMs:        300000,
		LogLocalRetentionMs:        -2,
		LogLocalRetentionBytes:     -2,
		RemoteLogTaskMs:            30000,
		RemoteCopyThreads:          10,
		ProducerIDExpirationMs:     86400000,
		ClusterEtcdPrefix:          node.DefaultPrefix,
		ClusterCommitMs:            5,
		ClusterCommitDepth:         node.DefaultCommitDepth,
		ClusterSessionMs:           node.DefaultSessionTimeout.Milliseconds(),
		ClusterRebuildBytes:        node.DefaultCacheRebuildBytes,
		ClusterStateMs:             node.DefaultStateInterval.Milliseconds(),

		GroupInitialRebalanceDelayMs:        group.DefaultInitialRebalanceDelay.Milliseconds(),
		GroupConsumerSessionTimeoutMs:       group.DefaultConsumerSessionTimeout.Milliseconds(),
		GroupConsumerHeartbeatIntervalMs:    group.DefaultConsumerHeartbeatInterval.Milliseconds(),
		GroupConsumerAssignors:              strings.Join(group.DefaultConsumerAssignors, ","),
		GroupConsumerMigrationPolicy:        group.MigrationBidirectional,
		GroupConsumerMinSessionTimeoutMs:    group.DefaultConsumerMinSessionTimeout.Milliseconds(),
		GroupConsumerMaxSessionTimeoutMs:    group.DefaultConsumerMaxSessionTimeout.Milliseconds(),
		GroupConsumerMinHeartbeatIntervalMs: group.DefaultConsumerMinHeartbeatInterval.Milliseconds(),
		GroupConsumerMaxHeartbeatIntervalMs: group.DefaultConsumerMaxHeartbeatInterval.Milliseconds(),
		GroupStreamsSessionTimeoutMs:        streams.DefaultSessionTimeout.Milliseconds(),
		GroupStreamsHeartbeatIntervalMs:     streams.DefaultHeartbeatInterval.Milliseconds(),
		GroupStreamsInitialRebalanceDelayMs: streams.DefaultInitialDelay.Milliseconds(),

		TransactionMaxTimeoutMs:       txn.DefaultMaxTimeout.Milliseconds(),
		TransactionalIDExpirationMs:   txn.DefaultIDExpiration.Milliseconds(),
		TransactionAbortTimedOutMs:    txn.DefaultAbortTimedOutInterval.Milliseconds(),
		TransactionRemoveExpiredIDMs:  txn.DefaultRemoveExpiredInterval.Milliseconds(),
		TransactionalIDsMax:           txn.DefaultMaxTransactionalIDs,
		TransactionalIDsMaxPerPrinc:   txn.DefaultMaxTransactionalIDsPerPrincipal,
		TransactionMaxPartitions:      txn.DefaultMaxPartitionsPerTxn,
		TransactionMaxGroups:          txn.DefaultMaxGroupsPerTxn,
		TransactionEntriesMax:         txn.DefaultMaxHeldEntries,
		TransactionEntriesMaxPerPrinc: txn.DefaultMaxHeldEntriesPerPrincipal,
		ShareMaxSessionsPerPrinc:      share.DefaultMaxShareSessionsPerPrincipal,
		ShareMaxSessionsPerConn:       share.DefaultMaxShareSessionsPerConnection,
		FetchSessionSlotsPer:          kafka.DefaultFetchSessionCacheSlotsPerPrincipal,
		MaxPartitions:                 kafka.DefaultMaxPartitions,
		MaxPartitionsPerPrincipal:     kafka.DefaultMaxPartitionsPerPrincipal,
		GroupMaxSize:                  group.DefaultMaxGroupSize,
		GroupMinSessionTimeoutMs:      group.DefaultMinSessionTimeout.Milliseconds(),
		GroupMaxSessionTimeoutMs:      group.DefaultMaxSessionTimeout.Milliseconds(),
		OffsetsRetentionMinutes:       int64(server.DefaultOffsetsRetention.Minutes()),
		GroupsMaxPerPrincipal:         tenancy.DefaultGroupsPerPrincipal,
		MaxACLs:                       auth.DefaultMaxACLs,
		ShareRecordLockDurationMs:     share.DefaultRecordLockDuration.Milliseconds(),
		ShareDeliveryCountLimit:       share.DefaultDeliveryCountLimit,
		ShareMaxRecordLocks:           share.DefaultPartitionMaxRecordLocks,
		ShareSessionTimeoutMs:         share.DefaultSessionTimeout.Milliseconds(),
		ShareHeartbeatIntervalMs:      share.DefaultHeartbeatInterval.Milliseconds(),
		ShareMaxSize:                  share.DefaultMaxSize,
		ShareMaxSessions:              share.DefaultMaxShareSessions,
	}
}

// field is one Config field's names.
type field struct {
	index      int
	prop, flag string
	env        string
	help       string
	kind       reflect.Kind
	secret     bool // not shown by kgateway config
}

// fields lists Config's fields in declaration order.
var fields = func() []field {
	t := reflect.TypeOf(Config{})
	out := make([]field, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		prop := f.Tag.Get("prop")
		if prop == "" {
			continue // not a setting (listenerProps)
		}
		out = append(out, field{index: i, prop: prop, flag: f.Tag.Get("flag"), help: f.Tag.Get("help"),
			env: "KGATEWAY_" + strings.ToUpper(strings.ReplaceAll(prop, ".", "_")), kind: f.Type.Kind(),
			secret: f.Tag.Get("secret") == "true"})
	}
	return out
}()

func fieldByProp(prop string) (field, bool) {
	i := slices.IndexFunc(fields, func(f field) bool { return f.prop == prop })
	if i < 0 {
		return field{}, false
	}
	return fields[i], true
}

// set parses s into the field.
func (c *Config) set(f field, s string) error {
	v := reflect.ValueOf(c).Elem().Field(f.index)
	switch f.kind {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("not a boolean: %q", s)
		}
		v.SetBool(b)
	case reflect.Float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return fmt.Errorf("not a number: %q", s)
		}
		v.SetFloat(f)
	case reflect.Int, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("not an integer: %q", s)
		}
		v.SetInt(n)
	default:
		return fmt.Errorf("unsupported kind %v", f.kind)
	}
	return nil
}

// get formats the field's value.
func (c *Config) get(f field) string {
	return fmt.Sprint(reflect.ValueOf(c).Elem().Field(f.index).Interface())
}

// Sources records where each property's value came from.
type Sources map[string]string

// loaded is a configuration with where each value came from.
type loaded struct {
	cfg     Config
	sources Sources
	args    []string        // positional arguments after the flags
	extra   map[string]bool // the command's own switches (--reference, --markdown)
	users   usersOpts       // the users command's words and flags
	stdin   io.Reader       // where users add reads a password by default
	// unknownEnv names the KGATEWAY_* variables that are no setting: a
	// warning, not an error, because a Kubernetes Service named kgateway
	// injects KGATEWAY_PORT, KGATEWAY_SERVICE_HOST, … into every pod.
	unknownEnv []string
}

// load builds the configuration from defaults, the --config file, the
// environment (env) and the flags in args, in that order of precedence
// (lowest first). Every problem is reported at once.
func load(name string, args []string, env []string, stderr io.Writer) (loaded, error) {
	l := loaded{cfg: DefaultConfig(), sources: Sources{}}
	for _, f := range fields {
		l.sources[f.prop] = "default"
	}
	fs, flagVals, cfgFile := newFlagSet(name, stderr)
	if err := fs.Parse(args); err != nil {
		return l, err
	}
	l.args = fs.Args()
	var errs []error
	if *cfgFile != "" {
		errs = append(errs, l.applyFile(*cfgFile)...)
	}
	errs = append(errs, l.applyEnv(env)...)
	fs.Visit(func(fl *flag.Flag) {
		f, ok := flagVals[fl.Name]
		if !ok {
			return
		}
		if err := l.cfg.set(f, fl.Value.String()); err != nil {
			errs = append(errs, fmt.Errorf("--%s: %w", f.flag, err))
			return
		}
		l.sources[f.prop] = "flag --" + f.flag
	})
	// listeners replaces the listen shorthand: both set is a mistake.
	if l.cfg.Listeners != "" {
		for _, p := range []string{"listen", "advertised.addr"} {
			if l.sources[p] != "default" {
				errs = append(errs, fmt.Errorf("%s (%s) and listeners are both set: listeners replaces it", p, l.sources[p]))
			}
		}
	}
	// Validate even after parse errors: every problem at once.
	errs = append(errs, l.cfg.Validate())
	return l, errors.Join(errs...)
}

// applyFile reads a server.properties-style file: key=value lines, # or !
// comments, blank lines ignored.
func (l *loaded) applyFile(path string) []error {
	fh, err := os.Open(path)
	if err != nil {
		return []error{fmt.Errorf("--config: %w", err)}
	}
	defer fh.Close()
	var errs []error
	sc := bufio.NewScanner(fh)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		where := fmt.Sprintf("%s:%d", path, n)
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			errs = append(errs, fmt.Errorf("%s: expected key=value, got %q", where, line))
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		f, ok := fieldByProp(k)
		if !ok && strings.HasPrefix(k, "listener.name.") {
			if l.cfg.listenerProps == nil {
				l.cfg.listenerProps = map[string]string{}
			}
			l.cfg.listenerProps[k] = v // checked by validateListeners
			continue
		}
		if !ok {
			errs = append(errs, fmt.Errorf("%s: unknown property %q", where, k))
			continue
		}
		if err := l.cfg.set(f, v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %w", where, k, err))
			continue
		}
		l.sources[f.prop] = "file " + where
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("--config: %w", err))
	}
	return errs
}

// applyEnv applies KGATEWAY_* variables. An unknown one is only recorded
// (l.unknownEnv, logged as a warning): the variables Kubernetes injects for
// a Service named kgateway share the prefix. A known variable with a bad
// value is an error.
func (l *loaded) applyEnv(env []string) []error {
	var errs []error
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "KGATEWAY_") {
			continue
		}
		i := slices.IndexFunc(fields, func(f field) bool { return f.env == k })
		if i < 0 {
			l.unknownEnv = append(l.unknownEnv, k)
			continue
		}
		if err := l.cfg.set(fields[i], v); err != nil {
			errs = append(errs, fmt.Errorf("environment: %s: %w", k, err))
			continue
		}
		l.sources[fields[i].prop] = "env " + k
	}
	return errs
}

// Validate reports every problem at once. Problems name the flag (and the
// property) so that whichever way the value was given, it can be found.
func (c Config) Validate() error {
	var errs []error
	bad := func(prop, format string, args ...any) {
		f, _ := fieldByProp(prop)
		errs = append(errs, fmt.Errorf("--%s (%s): %s", f.flag, prop, fmt.Sprintf(format, args...)))
	}
	if c.DataDir == "" {
		bad("data.dir", "is empty")
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil && c.Listeners == "" {
		bad("listen", "%v", err)
	}
	if err := c.validateListeners(); err != nil {
		errs = append(errs, err)
	}
	c.validateSecurity(bad)
	c.validateServing(bad)
	c.validateLimits(bad)
	errs = append(errs, c.validateLog(bad)...)
	c.validateCluster(bad)
	errs = append(errs, c.validateTxn(bad)...)
	errs = append(errs, c.validateGroup(bad)...)
	errs = append(errs, c.validateShare(bad)...)
	return errors.Join(errs...)
}

// validateSecurity checks the authentication and authorization settings.
func (c Config) validateSecurity(bad func(prop, format string, args ...any)) {
	if err := auth.CheckMechanisms(splitList(c.SASLEnabledMechanisms)); err != nil {
		bad("sasl.enabled.mechanisms", "%v", err)
	}
	if _, err := auth.NewPrincipalMapper(c.SSLPrincipalRules); err != nil {
		bad("ssl.principal.mapping.rules", "%v", err)
	}
	if c.SSLHandshakeTimeoutMs < 1 {
		bad("ssl.handshake.timeout.ms", "%d must be positive", c.SSLHandshakeTimeoutMs)
	}
	if err := auth.CheckAuthorizerClass(c.AuthorizerClassName); err != nil {
		bad("authorizer.class.name", "%v", err)
	}
	if _, err := auth.ParseSuperUsers(c.SuperUsers); err != nil {
		bad("super.users", "%v", err)
	}
	if c.ConnectionsMaxReauthMs < 0 {
		bad("connections.max.reauth.ms", "%d must not be negative", c.ConnectionsMaxReauthMs)
	}
	if c.FailedAuthDelayMs < 0 {
		bad("connection.failed.authentication.delay.ms", "%d must not be negative", c.FailedAuthDelayMs)
	}
	if c.PlainFailuresPerAddr < 1 {
		bad("sasl.plain.failed.logins.per.address.per.minute", "%d is below 1", c.PlainFailuresPerAddr)
	}
	if c.PlainFailuresPerUser < 1 {
		bad("sasl.plain.failed.logins.per.user.per.minute", "%d is below 1", c.PlainFailuresPerUser)
	}
	if c.SASLMaxReceiveSize < minFrameBytes {
		bad("sasl.server.max.receive.size", "%d is below %d", c.SASLMaxReceiveSize, minFrameBytes)
	}
}

// validateServing checks the logging, metrics and per-connection settings.
func (c Config) validateServing(bad func(prop, format string, args ...any)) {
	if c.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			bad("metrics.addr", "%v", err)
		}
	}
	if _, err := zapcore.ParseLevel(c.LogLevel); err != nil {
		bad("log.level", "%v", err)
	}
	if c.LogFormat != "json" && c.LogFormat != "console" {
		bad("log.format", "%q is not json or console", c.LogFormat)
	}
	if c.SlowRequestMs < -1 || c.SlowRequestMs == 0 {
		bad("slow.request.ms", "%d must be -1 or at least 1", c.SlowRequestMs)
	}
	if c.NumPartitions < 1 || c.NumPartitions > 1<<20 {
		bad("num.partitions", "%d out of range [1, %d]", c.NumPartitions, 1<<20)
	}
	if c.MaxRequestBytes < 1 || c.MaxRequestBytes > 1<<30 {
		bad("socket.request.max.bytes", "%d out of range [1, %d]", c.MaxRequestBytes, 1<<30)
	}
	if c.QueuedMaxRequestBytes < int64(c.MaxRequestBytes) {
		bad("queued.max.request.bytes", "%d is below socket.request.max.bytes %d", c.QueuedMaxRequestBytes, c.MaxRequestBytes)
	}
	if c.ConnectionsMaxIdleMs < 1 {
		bad("connections.max.idle.ms", "%d must be positive", c.ConnectionsMaxIdleMs)
	}
	if c.MaxConnections < 1 {
		bad("max.connections", "%d must be positive", c.MaxConnections)
	}
	if c.TelemetryMaxBytes < 1 || c.TelemetryMaxBytes > math.MaxInt32 {
		bad("telemetry.max.bytes", "%d out of range [1, %d]", c.TelemetryMaxBytes, math.MaxInt32)
	}
	if c.MaxConnectionsPerIP < 0 {
		bad("max.connections.per.ip", "%d must not be negative", c.MaxConnectionsPerIP)
	}
	if _, err := ipOverrides(c.MaxConnectionsPerIPOverrides); err != nil {
		bad("max.connections.per.ip.overrides", "%v", err)
	}
}

// validateLimits checks the quotas and the bounds on what clients grow.
func (c Config) validateLimits(bad func(prop, format string, args ...any)) {
	if c.QuotaWindowNum < 2 {
		bad("quota.window.num", "%d must be at least 2", c.QuotaWindowNum)
	}
	if c.QuotaWindowSizeSeconds < 1 {
		bad("quota.window.size.seconds", "%d must be positive", c.QuotaWindowSizeSeconds)
	}
	if c.TailCacheBytes < 0 {
		bad("tail.cache.bytes", "%d must not be negative", c.TailCacheBytes)
	}
	if c.FetchMaxBytes < kafka.MinFetchMaxBytes || c.FetchMaxBytes > math.MaxInt32 {
		bad("fetch.max.bytes", "%d out of range [%d, %d]", c.FetchMaxBytes, kafka.MinFetchMaxBytes, math.MaxInt32)
	}
	if c.FetchSessionSlotsPer < 1 {
		bad("max.incremental.fetch.session.cache.slots.per.principal", "%d must be at least 1", c.FetchSessionSlotsPer)
	}
	if c.MaxPartitions < 1 {
		bad("partitions.max", "%d must be at least 1", c.MaxPartitions)
	}
	if c.MaxPartitionsPerPrincipal < 1 {
		bad("partitions.max.per.principal", "%d must be at least 1", c.MaxPartitionsPerPrincipal)
	}
	if c.ScramUsersMax < 1 {
		bad("scram.users.max", "%d must be at least 1", c.ScramUsersMax)
	}
	if c.DelegationTokenMaxLifeMs < 1 || c.DelegationTokenExpiryMs < 1 || c.DelegationTokenCheckMs < 1 {
		bad("delegation.token.max.lifetime.ms", "%d, delegation.token.expiry.time.ms %d and delegation.token.expiry.check.interval.ms %d must be at least 1",
			c.DelegationTokenMaxLifeMs, c.DelegationTokenExpiryMs, c.DelegationTokenCheckMs)
	}
	if c.DelegationTokensMaxPer < 1 || c.DelegationTokensMax < c.DelegationTokensMaxPer {
		bad("delegation.tokens.max.per.principal", "%d must be at least 1 and at most delegation.tokens.max %d", c.DelegationTokensMaxPer, c.DelegationTokensMax)
	}
	if c.GroupsMaxPerPrincipal < 1 {
		bad("groups.max.per.principal", "%d must be at least 1", c.GroupsMaxPerPrincipal)
	}
	if c.MaxACLs < 1 {
		bad("authorizer.max.acls", "%d must be at least 1", c.MaxACLs)
	}
	if c.FetchSessionSlots < 0 {
		bad("max.incremental.fetch.session.cache.slots", "%d must not be negative", c.FetchSessionSlots)
	}
}

// ipOverrides parses max.connections.per.ip.overrides: host:count pairs
// separated by commas (Kafka's format).
func ipOverrides(v string) (map[string]int, error) {
	out := map[string]int{}
	for _, pair := range splitList(v) {
		i := strings.LastIndex(pair, ":")
		if i <= 0 {
			return nil, fmt.Errorf("%q is not host:count", pair)
		}
		n, err := strconv.Atoi(strings.TrimSpace(pair[i+1:]))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q: the count must be a non-negative integer", pair)
		}
		out[strings.TrimSpace(pair[:i])] = n
	}
	return out, nil
}

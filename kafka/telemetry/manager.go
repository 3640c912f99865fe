package telemetry

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
)

// DefaultMaxBytes is telemetry.max.bytes' default: the largest metrics
// payload a client may push, compressed or not.
const DefaultMaxBytes = 1 << 20

const (
	// maxInstances bounds the client instances remembered (Kafka's cache
	// of 16384): past it the least recently seen is forgotten.
	maxInstances = 16384
	// minExpiry is how long an instance is remembered without a request
	// at least; longer for a long push interval (three of them).
	minExpiry = time.Minute
)

// AcceptedCompression is the codecs a client may compress its metrics
// with, in the broker's order of preference (Kafka's: zstd, lz4, gzip,
// snappy); a client takes the first it supports.
var AcceptedCompression = []int8{int8(resolver.CodecZstd), int8(resolver.CodecLZ4), int8(resolver.CodecGzip), int8(resolver.CodecSnappy)}

// Options configures a Manager.
type Options struct {
	// MaxBytes is telemetry.max.bytes (0: DefaultMaxBytes).
	MaxBytes int32
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Sink receives the decoded metrics of every accepted push (nil:
	// they are validated and dropped).
	Sink *Sink
}

// Manager serves GetTelemetrySubscriptions and PushTelemetry (KIP-714)
// as Kafka's ClientMetricsManager does: it assigns client instance ids,
// matches each client instance to the subscriptions of the Store, and
// checks every push against what the instance was told.
//
// Invariants:
//   - An instance's subscription (metrics, interval, id) is computed when
//     it is first seen and again at its first request after the set of
//     subscriptions changed; then its request times start afresh.
//   - A GetTelemetrySubscriptions sooner than the push interval after the
//     instance's last request is THROTTLING_QUOTA_EXCEEDED, unless its
//     last push failed with UNKNOWN_SUBSCRIPTION_ID or
//     UNSUPPORTED_COMPRESSION_TYPE (it must re-subscribe at once).
//   - A push is accepted once per push interval, and once at any time
//     after a GetTelemetrySubscriptions (the client jitters its
//     interval); a terminating push is never throttled, and nothing is
//     accepted after one.
type Manager struct {
	store    *Store
	sink     *Sink
	maxBytes int32
	now      func() time.Time

	mu        sync.Mutex
	instances map[[16]byte]*instance
	swept     time.Time // the last expiry sweep
}

// instance is one client instance's state (Kafka's ClientMetricsInstance).
type instance struct {
	client     Client
	principal  string
	subID      int32
	subVersion int64
	metrics    []string
	intervalMs int32
	lastGet    int64 // unix ms of the last accepted request of each kind
	lastPush   int64
	lastSeen   time.Time
	terminated bool
	lastErr    int16
}

// NewManager returns a manager over store's subscriptions.
func NewManager(store *Store, o Options) *Manager {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Manager{store: store, sink: o.Sink, maxBytes: o.MaxBytes, now: o.Now, instances: map[[16]byte]*instance{}}
}

// Store is the manager's subscription store.
func (m *Manager) Store() *Store { return m.store }

// Sink is where pushed metrics go (nil: nowhere).
func (m *Manager) Sink() *Sink { return m.sink }

// Subscription is a GetTelemetrySubscriptions answer.
type SubscriptionAnswer struct {
	InstanceID  [16]byte
	ID          int32
	Metrics     []string
	IntervalMs  int32
	MaxBytes    int32
	Compression []int8
	// DeltaTemporality asks for sums and histograms as deltas since the
	// previous push, as Kafka does.
	DeltaTemporality bool
}

// GetSubscriptions answers a GetTelemetrySubscriptions of client (whose
// InstanceID is ignored): requested is the request's instance id, the
// zero id asking for a new one. Errors wrap kerr's.
func (m *Manager) GetSubscriptions(requested [16]byte, client Client, principal string) (SubscriptionAnswer, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	id := requested
	if id == ([16]byte{}) {
		id = m.newInstanceID()
	}
	in := m.instance(id, client, principal, now)
	ms := now.UnixMilli()
	if ms-max(in.lastGet, in.lastPush) >= int64(in.intervalMs) {
		in.lastGet = ms
	} else if in.lastErr != kerr.UnknownSubscriptionID.Code && in.lastErr != kerr.UnsupportedCompressionType.Code {
		return SubscriptionAnswer{}, fmt.Errorf("%w: request from the client %s arrived before the next push interval time", kerr.ThrottlingQuotaExceeded, uuidString(id))
	}
	in.lastErr = 0
	return SubscriptionAnswer{
		InstanceID: id, ID: in.subID, Metrics: slices.Clone(in.metrics), IntervalMs: in.intervalMs,
		MaxBytes: m.maxBytes, Compression: slices.Clone(AcceptedCompression), DeltaTemporality: true,
	}, nil
}

// Push is one PushTelemetry request.
type Push struct {
	InstanceID     [16]byte
	SubscriptionID int32
	Terminating    bool
	Compression    int8
	Metrics        []byte
}

// Push checks and takes one PushTelemetry: INVALID_REQUEST for a reserved
// instance id or after a terminating push, THROTTLING_QUOTA_EXCEEDED
// before the push interval, UNKNOWN_SUBSCRIPTION_ID for another
// subscription id than the instance's, UNSUPPORTED_COMPRESSION_TYPE for
// an unknown codec, TELEMETRY_TOO_LARGE for a payload over
// telemetry.max.bytes (compressed or decompressed), INVALID_RECORD for
// one that does not decode. Accepted metrics go to the Sink.
func (m *Manager) Push(p Push, client Client, principal string) error {
	if p.InstanceID == ([16]byte{}) || p.InstanceID == oneUUID {
		return fmt.Errorf("%w: invalid client instance id %s", kerr.InvalidRequest, uuidString(p.InstanceID))
	}
	now := m.now()
	m.mu.Lock()
	in := m.instance(p.InstanceID, client, principal, now)
	err := m.checkPush(in, p, now.UnixMilli())
	in.terminated = in.terminated || p.Terminating
	in.lastErr = errCode(err)
	info, interval := in.client, in.intervalMs
	m.mu.Unlock()
	if err != nil || len(p.Metrics) == 0 {
		return err
	}
	err = m.export(p, info, principal, interval, now)
	m.mu.Lock()
	if cur := m.instances[p.InstanceID]; cur != nil {
		cur.lastErr = errCode(err)
	}
	m.mu.Unlock()
	return err
}

func (m *Manager) checkPush(in *instance, p Push, ms int64) error {
	id := uuidString(p.InstanceID)
	if in.terminated {
		return fmt.Errorf("%w: client %s sent a terminating push before: no more are accepted", kerr.InvalidRequest, id)
	}
	accept := in.lastGet > in.lastPush || ms-in.lastPush >= int64(in.intervalMs)
	if accept {
		in.lastPush = ms
	} else if !p.Terminating {
		return fmt.Errorf("%w: request from the client %s arrived before the next push interval time", kerr.ThrottlingQuotaExceeded, id)
	}
	if p.SubscriptionID != in.subID {
		return fmt.Errorf("%w: unknown client subscription id for the client %s", kerr.UnknownSubscriptionID, id)
	}
	if p.Compression < 0 || p.Compression > int8(resolver.CodecZstd) {
		return fmt.Errorf("%w: unknown compression type %d from %s", kerr.UnsupportedCompressionType, p.Compression, id)
	}
	if len(p.Metrics) > int(m.maxBytes) {
		return fmt.Errorf("%w: telemetry request from %s is larger than the maximum allowed size %d", kerr.TelemetryTooLarge, id, m.maxBytes)
	}
	return nil
}

// export decompresses and decodes the payload and hands it to the sink.
func (m *Manager) export(p Push, client Client, principal string, intervalMs int32, now time.Time) error {
	data, err := resolver.Decompress(resolver.Codec(p.Compression), p.Metrics, int64(m.maxBytes))
	if resolver.IsDecompressedTooLarge(err) {
		return fmt.Errorf("%w: decompressed telemetry is larger than %d bytes", kerr.TelemetryTooLarge, m.maxBytes)
	}
	if err != nil {
		return fmt.Errorf("%w: telemetry payload: %v", kerr.InvalidRecord, err)
	}
	md, err := DecodeMetrics(data)
	if err != nil {
		return fmt.Errorf("%w: telemetry payload: %v", kerr.InvalidRecord, err)
	}
	if m.sink != nil {
		m.sink.Record(client, principal, md, expiryFor(intervalMs), now)
		if p.Terminating {
			m.sink.Forget(client.InstanceID)
		}
	}
	return nil
}

// instance returns the instance id's state, created or re-evaluated
// against the current subscriptions as needed. Called with mu held.
func (m *Manager) instance(id [16]byte, client Client, principal string, now time.Time) *instance {
	subs, version := m.store.Snapshot()
	in := m.instances[id]
	if in == nil || in.subVersion != version {
		if in != nil {
			client, principal = in.client, in.principal // Kafka keeps the first request's metadata
		}
		client.InstanceID = uuidString(id)
		in = newInstance(id, client, subs, version)
		in.principal = principal
		m.instances[id] = in
	}
	in.lastSeen = now
	m.expire(now)
	return in
}

// expire forgets instances not seen for their expiry (a sweep at most
// once a second), and the least recently seen while there are too many.
// Called with mu held.
func (m *Manager) expire(now time.Time) {
	if now.Sub(m.swept) >= time.Second {
		m.sweep(now)
	}
	for len(m.instances) > maxInstances {
		var oldest [16]byte
		var at time.Time
		for id, in := range m.instances {
			if at.IsZero() || in.lastSeen.Before(at) {
				oldest, at = id, in.lastSeen
			}
		}
		m.forget(oldest)
	}
}

func (m *Manager) sweep(now time.Time) {
	m.swept = now
	for id, in := range m.instances {
		if now.Sub(in.lastSeen) > expiryFor(in.intervalMs) {
			m.forget(id)
		}
	}
}

// forget drops an instance and its exposed metrics. Called with mu held.
func (m *Manager) forget(id [16]byte) {
	if in := m.instances[id]; in != nil && m.sink != nil {
		m.sink.Forget(in.client.InstanceID)
	}
	delete(m.instances, id)
}

// Instances is how many client instances are remembered.
func (m *Manager) Instances() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.instances)
}

func expiryFor(intervalMs int32) time.Duration {
	return max(minExpiry, 3*time.Duration(intervalMs)*time.Millisecond)
}

// newInstance computes a client instance's subscription: the union of the
// metrics of every subscription it matches ("*" alone if one of them has
// it), the shortest of their intervals (the default if none matches), and
// the id of that pair.
func newInstance(id [16]byte, client Client, subs map[string]Subscription, version int64) *instance {
	interval := int32(DefaultIntervalMs)
	var metrics []string
	all := false
	for _, name := range sortedKeys(subs) {
		s := subs[name]
		if !s.Matches(client) {
			continue
		}
		interval = min(interval, s.IntervalMs)
		for _, mt := range s.Metrics {
			all = all || mt == AllMetrics
			if !slices.Contains(metrics, mt) {
				metrics = append(metrics, mt)
			}
		}
	}
	if all {
		metrics = []string{AllMetrics}
	}
	slices.Sort(metrics)
	return &instance{client: client, subVersion: version, metrics: metrics, intervalMs: interval,
		subID: subscriptionID(metrics, interval, id)}
}

// subscriptionID identifies a subscription (metrics and interval) for one
// instance, as Kafka's: CRC32C of the metrics and the interval, XOR a hash
// of the instance id.
func subscriptionID(metrics []string, intervalMs int32, id [16]byte) int32 {
	crc := crc32.Checksum([]byte("["+strings.Join(metrics, ", ")+"]"+fmt.Sprint(intervalMs)), crc32.MakeTable(crc32.Castagnoli))
	h := binary.BigEndian.Uint64(id[:8]) ^ binary.BigEndian.Uint64(id[8:])
	return int32(crc) ^ int32(h^(h>>32))
}

// newInstanceID is a random id no remembered instance has, never one of
// the reserved ids (zero, one). Called with mu held.
func (m *Manager) newInstanceID() [16]byte {
	for {
		var id [16]byte
		rand.Read(id[:])
		if _, taken := m.instances[id]; !taken && id != ([16]byte{}) && id != oneUUID {
			return id
		}
	}
}

var oneUUID = [16]byte{15: 1}

func errCode(err error) int16 {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	if err != nil {
		return kerr.UnknownServerError.Code
	}
	return 0
}

// uuidString is Kafka's Uuid.toString: URL-safe base64 without padding.
func uuidString(id [16]byte) string {
	return base64URL.EncodeToString(id[:])
}

package quota

import (
	"sync"
)

// Kinds of measured quotas: the key of each is its quota config.
const (
	KindProduce  = ProducerByteRate
	KindFetch    = ConsumerByteRate
	KindRequest  = RequestPercentage
	KindMutation = ControllerMutationRate
)

// DefaultSensorExpiryMs is how long a sensor no request touched is kept
// (Kafka's inactive sensor expiration: one hour).
const DefaultSensorExpiryMs = 3600 * 1000

// Manager measures clients against their quotas: one sensor per quota
// kind and resolved level (Tags), and one per ip for connection creation.
// Safe for concurrent use.
type Manager struct {
	w      Window
	quotas func() Quotas

	mu      sync.Mutex
	sensors map[sensorKey]*sensor
	ips     map[string]*sensor
	sweptMs int64
}

type sensorKey struct {
	kind string
	tags Tags
}

type sensor struct {
	rate   *Rate
	bucket *TokenBucket
	usedMs int64
}

// NewManager returns a manager over the configuration quotas returns (it
// is called on every record: a change applies to the next request).
func NewManager(w Window, quotas func() Quotas) *Manager {
	return &Manager{w: w.orDefault(), quotas: quotas, sensors: map[sensorKey]*sensor{}, ips: map[string]*sensor{}}
}

// Window is the manager's sampling.
func (m *Manager) Window() Window { return m.w }

// maxBoundedMs bounds the throttle of request_percentage and connection
// creation: one window (Kafka's maxThrottleTimeMs).
func (m *Manager) maxBoundedMs() int64 { return m.w.SizeMs }

// sensor returns the sensor of (kind, tags), created on first use.
// Called with m.mu held.
func (m *Manager) sensor(kind string, tags Tags, nowMs int64) *sensor {
	m.sweep(nowMs)
	k := sensorKey{kind, tags}
	s := m.sensors[k]
	if s == nil {
		s = &sensor{}
		if kind == KindMutation {
			s.bucket = NewTokenBucket(m.w)
		} else {
			s.rate = NewRate(m.w)
		}
		m.sensors[k] = s
	}
	s.usedMs = nowMs
	return s
}

// sweep drops sensors unused for DefaultSensorExpiryMs, at most once a
// minute. Called with m.mu held.
func (m *Manager) sweep(nowMs int64) {
	if nowMs-m.sweptMs < 60*1000 {
		return
	}
	m.sweptMs = nowMs
	for k, s := range m.sensors {
		if nowMs-s.usedMs > DefaultSensorExpiryMs {
			delete(m.sensors, k)
		}
	}
	for k, s := range m.ips {
		if nowMs-s.usedMs > DefaultSensorExpiryMs {
			delete(m.ips, k)
		}
	}
}

// Outcome is what recording a request's use gives: the throttle time,
// and the sensor it was measured on (ok false: no quota applies).
type Outcome struct {
	ThrottleMs int64
	Tags       Tags
	Limit      float64
	OK         bool
}

// Record adds v (bytes, or percent-seconds of handler time for
// KindRequest) to the client's sensor of kind at nowMs and returns the
// throttle time: byte rates unbounded, request_percentage at most one
// window (Kafka bounds request-time throttles, not bandwidth ones).
func (m *Manager) Record(kind, user, clientID string, v float64, nowMs int64) Outcome {
	limit, tags, ok := m.quotas().Resolve(kind, user, clientID)
	if !ok {
		return Outcome{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sensor(kind, tags, nowMs)
	s.rate.Record(v, nowMs)
	t := s.rate.ThrottleMs(limit, nowMs)
	if kind == KindRequest {
		t = min(t, m.maxBoundedMs())
	}
	return Outcome{ThrottleMs: t, Tags: tags, Limit: limit, OK: true}
}

// Unrecord takes back v recorded on o's sensor at nowMs (a throttled
// fetch answers no records).
func (m *Manager) Unrecord(kind string, o Outcome, v float64, nowMs int64) {
	if !o.OK {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sensor(kind, o.Tags, nowMs).rate.Unrecord(v, nowMs)
}

// WindowBytes is the most a fetch may answer the client: its
// consumer_byte_rate over Samples-1 windows (Kafka's
// getMaxValueInQuotaWindow); ok false: unlimited.
func (m *Manager) WindowBytes(user, clientID string) (int64, bool) {
	limit, _, ok := m.quotas().Resolve(KindFetch, user, clientID)
	if !ok {
		return 0, false
	}
	return int64(limit * float64(m.w.Samples-1) * float64(m.w.SizeMs) / 1000), true
}

// MutationInDebt says whether the client's controller_mutation_rate
// bucket is in debt at nowMs: a strict request is refused then (KIP-599).
func (m *Manager) MutationInDebt(user, clientID string, nowMs int64) bool {
	limit, tags, ok := m.quotas().Resolve(KindMutation, user, clientID)
	if !ok {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sensor(KindMutation, tags, nowMs).bucket.InDebt(limit, nowMs)
}

// RecordMutations takes n partition mutations from the client's bucket
// and returns the throttle: the time its debt takes to repay.
func (m *Manager) RecordMutations(user, clientID string, n float64, nowMs int64) Outcome {
	limit, tags, ok := m.quotas().Resolve(KindMutation, user, clientID)
	if !ok {
		return Outcome{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.sensor(KindMutation, tags, nowMs).bucket
	if n > 0 {
		b.Take(limit, n, nowMs)
	}
	return Outcome{ThrottleMs: b.ThrottleMs(limit, nowMs), Tags: tags, Limit: limit, OK: true}
}

// RecordConnection counts a new connection from ip at nowMs against its
// connection_creation_rate (KIP-612) and returns how long to hold it
// before closing it (0: accepted), at most one window.
func (m *Manager) RecordConnection(ip string, nowMs int64) int64 {
	limit, ok := m.quotas().IPRate(ip)
	if !ok {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(nowMs)
	s := m.ips[ip]
	if s == nil {
		s = &sensor{rate: NewRate(m.w)}
		m.ips[ip] = s
	}
	s.usedMs = nowMs
	s.rate.Record(1, nowMs)
	t := s.rate.ThrottleMs(limit, nowMs)
	if t > 0 {
		// A refused connection is not counted (Kafka unrecords it).
		s.rate.Unrecord(1, nowMs)
	}
	return min(t, m.maxBoundedMs())
}

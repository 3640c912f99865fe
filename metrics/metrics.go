package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Namespace prefixes every metric name.
const Namespace = "kgateway"

// Metrics holds one server's registry and its per-request instruments. It
// implements kafka.Observer (the kafka package declares the interface, so
// neither package imports the other's dependencies).
type Metrics struct {
	Registry *prometheus.Registry // A registry per server: per server

	requests     *prometheus.CounterVec
	requestBytes *prometheus.CounterVec
	respBytes    *prometheus.CounterVec
	latency      *prometheus.HistogramVec
	produceBytes *prometheus.CounterVec
	fetchBytes   *prometheus.CounterVec
	commitSync   *prometheus.HistogramVec
	commitBytes  *prometheus.HistogramVec
	auths        *prometheus.CounterVec
	cluster      *clusterInstruments // nil until EnableCluster
	throttleTime *prometheus.CounterVec
	throttled    *prometheus.CounterVec
}

// New returns metrics on a fresh registry, with the Go runtime and process
// collectors registered.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		Registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "requests_total",
			Help: "Kafka requests handled, by API key name.",
		}, []string{"api"}),
		requestBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "request_bytes_total",
			Help: "Bytes of Kafka request frames received, by API key name.",
		}, []string{"api"}),
		respBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "response_bytes_total",
			Help: "Bytes of Kafka response frames sent, by API key name.",
		}, []string{"api"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "request_duration_seconds",
			Help: "Time from a request's arrival to its handler's end, long-poll fetch waits excluded, by API key name.",
			// 100µs .. ~26s
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
		}, []string{"api"}),
		produceBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "produce_bytes_total",
			Help: "Record batch bytes in Produce requests, by topic.",
		}, []string{"topic"}),
		fetchBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "fetch_bytes_total",
			Help: "Record batch bytes served by Fetch, by topic.",
		}, []string{"topic"}),
		commitSync: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "group_commit_sync_seconds",
			Help: "Time a group commit spends making its entries durable (every acknowledged produce waits for one), by lane: the fdatasyncs of its segment files (files, bulk), its journal record's (journal), or in a cluster its object PUT and etcd transaction (replicated).",
			// 50µs .. ~3.3s
			Buckets: prometheus.ExponentialBuckets(0.00005, 2, 17),
		}, []string{"lane"}),
		commitBytes: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "group_commit_bytes",
			Help: "Entry bytes made durable by one group commit, by lane (as group_commit_sync_seconds).",
			// 1 KiB .. 16 MiB
			Buckets: prometheus.ExponentialBuckets(1024, 4, 8),
		}, []string{"lane"}),
		auths: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "authentications_total",
			Help: "SASL authentications, by listener, mechanism and result (success or failure).",
		}, []string{"listener", "mechanism", "result"}),
		throttleTime: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "quota_throttle_seconds_total",
			Help: "Throttle time given to clients over a quota, by quota (producer_byte_rate, consumer_byte_rate, request_percentage, controller_mutation_rate) and the user and client id of the quota's sensor (\"\" where the quota is not per that type).",
		}, []string{"quota", "user", "client_id"}),
		throttled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "quota_throttled_responses_total",
			Help: "Responses throttled for a quota, labelled as quota_throttle_seconds_total.",
		}, []string{"quota", "user", "client_id"}),
	}
	reg.MustRegister(m.auths, m.throttleTime, m.throttled, m.requests, m.requestBytes, m.respBytes, m.latency,
		m.produceBytes, m.fetchBytes, m.commitSync, m.commitBytes,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Request records one handled request: its API key name, request frame
// size and latency (the caller has subtracted long-poll waits).
func (m *Metrics) Request(api string, reqBytes int, took time.Duration) {
	m.requests.WithLabelValues(api).Inc()
	m.requestBytes.WithLabelValues(api).Add(float64(reqBytes))
	m.latency.WithLabelValues(api).Observe(took.Seconds())
}

// Response records one response frame written.
func (m *Metrics) Response(api string, n int) {
	m.respBytes.WithLabelValues(api).Add(float64(n))
}

// ProduceBytes adds record batch bytes produced to topic.
func (m *Metrics) ProduceBytes(topic string, n int) {
	m.produceBytes.WithLabelValues(topic).Add(float64(n))
}

// FetchBytes adds record batch bytes fetched from topic.
func (m *Metrics) FetchBytes(topic string, n int) {
	m.fetchBytes.WithLabelValues(topic).Add(float64(n))
}

// GroupCommit records one storage group commit: its lane
// (storage.CommitStats.Lane), how long making it durable took and how
// many entry bytes it made durable.
func (m *Metrics) GroupCommit(lane string, sync time.Duration, bytes int64) {
	m.commitSync.WithLabelValues(lane).Observe(sync.Seconds())
	m.commitBytes.WithLabelValues(lane).Observe(float64(bytes))
}

// Authentication records one SASL exchange's outcome (kafka.AuthObserver).
func (m *Metrics) Authentication(listener, mechanism string, ok bool) {
	result := "failure"
	if ok {
		result = "success"
	}
	m.auths.WithLabelValues(listener, mechanism, result).Inc()
}

// Throttled records one response throttled for a quota
// (kafka.QuotaObserver).
func (m *Metrics) Throttled(kind, user, clientID string, d time.Duration) {
	m.throttleTime.WithLabelValues(kind, user, clientID).Add(d.Seconds())
	m.throttled.WithLabelValues(kind, user, clientID).Inc()
}

package telemetry

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"
)

var base64URL = base64.RawURLEncoding

// DecodeMetrics decodes an uncompressed KIP-714 payload: an OTLP
// MetricsData protobuf.
func DecodeMetrics(b []byte) (*metricspb.MetricsData, error) {
	md := new(metricspb.MetricsData)
	if err := proto.Unmarshal(b, md); err != nil {
		return nil, err
	}
	return md, nil
}

// MetricPrefix prefixes the Prometheus name of every pushed metric: an
// OTLP name's dots and other characters Prometheus does not allow become
// underscores ("org.apache.kafka.producer.record.send.total" is
// kgateway_client_org_apache_kafka_producer_record_send_total).
const MetricPrefix = "kgateway_client_"

// The labels every pushed series carries: who pushed it.
var clientLabels = []string{"client_instance_id", "client_id", "client_software_name", "client_software_version", "principal"}

const (
	// DefaultMaxSeriesPerClient bounds one client instance's series; a
	// Java client subscribed to every metric pushes a few hundred.
	DefaultMaxSeriesPerClient = 2000
	// DefaultMaxSeries bounds the series of all clients together.
	DefaultMaxSeries = 100000
)

// SinkOptions configures a Sink.
type SinkOptions struct {
	MaxSeriesPerClient int // 0: DefaultMaxSeriesPerClient
	MaxSeries          int // 0: DefaultMaxSeries
	Now                func() time.Time
}

// Sink keeps the metrics clients pushed and exposes them to Prometheus
// (a prometheus.Collector, registered by package server on the /metrics
// registry) with the pushing client's labels.
//
// Invariants:
//   - A series is one pushed metric name and attribute set of one client
//     instance. Gauges keep the last value; sums and histogram counts and
//     sums pushed as deltas (what the subscription asks for) add up into
//     counters, cumulative ones replace the value.
//   - A client instance has at most MaxSeriesPerClient series and all
//     together at most MaxSeries; a push's series past either bound are
//     dropped and counted (kgateway_telemetry_dropped_series_total).
//   - A client instance's series go when it has not pushed for its
//     expiry (three push intervals, at least a minute), when its
//     instance is forgotten, and after its terminating push.
type Sink struct {
	opts SinkOptions

	mu      sync.Mutex
	clients map[string]*clientSeries // by client instance id
	total   int
	dropped float64
}

type clientSeries struct {
	labels []string // values of clientLabels
	expiry time.Duration
	last   time.Time
	series map[string]*series
}

type kind int8

const (
	kindGauge kind = iota
	kindCounter
)

type series struct {
	name   string
	kind   kind
	names  []string // attribute label names, after clientLabels
	values []string
	value  float64
}

// NewSink returns an empty sink.
func NewSink(o SinkOptions) *Sink {
	if o.MaxSeriesPerClient <= 0 {
		o.MaxSeriesPerClient = DefaultMaxSeriesPerClient
	}
	if o.MaxSeries <= 0 {
		o.MaxSeries = DefaultMaxSeries
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Sink{opts: o, clients: map[string]*clientSeries{}}
}

// Record adds one push of client's metrics.
func (s *Sink) Record(c Client, principal string, md *metricspb.MetricsData, expiry time.Duration, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.clients[c.InstanceID]
	if cs == nil {
		cs = &clientSeries{series: map[string]*series{}}
		s.clients[c.InstanceID] = cs
	}
	cs.labels = []string{c.InstanceID, c.ClientID, c.SoftwareName, c.SoftwareVersion, principal}
	cs.expiry, cs.last = expiry, now
	for _, rm := range md.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				s.recordMetric(cs, m)
			}
		}
	}
}

func (s *Sink) recordMetric(cs *clientSeries, m *metricspb.Metric) {
	name := MetricPrefix + sanitize(m.GetName(), false)
	switch d := m.Data.(type) {
	case *metricspb.Metric_Gauge:
		for _, p := range d.Gauge.GetDataPoints() {
			s.update(cs, name, kindGauge, p.GetAttributes(), numberValue(p), false)
		}
	case *metricspb.Metric_Sum:
		k := kindGauge
		if d.Sum.GetIsMonotonic() {
			k = kindCounter
		}
		delta := d.Sum.GetAggregationTemporality() == metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA
		for _, p := range d.Sum.GetDataPoints() {
			s.update(cs, name, k, p.GetAttributes(), numberValue(p), delta)
		}
	case *metricspb.Metric_Histogram:
		delta := d.Histogram.GetAggregationTemporality() == metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA
		for _, p := range d.Histogram.GetDataPoints() {
			s.update(cs, name+"_count", kindCounter, p.GetAttributes(), float64(p.GetCount()), delta)
			s.update(cs, name+"_sum", kindCounter, p.GetAttributes(), p.GetSum(), delta)
		}
	}
}

func numberValue(p *metricspb.NumberDataPoint) float64 {
	if v, ok := p.Value.(*metricspb.NumberDataPoint_AsInt); ok {
		return float64(v.AsInt)
	}
	return p.GetAsDouble()
}

// update sets (or, for a delta, adds to) one series, creating it within
// the bounds.
func (s *Sink) update(cs *clientSeries, name string, k kind, attrs []*commonpb.KeyValue, v float64, delta bool) {
	names, values := attributeLabels(attrs)
	key := seriesKey(name, names, values)
	se := cs.series[key]
	if se == nil {
		if len(cs.series) >= s.opts.MaxSeriesPerClient || s.total >= s.opts.MaxSeries {
			s.dropped++
			return
		}
		se = &series{name: name, kind: k, names: names, values: values}
		cs.series[key] = se
		s.total++
	}
	if delta {
		se.value += v
	} else {
		se.value = v
	}
}

// attributeLabels are a data point's attributes as label names and
// values, sorted by name; one named like a client label, or like an
// earlier attribute once sanitised, is left out.
func attributeLabels(attrs []*commonpb.KeyValue) ([]string, []string) {
	type lv struct{ n, v string }
	var out []lv
	for _, a := range attrs {
		n := sanitize(a.GetKey(), true)
		if slices.Contains(clientLabels, n) || slices.ContainsFunc(out, func(x lv) bool { return x.n == n }) {
			continue
		}
		out = append(out, lv{n, attrString(a.GetValue())})
	}
	slices.SortFunc(out, func(a, b lv) int { return strings.Compare(a.n, b.n) })
	names, values := make([]string, len(out)), make([]string, len(out))
	for i, x := range out {
		names[i], values[i] = x.n, x.v
	}
	return names, values
}

func attrString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	}
	return ""
}

func seriesKey(name string, names, values []string) string {
	var b strings.Builder
	b.WriteString(name)
	for i := range names {
		b.WriteByte(0xff)
		b.WriteString(names[i])
		b.WriteByte(0xfe)
		b.WriteString(values[i])
	}
	return b.String()
}

// sanitize maps a name to Prometheus' alphabet: every character outside
// [a-zA-Z0-9_] becomes "_", and a label may not start with a digit or
// "__" (reserved).
func sanitize(s string, label bool) string {
	b := []byte(s)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	out := string(b)
	if label && (out == "" || out[0] >= '0' && out[0] <= '9' || strings.HasPrefix(out, "__")) {
		out = "attr_" + out
	}
	return out
}

// Forget drops a client instance's series.
func (s *Sink) Forget(instanceID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forget(instanceID)
}

func (s *Sink) forget(instanceID string) {
	if cs := s.clients[instanceID]; cs != nil {
		s.total -= len(cs.series)
		delete(s.clients, instanceID)
	}
}

var (
	descClients = prometheus.NewDesc("kgateway_telemetry_clients", "Client instances whose pushed metrics (KIP-714) are exposed.", nil, nil)
	descSeries  = prometheus.NewDesc("kgateway_telemetry_series", "Series of pushed client metrics (KIP-714) exposed.", nil, nil)
	descDropped = prometheus.NewDesc("kgateway_telemetry_dropped_series_total", "Pushed client metric series dropped at the per-client or total bound.", nil, nil)
)

const pushedHelp = "Client metric pushed with PushTelemetry (KIP-714), labelled with the pushing client."

// Describe sends nothing: the pushed series vary with what clients push,
// so the sink is an unchecked collector. Its own metrics are named
// outside MetricPrefix, so no pushed name can collide with them.
func (s *Sink) Describe(chan<- *prometheus.Desc) {}

// Collect expires the clients that stopped pushing and sends every other
// series. A name pushed as a gauge by one client and a counter by another
// keeps the kind it has first in name order.
func (s *Sink) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	for id, cs := range s.clients {
		if now.Sub(cs.last) > cs.expiry {
			s.forget(id)
		}
	}
	kinds := map[string]kind{}
	for _, id := range sortedKeys(s.clients) {
		cs := s.clients[id]
		for _, key := range sortedKeys(cs.series) {
			se := cs.series[key]
			if k, seen := kinds[se.name]; seen && k != se.kind {
				continue
			}
			kinds[se.name] = se.kind
			vt := prometheus.GaugeValue
			if se.kind == kindCounter {
				vt = prometheus.CounterValue
			}
			desc := prometheus.NewDesc(se.name, pushedHelp, append(slices.Clone(clientLabels), se.names...), nil)
			m, err := prometheus.NewConstMetric(desc, vt, se.value, append(slices.Clone(cs.labels), se.values...)...)
			if err == nil {
				ch <- m
			}
		}
	}
	ch <- prometheus.MustNewConstMetric(descClients, prometheus.GaugeValue, float64(len(s.clients)))
	ch <- prometheus.MustNewConstMetric(descSeries, prometheus.GaugeValue, float64(s.total))
	ch <- prometheus.MustNewConstMetric(descDropped, prometheus.CounterValue, s.dropped)
}

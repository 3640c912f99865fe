package telemetry

import (
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
)

// gauges is a MetricsData with n gauge series of one metric, told apart
// by a "partition" attribute.
func gauges(n int) *metricspb.MetricsData {
	var pts []*metricspb.NumberDataPoint
	for i := 0; i < n; i++ {
		pts = append(pts, &metricspb.NumberDataPoint{
			Attributes: []*commonpb.KeyValue{{Key: "partition", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: int64(i)}}}},
			Value:      &metricspb.NumberDataPoint_AsDouble{AsDouble: float64(i)}})
	}
	return &metricspb.MetricsData{ResourceMetrics: []*metricspb.ResourceMetrics{{ScopeMetrics: []*metricspb.ScopeMetrics{{Metrics: []*metricspb.Metric{
		{Name: "org.apache.kafka.g", Data: &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{DataPoints: pts}}}}}}}}}
}

// The per-client and total series bounds hold, drops are counted, and a
// client that stops pushing leaves after its expiry.
func TestSinkBounds(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { return now }
	s := NewSink(SinkOptions{MaxSeriesPerClient: 10, MaxSeries: 25, Now: clock})
	reg := prometheus.NewRegistry()
	reg.MustRegister(s)
	for i := 0; i < 3; i++ {
		s.Record(Client{InstanceID: "c" + strconv.Itoa(i)}, "User:ANONYMOUS", gauges(15), time.Minute, now)
	}
	// 10 + 10 + 5 series: each client capped at 10, all at 25.
	if n := count(t, reg, MetricPrefix+"org_apache_kafka_g"); n != 25 {
		t.Fatalf("%d series exposed, want 25", n)
	}
	if v := value(t, reg, "kgateway_telemetry_dropped_series_total"); v != 5+5+10 {
		t.Fatalf("dropped %v, want 20", v)
	}
	now = now.Add(time.Minute + time.Second)
	if n := count(t, reg, MetricPrefix+"org_apache_kafka_g"); n != 0 {
		t.Fatalf("%d series of expired clients exposed", n)
	}
	s.Record(Client{InstanceID: "c9"}, "", gauges(15), time.Minute, now)
	if n := count(t, reg, MetricPrefix+"org_apache_kafka_g"); n != 10 {
		t.Fatalf("after expiry a new client has %d series, want 10 (room was freed)", n)
	}
}

// count is how many series of name reg exposes.
func count(t *testing.T, reg *prometheus.Registry, name string) int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return len(mf.GetMetric())
		}
	}
	return 0
}

// value is the value of the unlabelled counter name.
func value(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("%s not exposed", name)
	return 0
}

package kafka

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/kafka/telemetry"
	"github.com/klauspost/compress/zstd"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"
)

// testTelemetry is a telemetry manager over a temporary directory, for
// servers that advertise every API.
func testTelemetry(t testing.TB) *telemetry.Manager {
	st, err := telemetry.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return telemetry.NewManager(st, telemetry.Options{})
}

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type telemetryRig struct {
	t     *testing.T
	c     *rawConn
	clock *fakeClock
	reg   *prometheus.Registry
}

// newTelemetryRig serves a kgateway with a telemetry manager on a moved
// clock, its sink on a registry, and a raw connection that said it is
// software "kgw-test" 1.0.
func newTelemetryRig(t *testing.T, maxBytes int32) *telemetryRig {
	t.Helper()
	st, err := telemetry.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	sink := telemetry.NewSink(telemetry.SinkOptions{Now: clock.now})
	reg := prometheus.NewRegistry()
	reg.MustRegister(sink)
	m := telemetry.NewManager(st, telemetry.Options{MaxBytes: maxBytes, Now: clock.now, Sink: sink})
	s := startServer(t, Config{Resolver: openResolver(t), Telemetry: m})
	g := &telemetryRig{t: t, c: dialRaw(t, s.Addr()), clock: clock, reg: reg}
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version, av.ClientSoftwareName, av.ClientSoftwareVersion = 3, "kgw-test", "1.0"
	if code := ask(g.c, av).(*kmsg.ApiVersionsResponse).ErrorCode; code != 0 {
		t.Fatalf("ApiVersions: %d", code)
	}
	return g
}

func (g *telemetryRig) alter(name string, ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) int16 {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.Configs = kmsg.ConfigResourceTypeClientMetrics, name, ops
	req.Resources = append(req.Resources, rr)
	return ask(g.c, req).(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode
}

func setOp(name, value string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value = name, kmsg.StringPtr(value)
	return c
}

func (g *telemetryRig) get(id [16]byte) *kmsg.GetTelemetrySubscriptionsResponse {
	req := kmsg.NewPtrGetTelemetrySubscriptionsRequest()
	req.ClientInstanceID = id
	return ask(g.c, req).(*kmsg.GetTelemetrySubscriptionsResponse)
}

func (g *telemetryRig) push(id [16]byte, sub int32, codec int8, payload []byte, terminating bool) int16 {
	req := kmsg.NewPtrPushTelemetryRequest()
	req.ClientInstanceID, req.SubscriptionID, req.CompressionType, req.Metrics, req.Terminating = id, sub, codec, payload, terminating
	return ask(g.c, req).(*kmsg.PushTelemetryResponse).ErrorCode
}

// payload is an OTLP MetricsData with a delta counter and a gauge,
// compressed with zstd (codec 4).
func payload(t *testing.T, count int64) []byte {
	t.Helper()
	attrs := []*commonpb.KeyValue{{Key: "node.id", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "1"}}}}
	md := &metricspb.MetricsData{ResourceMetrics: []*metricspb.ResourceMetrics{{ScopeMetrics: []*metricspb.ScopeMetrics{{Metrics: []*metricspb.Metric{
		{Name: "org.apache.kafka.producer.record.send.total", Data: &metricspb.Metric_Sum{Sum: &metricspb.Sum{
			IsMonotonic: true, AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA,
			DataPoints: []*metricspb.NumberDataPoint{{Attributes: attrs, Value: &metricspb.NumberDataPoint_AsInt{AsInt: count}}}}}},
		{Name: "org.apache.kafka.producer.buffer.available.bytes", Data: &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{
			DataPoints: []*metricspb.NumberDataPoint{{Value: &metricspb.NumberDataPoint_AsDouble{AsDouble: 1024}}}}}},
	}}}}}}
	b, err := proto.Marshal(md)
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := zstd.NewWriter(nil)
	defer enc.Close()
	return enc.EncodeAll(b, nil)
}

// scrape returns the registry's exposition of the pushed metric sum.
func (g *telemetryRig) sendTotal() (float64, map[string]string, bool) {
	g.t.Helper()
	mfs, err := g.reg.Gather()
	if err != nil {
		g.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != telemetry.MetricPrefix+"org_apache_kafka_producer_record_send_total" {
			continue
		}
		m := mf.GetMetric()[0]
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		return m.GetCounter().GetValue(), labels, true
	}
	return 0, nil, false
}

func codeName(c int16) string {
	if c == 0 {
		return "NONE"
	}
	return kerr.ErrorForCode(c).Error()
}

func wantCode(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	w := int16(0)
	if want != nil {
		w = want.Code
	}
	if got != w {
		t.Fatalf("%s: %s, want %s", what, codeName(got), codeName(w))
	}
}

// Without a telemetry manager 71 and 72 are not advertised; with one they
// are, at version 0.
func TestTelemetryAdvertised(t *testing.T) {
	for _, with := range []bool{false, true} {
		cfg := Config{Resolver: openResolver(t)}
		if with {
			st, err := telemetry.OpenStore(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			cfg.Telemetry = telemetry.NewManager(st, telemetry.Options{})
		}
		s := startServer(t, cfg)
		resp := ask(dialRaw(t, s.Addr()), kmsg.NewPtrApiVersionsRequest()).(*kmsg.ApiVersionsResponse)
		var keys []int16
		for _, k := range resp.ApiKeys {
			if k.ApiKey == 71 || k.ApiKey == 72 {
				keys = append(keys, k.ApiKey)
				if k.MinVersion != 0 || k.MaxVersion != 0 {
					t.Errorf("key %d: versions %d-%d", k.ApiKey, k.MinVersion, k.MaxVersion)
				}
			}
		}
		if with != (len(keys) == 2) {
			t.Errorf("with telemetry %v: advertised %v", with, keys)
		}
	}
}

// The subscription a client gets: a new instance id for the zero one,
// the metrics and interval of the matching subscription (its software
// name from ApiVersions), Kafka's compression list and delta temporality.
// Then each error path of GetTelemetrySubscriptions and PushTelemetry.
func TestTelemetrySubscribeAndPush(t *testing.T) {
	g := newTelemetryRig(t, 4096)
	wantCode(t, "subscription", g.alter("producers", setOp("metrics", "org.apache.kafka.producer."),
		setOp("interval.ms", "1000"), setOp("match", "client_software_name=kgw-.*")), nil)
	wantCode(t, "other software", g.alter("others", setOp("metrics", "org.apache.kafka.consumer."),
		setOp("interval.ms", "200"), setOp("match", "client_software_name=librdkafka")), nil)

	sub := g.get([16]byte{})
	wantCode(t, "get", sub.ErrorCode, nil)
	id := sub.ClientInstanceID
	if id == ([16]byte{}) {
		t.Fatal("no client instance id assigned")
	}
	if !slices.Equal(sub.RequestedMetrics, []string{"org.apache.kafka.producer."}) || sub.PushIntervalMillis != 1000 ||
		!sub.DeltaTemporality || sub.TelemetryMaxBytes != 4096 || !slices.Equal(sub.AcceptedCompressionTypes, []int8{4, 3, 1, 2}) {
		t.Fatalf("subscription %+v", sub)
	}

	wantCode(t, "get again at once", g.get(id).ErrorCode, kerr.ThrottlingQuotaExceeded)
	// The first push after a subscription is taken at once (the client
	// jitters its interval).
	wantCode(t, "push", g.push(id, sub.SubscriptionID, 4, payload(t, 5), false), nil)
	v, labels, ok := g.sendTotal()
	if !ok || v != 5 {
		t.Fatalf("pushed counter: %v (present %v)", v, ok)
	}
	for k, want := range map[string]string{"client_software_name": "kgw-test", "client_software_version": "1.0",
		"client_instance_id": labels["client_instance_id"], "node_id": "1", "principal": "User:ANONYMOUS"} {
		if labels[k] != want || want == "" {
			t.Errorf("label %s = %q, want %q (labels %v)", k, labels[k], want, labels)
		}
	}
	wantCode(t, "push again at once", g.push(id, sub.SubscriptionID, 4, payload(t, 1), false), kerr.ThrottlingQuotaExceeded)

	g.clock.add(time.Second)
	wantCode(t, "push, wrong subscription id", g.push(id, sub.SubscriptionID+1, 4, payload(t, 5), false), kerr.UnknownSubscriptionID)
	// After UNKNOWN_SUBSCRIPTION_ID the client may re-subscribe at once.
	resub := g.get(id)
	wantCode(t, "get after unknown subscription", resub.ErrorCode, nil)
	if resub.ClientInstanceID != id || resub.SubscriptionID != sub.SubscriptionID {
		t.Fatalf("re-subscription %x/%d, want %x/%d", resub.ClientInstanceID, resub.SubscriptionID, id, sub.SubscriptionID)
	}
	g.clock.add(time.Second)
	wantCode(t, "push a delta", g.push(id, sub.SubscriptionID, 4, payload(t, 3), false), nil)
	if v, _, _ := g.sendTotal(); v != 8 {
		t.Fatalf("delta sum: %v, want 8", v)
	}
	g.clock.add(time.Second)
	wantCode(t, "unknown codec", g.push(id, sub.SubscriptionID, 7, payload(t, 1), false), kerr.UnsupportedCompressionType)
	g.clock.add(time.Second)
	wantCode(t, "too large", g.push(id, sub.SubscriptionID, 0, bytes.Repeat([]byte{1}, 4097), false), kerr.TelemetryTooLarge)
	g.clock.add(time.Second)
	enc, _ := zstd.NewWriter(nil)
	bomb := enc.EncodeAll(make([]byte, 1<<20), nil) // small compressed, 1 MiB decompressed
	enc.Close()
	wantCode(t, "decompresses too large", g.push(id, sub.SubscriptionID, 4, bomb, false), kerr.TelemetryTooLarge)
	g.clock.add(time.Second)
	wantCode(t, "not OTLP", g.push(id, sub.SubscriptionID, 0, []byte{0xff, 0xff, 0xff}, false), kerr.InvalidRecord)
	wantCode(t, "reserved instance id", g.push([16]byte{}, sub.SubscriptionID, 0, nil, false), kerr.InvalidRequest)

	// A terminating push is taken even before the interval; nothing after.
	g.clock.add(time.Second)
	wantCode(t, "push", g.push(id, sub.SubscriptionID, 4, payload(t, 1), false), nil)
	wantCode(t, "terminating push", g.push(id, sub.SubscriptionID, 4, payload(t, 1), true), nil)
	if _, _, ok := g.sendTotal(); ok {
		t.Error("a terminated client's metrics are still exposed")
	}
	g.clock.add(time.Second)
	wantCode(t, "push after terminating", g.push(id, sub.SubscriptionID, 4, payload(t, 1), false), kerr.InvalidRequest)
}

// A change of the subscriptions is seen at the client's next request: a
// new subscription id, and the old one is UNKNOWN_SUBSCRIPTION_ID.
func TestTelemetrySubscriptionChange(t *testing.T) {
	g := newTelemetryRig(t, 0)
	sub := g.get([16]byte{})
	wantCode(t, "get", sub.ErrorCode, nil)
	if len(sub.RequestedMetrics) != 0 || sub.PushIntervalMillis != telemetry.DefaultIntervalMs {
		t.Fatalf("no subscription: %+v", sub)
	}
	wantCode(t, "subscription", g.alter("all", setOp("metrics", "*"), setOp("interval.ms", "500")), nil)
	wantCode(t, "push with the old id", g.push(sub.ClientInstanceID, sub.SubscriptionID, 4, payload(t, 1), false), kerr.UnknownSubscriptionID)
	next := g.get(sub.ClientInstanceID)
	wantCode(t, "get", next.ErrorCode, nil)
	g.clock.add(500 * time.Millisecond) // the rejected push counted as this interval's
	if !slices.Equal(next.RequestedMetrics, []string{"*"}) || next.PushIntervalMillis != 500 || next.SubscriptionID == sub.SubscriptionID {
		t.Fatalf("after the change: %+v (was id %d)", next, sub.SubscriptionID)
	}
	wantCode(t, "push", g.push(sub.ClientInstanceID, next.SubscriptionID, 4, payload(t, 1), false), nil)
	// Expiry: a client that stops pushing leaves /metrics.
	if _, _, ok := g.sendTotal(); !ok {
		t.Fatal("pushed metric missing")
	}
	g.clock.add(2 * time.Minute)
	if _, _, ok := g.sendTotal(); ok {
		t.Fatal("an expired client's metrics are still exposed")
	}
}

// CLIENT_METRICS resources: Kafka's validation and error codes, and
// DescribeConfigs of a set and an unset resource.
func TestClientMetricsConfigs(t *testing.T) {
	g := newTelemetryRig(t, 0)
	for _, tc := range []struct {
		name string
		op   kmsg.IncrementalAlterConfigsRequestResourceConfig
		want *kerr.Error
	}{
		{"s", setOp("interval.ms", "50"), kerr.InvalidRequest},
		{"s", setOp("interval.ms", "x"), kerr.InvalidConfig},
		{"s", setOp("no.such", "1"), kerr.InvalidRequest},
		{"s", setOp("match", "client_id"), kerr.InvalidConfig},
		{"s", setOp("match", "nope=1"), kerr.InvalidConfig},
		{"", setOp("metrics", "a"), kerr.InvalidRequest},
		{"s", kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: "interval.ms", Op: kmsg.IncrementalAlterConfigOpAppend, Value: kmsg.StringPtr("1")}, kerr.InvalidConfig},
		{"s", setOp("metrics", "a, b"), nil},
	} {
		wantCode(t, tc.name+" "+tc.op.Name+"="+*tc.op.Value, g.alter(tc.name, tc.op), tc.want)
	}
	wantCode(t, "append to a list", g.alter("s", kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: "metrics", Op: kmsg.IncrementalAlterConfigOpAppend, Value: kmsg.StringPtr("c")}), kerr.InvalidConfig)

	req := kmsg.NewPtrDescribeConfigsRequest()
	req.Version = 4
	for _, n := range []string{"s", "unset"} {
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeClientMetrics, n
		req.Resources = append(req.Resources, rr)
	}
	resp := ask(g.c, req).(*kmsg.DescribeConfigsResponse)
	got := map[string]string{}
	for _, r := range resp.Resources {
		wantCode(t, "describe "+r.ResourceName, r.ErrorCode, nil)
		for _, c := range r.Configs {
			got[r.ResourceName+"/"+c.Name] = *c.Value + "/" + strings.TrimPrefix(c.Source.String(), "")
		}
	}
	for k, want := range map[string]string{
		"s/metrics": "a,b/CLIENT_METRICS_CONFIG", "s/interval.ms": "300000/DEFAULT_CONFIG", "s/match": "/DEFAULT_CONFIG",
		"unset/metrics": "/DEFAULT_CONFIG", "unset/interval.ms": "300000/DEFAULT_CONFIG",
	} {
		if got[k] != want {
			t.Errorf("describe %s = %q, want %q", k, got[k], want)
		}
	}
}

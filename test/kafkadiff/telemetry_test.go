package kafkadiff

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/kgateway/kgateway/test/apachekafka"
	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kmsg"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"
)

// Apache Kafka serves client telemetry (KIP-714) only with a plugin: a
// metrics reporter that provides a ClientTelemetryExporter. The pair's
// Kafka gets testdata/TelemetryExporter.java, compiled here with javac
// against Kafka's jars (a second or two), so that both sides advertise
// and serve GetTelemetrySubscriptions and PushTelemetry.

// telemetryReporter is the plugin's class, for metric.reporters.
const telemetryReporter = "io.kgateway.kafkadiff.TelemetryExporter"

var telemetryPlugin struct {
	once sync.Once
	dir  string
	err  error
}

// telemetryPluginDir compiles the plugin once per process and returns the
// class directory to put on the broker's classpath.
func telemetryPluginDir() (string, error) {
	p := &telemetryPlugin
	p.once.Do(func() {
		cp, err := apachekafka.Classpath()
		if err != nil {
			p.err = err
			return
		}
		src, err := filepath.Abs(filepath.Join("testdata", "TelemetryExporter.java"))
		if err != nil {
			p.err = err
			return
		}
		if p.dir, p.err = os.MkdirTemp("", "kafkadiff-plugin-"); p.err != nil {
			return
		}
		if out, err := exec.Command("javac", "-nowarn", "-cp", cp, "-d", p.dir, src).CombinedOutput(); err != nil {
			p.err = fmt.Errorf("javac %s: %v\n%s", src, err, out)
		}
	})
	return p.dir, p.err
}

// removeTelemetryPlugin removes the compiled plugin.
func removeTelemetryPlugin() {
	if telemetryPlugin.dir != "" {
		os.RemoveAll(telemetryPlugin.dir)
	}
}

// withTelemetryPlugin adds the plugin to a broker's options.
func withTelemetryPlugin(o apachekafka.Options) (apachekafka.Options, error) {
	dir, err := telemetryPluginDir()
	if err != nil {
		return o, err
	}
	o.Classpath = append(o.Classpath, dir)
	o.Props["metric.reporters"] = telemetryReporter
	return o, nil
}

func clientMetricsOp(name string, op kmsg.IncrementalAlterConfigOp, v *string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Op, c.Value = name, op, v
	return c
}

func (r *run) alterClientMetrics(step, name string, validateOnly bool, ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.ValidateOnly = validateOnly
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.Configs = kmsg.ConfigResourceTypeClientMetrics, name, ops
	req.Resources = append(req.Resources, rr)
	r.do(step, req)
}

// awaitClientMetrics waits (unrecorded) until a client-metrics resource's
// config reads value: Kafka applies a change a moment after answering.
func (r *run) awaitClientMetrics(name, key, value string) {
	r.await(name+" "+key+" = "+value, describeConfigsReq(kmsg.ConfigResourceTypeClientMetrics, name, key), func(resp kmsg.Response) bool {
		rs := resp.(*kmsg.DescribeConfigsResponse).Resources
		return len(rs) == 1 && len(rs[0].Configs) == 1 && rs[0].Configs[0].Value != nil && *rs[0].Configs[0].Value == value
	})
}

// caseConfigsClientMetrics (part of caseTelemetry): CLIENT_METRICS resources, ClientMetricsConfigs'
// validation and what DescribeConfigs shows of set, unset and removed ones.
func caseConfigsClientMetrics(r *run) {
	const sub = "kd-cm"
	set := kmsg.IncrementalAlterConfigOpSet
	r.alterClientMetrics("set a subscription", sub, false, clientMetricsOp("metrics", set, str("org.apache.kafka.producer., org.apache.kafka.consumer.")),
		clientMetricsOp("interval.ms", set, str("2000")), clientMetricsOp("match", set, str("client_id=kd-.*,client_software_name=java")))
	r.awaitClientMetrics(sub, "interval.ms", "2000")
	r.do("describe it", describeConfigsReq(kmsg.ConfigResourceTypeClientMetrics, sub))
	r.do("describe an unset one", describeConfigsReq(kmsg.ConfigResourceTypeClientMetrics, "kd-cm-unset"))
	r.do("describe an empty name", describeConfigsReq(kmsg.ConfigResourceTypeClientMetrics, ""))
	for _, tc := range []struct{ step, key, value string }{
		{"interval below 100", "interval.ms", "99"},
		{"interval above an hour", "interval.ms", "3600001"},
		{"interval not a number", "interval.ms", "soon"},
		{"unknown config", "no.such.config", "1"},
		{"match without =", "match", "client_id"},
		{"match with two =", "match", "client_id=a=b"},
		{"match with an empty value", "match", "client_id="},
		{"match of an unknown selector", "match", "principal=User:x"},
		{"match with a bad expression", "match", "client_id=("},
	} {
		r.alterClientMetrics("set "+tc.step, "kd-cm-bad", false, clientMetricsOp(tc.key, set, str(tc.value)))
	}
	// A metric listed twice is taken (Kafka 4.4 does not check lists for
	// duplicates); the subscription matches no client.
	r.alterClientMetrics("set a duplicate metric", "kd-cm-dup", false, clientMetricsOp("metrics", set, str("a.,b.,a.")),
		clientMetricsOp("match", set, str("client_id=kd-cm-nobody")))
	r.awaitClientMetrics("kd-cm-dup", "match", "client_id=kd-cm-nobody")
	r.alterClientMetrics("delete it", "kd-cm-dup", false, clientMetricsOp("metrics", kmsg.IncrementalAlterConfigOpDelete, nil),
		clientMetricsOp("match", kmsg.IncrementalAlterConfigOpDelete, nil))
	r.alterClientMetrics("set with an empty name", "", false, clientMetricsOp("metrics", set, str("a.")))
	r.alterClientMetrics("validate only, invalid", "kd-cm-bad", true, clientMetricsOp("interval.ms", set, str("50")))
	r.alterClientMetrics("validate only, valid", "kd-cm-validated", true, clientMetricsOp("interval.ms", set, str("500")))
	r.do("describe the validated one", describeConfigsReq(kmsg.ConfigResourceTypeClientMetrics, "kd-cm-validated", "interval.ms"))
	// Kafka refuses APPEND and SUBTRACT on every client-metrics config,
	// lists included.
	r.alterClientMetrics("append a metric", sub, false, clientMetricsOp("metrics", kmsg.IncrementalAlterConfigOpAppend, str("org.apache.kafka.admin.")))
	r.alterClientMetrics("subtract a metric", sub, false, clientMetricsOp("metrics", kmsg.IncrementalAlterConfigOpSubtract, str("org.apache.kafka.consumer.")))
	r.alterClientMetrics("append to interval.ms", sub, false, clientMetricsOp("interval.ms", kmsg.IncrementalAlterConfigOpAppend, str("1")))
	legacy := kmsg.NewPtrAlterConfigsRequest()
	lr := kmsg.NewAlterConfigsRequestResource()
	lr.ResourceType, lr.ResourceName = kmsg.ConfigResourceTypeClientMetrics, "kd-cm-legacy"
	lc := kmsg.NewAlterConfigsRequestResourceConfig()
	lc.Name, lc.Value = "metrics", str("*")
	lm := kmsg.NewAlterConfigsRequestResourceConfig()
	lm.Name, lm.Value = "match", str("client_id=kd-cm-nobody")
	lr.Configs = append(lr.Configs, lc, lm)
	legacy.Resources = append(legacy.Resources, lr)
	r.do("legacy AlterConfigs", legacy)
	r.awaitClientMetrics("kd-cm-legacy", "metrics", "*")
	r.do("describe the legacy one", describeConfigsReq(kmsg.ConfigResourceTypeClientMetrics, "kd-cm-legacy"))
	del := kmsg.IncrementalAlterConfigOpDelete
	r.alterClientMetrics("delete every config", sub, false, clientMetricsOp("metrics", del, nil),
		clientMetricsOp("interval.ms", del, nil), clientMetricsOp("match", del, nil))
	r.awaitClientMetrics(sub, "interval.ms", "300000")
	r.do("describe after deleting", describeConfigsReq(kmsg.ConfigResourceTypeClientMetrics, sub))
}

// telemetryPayload is an OTLP MetricsData with one gauge, zstd-compressed
// when zstdCodec.
func telemetryPayload(zstdCodec bool) []byte {
	md := &metricspb.MetricsData{ResourceMetrics: []*metricspb.ResourceMetrics{{ScopeMetrics: []*metricspb.ScopeMetrics{{Metrics: []*metricspb.Metric{
		{Name: "org.apache.kafka.kd.gauge", Data: &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{
			DataPoints: []*metricspb.NumberDataPoint{{Value: &metricspb.NumberDataPoint_AsDouble{AsDouble: 42}}}}}},
	}}}}}}
	b, err := proto.Marshal(md)
	if err != nil {
		panic(err)
	}
	if !zstdCodec {
		return b
	}
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	defer enc.Close()
	return enc.EncodeAll(b, nil)
}

// caseTelemetry: CLIENT_METRICS resources, then GetTelemetrySubscriptions
// and PushTelemetry through a client's life and each error path. One case,
// in this order: a change of the subscriptions re-evaluates every client
// instance, so no other case may change them meanwhile. The connection
// says it is software kd-telemetry, which only kd-tm matches (the
// configs part's subscriptions match no client).
func caseTelemetry(r *run) {
	caseConfigsClientMetrics(r)
	av := kmsg.NewPtrApiVersionsRequest()
	av.ClientSoftwareName, av.ClientSoftwareVersion = "kd-telemetry", "1.0"
	r.setup(av)
	r.alterClientMetrics("subscribe kd-telemetry", "kd-tm", false,
		clientMetricsOp("metrics", kmsg.IncrementalAlterConfigOpSet, str("org.apache.kafka.kd.")),
		clientMetricsOp("interval.ms", kmsg.IncrementalAlterConfigOpSet, str("60000")),
		clientMetricsOp("match", kmsg.IncrementalAlterConfigOpSet, str("client_software_name=kd-tele.*")))
	r.awaitClientMetrics("kd-tm", "interval.ms", "60000")
	// Kafka's subscriptions follow its config view: wait (unrecorded)
	// until a new instance gets the subscription.
	r.await("kd-tm subscribed", kmsg.NewPtrGetTelemetrySubscriptionsRequest(), func(resp kmsg.Response) bool {
		return resp.(*kmsg.GetTelemetrySubscriptionsResponse).PushIntervalMillis == 60000
	})

	get := func(step string, id [16]byte) *kmsg.GetTelemetrySubscriptionsResponse {
		req := kmsg.NewPtrGetTelemetrySubscriptionsRequest()
		req.ClientInstanceID = id
		resp, _ := r.do(step, req).(*kmsg.GetTelemetrySubscriptionsResponse)
		if resp == nil {
			return kmsg.NewPtrGetTelemetrySubscriptionsResponse()
		}
		return resp
	}
	push := func(step string, id [16]byte, sub int32, codec int8, metrics []byte, terminating bool) {
		req := kmsg.NewPtrPushTelemetryRequest()
		req.ClientInstanceID, req.SubscriptionID, req.CompressionType, req.Metrics, req.Terminating = id, sub, codec, metrics, terminating
		r.do(step, req)
	}

	s := get("new instance", [16]byte{})
	get("again at once", s.ClientInstanceID)
	push("push with another subscription id", s.ClientInstanceID, s.SubscriptionID+1, 4, telemetryPayload(true), false)
	s2 := get("again after an unknown subscription id", s.ClientInstanceID)
	push("push at once after re-subscribing", s.ClientInstanceID, s2.SubscriptionID, 4, telemetryPayload(true), false)

	s = get("second instance", [16]byte{})
	push("push zstd", s.ClientInstanceID, s.SubscriptionID, 4, telemetryPayload(true), false)
	push("push again at once", s.ClientInstanceID, s.SubscriptionID, 4, telemetryPayload(true), false)
	push("terminating push at once", s.ClientInstanceID, s.SubscriptionID, 4, telemetryPayload(true), true)
	push("push after terminating", s.ClientInstanceID, s.SubscriptionID, 4, telemetryPayload(true), false)

	s = get("third instance", [16]byte{})
	push("push with an unknown codec", s.ClientInstanceID, s.SubscriptionID, 9, telemetryPayload(false), false)
	get("again after an unknown codec", s.ClientInstanceID)

	s = get("fourth instance", [16]byte{})
	push("push uncompressed", s.ClientInstanceID, s.SubscriptionID, 0, telemetryPayload(false), false)
	s = get("fifth instance", [16]byte{})
	push("push what is not OTLP", s.ClientInstanceID, s.SubscriptionID, 0, []byte{0xff, 0xff, 0xff, 0xff}, false)
	s = get("sixth instance", [16]byte{})
	push("push over telemetry.max.bytes", s.ClientInstanceID, s.SubscriptionID, 0, bytes.Repeat([]byte{0}, 1<<20+1), false)
	s = get("seventh instance", [16]byte{})
	push("push an empty payload", s.ClientInstanceID, s.SubscriptionID, 0, nil, false)

	push("push with the zero instance id", [16]byte{}, 1, 0, telemetryPayload(false), false)
	var unknown [16]byte
	rand.Read(unknown[:])
	push("push from an instance never subscribed", unknown, 0, 0, telemetryPayload(false), false)
}

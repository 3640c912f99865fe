package kafka

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/kgateway/kgateway/logging"
)

// loggerRig is a server whose logs go to an observer through a logging
// registry at INFO, with node id 2.
func loggerRig(t *testing.T, cfg Config) (*sessionRig, *observer.ObservedLogs) {
	t.Helper()
	obs, logs := observer.New(zapcore.DebugLevel)
	cfg.NodeID, cfg.Logger = 2, logging.New(obs, zapcore.InfoLevel).Logger()
	return newSessionRig(t, cfg, nil), logs
}

func alterLoggers(c *rawConn, resource string, cs ...kmsg.IncrementalAlterConfigsRequestResourceConfig) kmsg.IncrementalAlterConfigsResponseResource {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.Configs = kmsg.ConfigResourceTypeBrokerLogger, resource, cs
	req.Resources = append(req.Resources, rr)
	return ask(c, req).(*kmsg.IncrementalAlterConfigsResponse).Resources[0]
}

func loggerOp(name string, op kmsg.IncrementalAlterConfigOp, value *string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Op, c.Value = name, op, value
	return c
}

// describeLoggers describes the BROKER_LOGGER resource: its error code and
// each logger's level.
func describeLoggers(c *rawConn, resource string) (int16, map[string]string) {
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.SetVersion(4)
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, resource
	req.Resources = append(req.Resources, rr)
	res := ask(c, req).(*kmsg.DescribeConfigsResponse).Resources[0]
	levels := map[string]string{}
	for _, cf := range res.Configs {
		if cf.Source != kmsg.ConfigSourceDynamicBrokerLoggerConfig || cf.ReadOnly || cf.Documentation == nil || *cf.Documentation != "" {
			c.t.Fatalf("logger %s: source %v read-only %v documentation %v; Kafka's are DYNAMIC_BROKER_LOGGER_CONFIG, writable, \"\"",
				cf.Name, cf.Source, cf.ReadOnly, cf.Documentation)
		}
		levels[cf.Name] = *cf.Value
	}
	return res.ErrorCode, levels
}

// refuseOne dials a server at its connection limit and waits until the
// server closed the connection (it logs the refusal first).
func refuseOne(t *testing.T, addr net.Addr) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr.String(), testDeadline)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(testDeadline))
	if _, err := nc.Read(make([]byte, 1)); !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("the server did not close a connection over max.connections")
		}
	}
}

// TestBrokerLoggerLevelAtRunTime: setting the root logger to DEBUG with
// IncrementalAlterConfigs makes a debug line (a connection refused over
// max.connections) appear in the log; setting it back to INFO hides it
// again. DescribeConfigs shows each level as set.
func TestBrokerLoggerLevelAtRunTime(t *testing.T) {
	g, logs := loggerRig(t, Config{MaxConnections: 1})
	const line = "connection-refused-max-connections"
	refuseOne(t, g.s.Addr())
	if n := logs.FilterMessage(line).Len(); n != 0 {
		t.Fatalf("%d debug lines at INFO", n)
	}
	if r := alterLoggers(g.c, "2", loggerOp("root", kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr("DEBUG"))); r.ErrorCode != 0 {
		t.Fatalf("SET root DEBUG: %d %v", r.ErrorCode, r.ErrorMessage)
	}
	if _, lv := describeLoggers(g.c, "2"); lv["root"] != "DEBUG" || lv["group"] != "DEBUG" {
		t.Fatalf("after SET root DEBUG: %v", lv)
	}
	refuseOne(t, g.s.Addr())
	if n := logs.FilterMessage(line).Len(); n != 1 {
		t.Fatalf("%d debug lines with root at DEBUG, want 1", n)
	}
	if r := alterLoggers(g.c, "2", loggerOp("root", kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr("INFO"))); r.ErrorCode != 0 {
		t.Fatalf("SET root INFO: %d %v", r.ErrorCode, r.ErrorMessage)
	}
	refuseOne(t, g.s.Addr())
	if n := logs.FilterMessage(line).Len(); n != 1 {
		t.Fatalf("%d debug lines after root went back to INFO, want 1", n)
	}
}

// TestBrokerLoggerRules: the BROKER_LOGGER resource answers as Kafka 4.4
// does (asked of the real broker): the loggers with their levels; SET
// and DELETE only, Kafka's level names only, existing loggers only, the
// root's level never removed, all of a resource or nothing; this node's
// id only; AlterConfigs refuses the type; ListConfigResources lists it.
func TestBrokerLoggerRules(t *testing.T) {
	g, _ := loggerRig(t, Config{})
	code, lv := describeLoggers(g.c, "2")
	if code != 0 || lv["root"] != "INFO" || lv["group"] != "INFO" || lv["txn"] != "INFO" || lv["share"] != "INFO" {
		t.Fatalf("loggers: %d %v", code, lv)
	}
	for _, res := range []string{"", "abc", "77"} {
		if code, _ := describeLoggers(g.c, res); code != kerr.InvalidRequest.Code {
			t.Fatalf("describe resource %q: %d, want INVALID_REQUEST", res, code)
		}
	}
	set := func(name, level string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
		return loggerOp(name, kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr(level))
	}
	del := func(name string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
		return loggerOp(name, kmsg.IncrementalAlterConfigOpDelete, nil)
	}
	for _, tc := range []struct {
		what     string
		resource string
		ops      []kmsg.IncrementalAlterConfigsRequestResourceConfig
		want     *kerr.Error
	}{
		{"append", "2", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp("txn", kmsg.IncrementalAlterConfigOpAppend, kmsg.StringPtr("INFO"))}, kerr.InvalidRequest},
		{"subtract", "2", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp("txn", kmsg.IncrementalAlterConfigOpSubtract, kmsg.StringPtr("INFO"))}, kerr.InvalidRequest},
		{"unknown logger", "2", []kmsg.IncrementalAlterConfigsRequestResourceConfig{set("txn", "WARN"), set("no.such", "WARN")}, kerr.InvalidConfig},
		{"lower-case level", "2", []kmsg.IncrementalAlterConfigsRequestResourceConfig{set("txn", "WARN"), set("root", "debug")}, kerr.InvalidConfig},
		{"OFF", "2", []kmsg.IncrementalAlterConfigsRequestResourceConfig{set("root", "OFF")}, kerr.InvalidConfig},
		{"delete root", "2", []kmsg.IncrementalAlterConfigsRequestResourceConfig{set("txn", "WARN"), del("root")}, kerr.InvalidRequest},
		{"null value", "2", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp("txn", kmsg.IncrementalAlterConfigOpSet, nil)}, kerr.InvalidRequest},
		{"duplicate", "2", []kmsg.IncrementalAlterConfigsRequestResourceConfig{set("txn", "WARN"), set("txn", "ERROR")}, kerr.InvalidRequest},
		{"other node", "77", []kmsg.IncrementalAlterConfigsRequestResourceConfig{set("txn", "WARN")}, kerr.InvalidRequest},
		{"empty node", "", []kmsg.IncrementalAlterConfigsRequestResourceConfig{set("txn", "WARN")}, kerr.InvalidRequest},
	} {
		if r := alterLoggers(g.c, tc.resource, tc.ops...); r.ErrorCode != tc.want.Code {
			t.Fatalf("%s: %d %v, want %s", tc.what, r.ErrorCode, r.ErrorMessage, tc.want.Message)
		}
	}
	if _, lv := describeLoggers(g.c, "2"); lv["txn"] != "INFO" {
		t.Fatalf("a refused resource changed txn to %s", lv["txn"])
	}
	if r := alterLoggers(g.c, "2", set("txn", "TRACE"), set("root", "WARN")); r.ErrorCode != 0 {
		t.Fatalf("SET: %d %v", r.ErrorCode, r.ErrorMessage)
	}
	if _, lv := describeLoggers(g.c, "2"); lv["txn"] != "TRACE" || lv["group"] != "WARN" {
		t.Fatalf("after SET txn TRACE, root WARN: %v", lv)
	}
	if r := alterLoggers(g.c, "2", del("txn")); r.ErrorCode != 0 {
		t.Fatalf("DELETE txn: %d %v", r.ErrorCode, r.ErrorMessage)
	}
	if _, lv := describeLoggers(g.c, "2"); lv["txn"] != "WARN" {
		t.Fatalf("txn after DELETE is %s, want the root's WARN", lv["txn"])
	}

	ac := kmsg.NewPtrAlterConfigsRequest()
	ar := kmsg.NewAlterConfigsRequestResource()
	ar.ResourceType, ar.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, "2"
	ac.Resources = append(ac.Resources, ar)
	if r := ask(g.c, ac).(*kmsg.AlterConfigsResponse).Resources[0]; r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("AlterConfigs BROKER_LOGGER: %d, want INVALID_REQUEST", r.ErrorCode)
	}
	lr := kmsg.NewPtrListConfigResourcesRequest()
	lr.SetVersion(1)
	lr.ResourceTypes = []int8{int8(kmsg.ConfigResourceTypeBrokerLogger)}
	resp := ask(g.c, lr).(*kmsg.ListConfigResourcesResponse)
	if resp.ErrorCode != 0 || len(resp.ConfigResources) != 1 || resp.ConfigResources[0].Name != "2" || resp.ConfigResources[0].Type != 8 {
		t.Fatalf("ListConfigResources BROKER_LOGGER: %d %+v", resp.ErrorCode, resp.ConfigResources)
	}
}

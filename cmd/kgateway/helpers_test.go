package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
)

const testDeadline = 30 * time.Second

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	t.Cleanup(cancel)
	return ctx
}

// startTest starts a gateway on ephemeral ports over dir.
func startTest(t *testing.T, dir string) *gateway {
	t.Helper()
	return startTestWith(t, dir, func(*Config) {})
}

// startTestWith is startTest with the config changed by edit first.
func startTestWith(t *testing.T, dir string, edit func(*Config)) *gateway {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Listen, cfg.MetricsAddr, cfg.DataDir = "127.0.0.1:0", "127.0.0.1:0", dir
	edit(&cfg)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	g, err := startGateway(cfg, true, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func newClient(t *testing.T, g *gateway, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(g.Addr().String()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0), kgo.AllowAutoTopicCreation(),
		kgo.ProducerBatchCompression(kgo.NoCompression())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// produce writes one batch per value to topic partition 0.
func produce(t *testing.T, cl *kgo.Client, topic string, values ...string) {
	t.Helper()
	for _, v := range values {
		r := &kgo.Record{Topic: topic, Value: []byte(v)}
		if err := cl.ProduceSync(testCtx(t), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// httpGet returns the status and body of a GET on the metrics server.
func httpGet(t *testing.T, g *gateway, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + g.MetricsAddr().String() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// runCmd runs the command line and returns exit code, stdout and stderr.
func runCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := runMain(args, &out, &errb)
	return code, out.String(), errb.String()
}

// metricValue finds the sample line "name{labels} value" in a scrape; the
// labels must appear in the given order (Prometheus sorts them by name).
func metricValue(scrape, series string) (string, bool) {
	for _, line := range strings.Split(scrape, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v, true
		}
	}
	return "", false
}

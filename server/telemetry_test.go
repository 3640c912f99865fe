package server

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// request sends req to the server at addr alone and returns the answer.
func requestTo(t *testing.T, addr net.Addr, req kmsg.Request) (kmsg.Response, error) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr.String()), kgo.RequestRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return cl.SeedBrokers()[0].Request(ctx, req)
}

// setSubscription sets a client-metrics resource's metrics and interval.
func setSubscription(t *testing.T, addr net.Addr, name, metrics, interval string) {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeClientMetrics, name
	for _, kv := range [][2]string{{"metrics", metrics}, {"interval.ms", interval}} {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = kv[0], kmsg.StringPtr(kv[1])
		rr.Configs = append(rr.Configs, c)
	}
	req.Resources = append(req.Resources, rr)
	resp, err := requestTo(t, addr, req)
	if err != nil {
		t.Fatal(err)
	}
	if err := kerr.ErrorForCode(resp.(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode); err != nil {
		t.Fatalf("set %s: %v", name, err)
	}
}

// subscribed is the push interval a new client instance gets from addr,
// with an error unless metrics are what it is asked for.
func subscribed(t *testing.T, addr net.Addr, metrics string) error {
	resp, err := requestTo(t, addr, kmsg.NewPtrGetTelemetrySubscriptionsRequest())
	if err != nil {
		return err
	}
	r := resp.(*kmsg.GetTelemetrySubscriptionsResponse)
	if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
		return err
	}
	if len(r.RequestedMetrics) != 1 || r.RequestedMetrics[0] != metrics {
		return fmt.Errorf("requested metrics %v, want [%s]", r.RequestedMetrics, metrics)
	}
	return nil
}

// A subscription (CLIENT_METRICS resource) outlives a restart of a single
// node: it is kept in the data directory.
func TestClientMetricsDurable(t *testing.T) {
	dir := t.TempDir()
	s, _ := serve(t, dir)
	setSubscription(t, s.Addr(), "all", "org.apache.kafka.", "1000")
	s.Close()
	s, _ = serve(t, dir)
	if err := subscribed(t, s.Addr(), "org.apache.kafka."); err != nil {
		t.Fatalf("after a restart: %v", err)
	}
}

// In a cluster the subscriptions are one etcd document: set on node 1,
// node 2 serves them, and still does after a restart over its emptied
// data directory.
func TestClusterClientMetricsShared(t *testing.T) {
	c := newTestCluster(t)
	n1 := c.start(1)
	n2 := c.start(2)
	setSubscription(t, n1.Addr(), "all", "org.apache.kafka.producer.", "1000")
	eventually(t, "node 2 serves the subscription set on node 1", func() error {
		return subscribed(t, n2.Addr(), "org.apache.kafka.producer.")
	})
	c.stop(2)
	n2 = c.start(2)
	if err := subscribed(t, n2.Addr(), "org.apache.kafka.producer."); err != nil {
		t.Fatalf("node 2 after a restart: %v", err)
	}
}

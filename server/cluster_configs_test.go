package server

import (
	"context"
	"crypto/rand"
	"errors"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Dynamic configs in cluster mode: kept in etcd beside the topics and
// applied on every node from the catalog watch.

// describeOn is config name of a resource as node describes it (ok false
// when it is not listed).
func describeOn(t *testing.T, ctx context.Context, cl *kgo.Client, node int32, typ kmsg.ConfigResourceType, resource, name string) (kmsg.DescribeConfigsResponseResourceConfig, bool) {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms = true
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.ConfigNames = typ, resource, []string{name}
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(ctx, cl.Broker(int(node)))
	if err != nil {
		t.Fatal(err)
	}
	r := resp.Resources[0]
	if r.ErrorCode != 0 {
		t.Fatalf("describe %v %q on node %d: error %d %v", typ, resource, node, r.ErrorCode, r.ErrorMessage)
	}
	if len(r.Configs) == 0 {
		return kmsg.DescribeConfigsResponseResourceConfig{}, false
	}
	return r.Configs[0], true
}

// alterOn sets name=value on a resource through node
// (IncrementalAlterConfigs) and returns the resource's error code.
func alterOn(t *testing.T, ctx context.Context, cl *kgo.Client, node int32, typ kmsg.ConfigResourceType, resource, name, value string) int16 {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = typ, resource
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value = name, kmsg.StringPtr(value)
	rr.Configs = append(rr.Configs, c)
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(ctx, cl.Broker(int(node)))
	if err != nil {
		t.Fatal(err)
	}
	return resp.Resources[0].ErrorCode
}

// knowing is cl once its metadata lists every node of ids (kgo's Broker
// needs them).
func knowing(t *testing.T, ctx context.Context, cl *kgo.Client, ids ...int32) *kgo.Client {
	t.Helper()
	waitFor(t, "the client to know the nodes", func() bool {
		// Not kadm's BrokerMetadata: its answer comes from the client's
		// metadata cache, which asks for no topic and so never expires,
		// and would keep the broker list of before a node joined.
		md, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
		if err != nil {
			return false
		}
		for _, id := range ids {
			if !slices.ContainsFunc(md.Brokers, func(b kmsg.MetadataResponseBroker) bool { return b.NodeID == id }) {
				return false
			}
		}
		return true
	})
	return cl
}

// describedAs reports whether node describes name of the resource with
// value from source.
func describedAs(t *testing.T, ctx context.Context, cl *kgo.Client, node int32, typ kmsg.ConfigResourceType, resource, name, value string, source kmsg.ConfigSource) bool {
	c, ok := describeOn(t, ctx, cl, node, typ, resource, name)
	return ok && c.Value != nil && *c.Value == value && c.Source == source
}

// TestClusterBrokerConfigs: a cluster-wide default broker config (the
// BROKER resource "") set through one node is described, with its source,
// and applied on every node; a node's own config (the resource named by
// its id) must be sent to that node (INVALID_REQUEST elsewhere, as
// Kafka), applies there only, and survives the node's restart.
func TestClusterBrokerConfigs(t *testing.T) {
	const parts = 12
	c, _, adm, ctx := startWithTopic(t, 2, "cfg", parts)
	// Until every node has seen node 2 join, some answer names node 1
	// for every partition; placement spreads them once it has.
	on := map[int32]int32{} // node -> a partition it leads
	waitFor(t, "partitions led by both nodes", func() bool {
		clear(on)
		for p, l := range c.waitLeaders(adm, "cfg", parts) {
			on[l] = p
		}
		return len(on) == 2
	})
	cl := knowing(t, ctx, c.client(kgo.RecordPartitioner(kgo.ManualPartitioner())), 1, 2)
	big := make([]byte, 4096) // random: stays over 1024 bytes compressed
	rand.Read(big)
	tooLarge := func(node int32) bool {
		err := cl.ProduceSync(ctx, &kgo.Record{Topic: "cfg", Partition: on[node], Value: big}).FirstErr()
		if err != nil && !errors.Is(err, kerr.MessageTooLarge) {
			t.Fatalf("produce to node %d: %v", node, err)
		}
		return err != nil
	}
	broker := kmsg.ConfigResourceTypeBroker

	// The default, set through node 1, on node 2.
	if code := alterOn(t, ctx, cl, 1, broker, "", "message.max.bytes", "1024"); code != 0 {
		t.Fatalf("set the default through node 1: error %d", code)
	}
	waitFor(t, "node 2 describing the default", func() bool {
		return describedAs(t, ctx, cl, 2, broker, "2", "message.max.bytes", "1024", kmsg.ConfigSourceDynamicDefaultBrokerConfig) &&
			describedAs(t, ctx, cl, 2, broker, "", "message.max.bytes", "1024", kmsg.ConfigSourceDynamicDefaultBrokerConfig)
	})
	waitFor(t, "node 2 refusing a 4 KiB batch", func() bool { return tooLarge(2) })
	if !tooLarge(1) {
		t.Fatal("node 1 took a 4 KiB batch over its message.max.bytes=1024")
	}

	// Node 2's own config goes to node 2, as in Kafka.
	if code := alterOn(t, ctx, cl, 1, broker, "2", "message.max.bytes", "1000000"); code != kerr.InvalidRequest.Code {
		t.Fatalf("node 2's config sent to node 1: error %d, want INVALID_REQUEST", code)
	}
	if code := alterOn(t, ctx, cl, 2, broker, "2", "message.max.bytes", "1000000"); code != 0 {
		t.Fatalf("node 2's config through node 2: error %d", code)
	}
	if !describedAs(t, ctx, cl, 2, broker, "2", "message.max.bytes", "1000000", kmsg.ConfigSourceDynamicBrokerConfig) {
		t.Fatal("node 2 does not describe its own config once set")
	}
	waitFor(t, "node 2 taking a 4 KiB batch", func() bool { return !tooLarge(2) })
	if !tooLarge(1) || !describedAs(t, ctx, cl, 1, broker, "1", "message.max.bytes", "1024", kmsg.ConfigSourceDynamicDefaultBrokerConfig) {
		t.Fatal("node 2's own config applied on node 1")
	}

	// Both layers come back from etcd when node 2 starts again (over an
	// emptied data directory).
	c.stop(2)
	s2 := c.start(2)
	cl2 := knowing(t, ctx, c.client(kgo.SeedBrokers(s2.Addr().String())), 2)
	cfg, _ := describeOn(t, ctx, cl2, 2, broker, "2", "message.max.bytes")
	if cfg.Value == nil || *cfg.Value != "1000000" || cfg.Source != kmsg.ConfigSourceDynamicBrokerConfig ||
		len(cfg.ConfigSynonyms) < 2 || *cfg.ConfigSynonyms[1].Value != "1024" || cfg.ConfigSynonyms[1].Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
		t.Fatalf("node 2 after a restart: %+v", cfg)
	}
}

// TestClusterInternalTopicConfigs: an internal topic's configs altered
// through one node are described by every node, over the configs Kafka
// creates it with; an invalid value is INVALID_CONFIG and changes
// nothing.
func TestClusterInternalTopicConfigs(t *testing.T) {
	c := newTestCluster(t)
	c.start(1)
	c.start(2)
	ctx := testCtx(t)
	cl := knowing(t, ctx, c.client(), 1, 2)
	topic := kmsg.ConfigResourceTypeTopic
	if code := alterOn(t, ctx, cl, 1, topic, "__consumer_offsets", "retention.ms", "3600000"); code != 0 {
		t.Fatalf("alter __consumer_offsets through node 1: error %d", code)
	}
	waitFor(t, "node 2 describing __consumer_offsets' retention.ms", func() bool {
		return describedAs(t, ctx, cl, 2, topic, "__consumer_offsets", "retention.ms", "3600000", kmsg.ConfigSourceDynamicTopicConfig)
	})
	if !describedAs(t, ctx, cl, 2, topic, "__consumer_offsets", "cleanup.policy", "compact", kmsg.ConfigSourceDynamicTopicConfig) {
		t.Fatal("node 2 lost the configs __consumer_offsets is created with")
	}
	if code := alterOn(t, ctx, cl, 2, topic, "__transaction_state", "retention.ms", "soon"); code != kerr.InvalidConfig.Code {
		t.Fatalf("an invalid value: error %d, want INVALID_CONFIG", code)
	}
	if !describedAs(t, ctx, cl, 1, topic, "__transaction_state", "retention.ms", "604800000", kmsg.ConfigSourceDefaultConfig) {
		t.Fatal("a refused change changed __transaction_state")
	}
}

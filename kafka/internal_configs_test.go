package kafka

import (
	"testing"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeConfigs of an internal topic answers its configs as a real
// Kafka 4.4 broker does: the ones Kafka creates it with set on the topic
// (DYNAMIC_TOPIC_CONFIG), every other at its default.
func TestDescribeConfigsInternalTopics(t *testing.T) {
	g := newSessionRig(t, Config{}, nil)
	for name, want := range map[string]map[string]string{
		resolver.OffsetsTopic: {"cleanup.policy": "compact", "compression.type": "producer", "segment.bytes": "104857600"},
		resolver.TransactionStateTopic: {"cleanup.policy": "compact", "compression.type": "uncompressed", "segment.bytes": "104857600",
			"min.insync.replicas": "1", "unclean.leader.election.enable": "false"},
	} {
		req := kmsg.NewPtrDescribeConfigsRequest()
		req.SetVersion(4)
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, name
		req.Resources = append(req.Resources, rr)
		res := ask(g.c, req).(*kmsg.DescribeConfigsResponse).Resources[0]
		if res.ErrorCode != 0 {
			t.Fatalf("%s: code %d", name, res.ErrorCode)
		}
		set := map[string]string{}
		for _, c := range res.Configs {
			if c.Source == kmsg.ConfigSourceDynamicTopicConfig && c.Value != nil {
				set[c.Name] = *c.Value
			}
		}
		if len(set) != len(want) {
			t.Fatalf("%s: set on the topic %v, want %v", name, set, want)
		}
		for k, v := range want {
			if set[k] != v {
				t.Fatalf("%s: %s=%q, want %q", name, k, set[k], v)
			}
		}
		if len(res.Configs) <= len(want) {
			t.Fatalf("%s: %d configs, defaults missing", name, len(res.Configs))
		}
	}
}

// The internal topics' configs are altered as any topic's, as a real Kafka
// 4.4 broker lets an admin do (test/kafkadiff configs-internal):
// IncrementalAlterConfigs adds to the configs the topic was created with,
// AlterConfigs replaces them all, an invalid value is INVALID_CONFIG.
func TestAlterConfigsInternalTopics(t *testing.T) {
	g := newSessionRig(t, Config{}, nil)
	for _, name := range []string{resolver.OffsetsTopic, resolver.TransactionStateTopic} {
		set := func() map[string]string {
			req := kmsg.NewPtrDescribeConfigsRequest()
			req.SetVersion(4)
			rr := kmsg.NewDescribeConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, name
			req.Resources = append(req.Resources, rr)
			out := map[string]string{}
			for _, c := range ask(g.c, req).(*kmsg.DescribeConfigsResponse).Resources[0].Configs {
				if c.Source == kmsg.ConfigSourceDynamicTopicConfig {
					out[c.Name] = *c.Value
				}
			}
			return out
		}
		inc := kmsg.NewPtrIncrementalAlterConfigsRequest()
		ir := kmsg.NewIncrementalAlterConfigsRequestResource()
		ir.ResourceType, ir.ResourceName = kmsg.ConfigResourceTypeTopic, name
		ic := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		ic.Name, ic.Value = "min.compaction.lag.ms", kmsg.StringPtr("1000")
		ir.Configs = append(ir.Configs, ic)
		inc.Resources = append(inc.Resources, ir)
		if r := ask(g.c, inc).(*kmsg.IncrementalAlterConfigsResponse).Resources[0]; r.ErrorCode != 0 {
			t.Fatalf("%s: incremental alter: %d %v", name, r.ErrorCode, r.ErrorMessage)
		}
		if got := set(); got["min.compaction.lag.ms"] != "1000" || got["cleanup.policy"] != "compact" || got["segment.bytes"] != "104857600" {
			t.Fatalf("%s: after the incremental alter %v", name, got)
		}
		legacy := func(value string) int16 {
			req := kmsg.NewPtrAlterConfigsRequest()
			rr := kmsg.NewAlterConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, name
			c := kmsg.NewAlterConfigsRequestResourceConfig()
			c.Name, c.Value = "cleanup.policy", kmsg.StringPtr(value)
			rr.Configs = append(rr.Configs, c)
			req.Resources = append(req.Resources, rr)
			return ask(g.c, req).(*kmsg.AlterConfigsResponse).Resources[0].ErrorCode
		}
		if code := legacy("shred"); code != kerr.InvalidConfig.Code {
			t.Fatalf("%s: an invalid value: %d", name, code)
		}
		if code := legacy("compact"); code != 0 {
			t.Fatalf("%s: legacy alter: %d", name, code)
		}
		if got := set(); len(got) != 1 || got["cleanup.policy"] != "compact" {
			t.Fatalf("%s: after the legacy alter %v, want cleanup.policy alone", name, got)
		}
	}
}

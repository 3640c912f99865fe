package kafka

import (
	"testing"

	"github.com/kgateway/kgateway/resolver"
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

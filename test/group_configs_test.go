package test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func describeGroupConfig(t *testing.T, g *gateway, group string, keys ...string) kmsg.DescribeConfigsResponseResource {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType, res.ResourceName, res.ConfigNames = kmsg.ConfigResourceTypeGroupConfig, group, keys
	req.Resources, req.IncludeSynonyms = append(req.Resources, res), true
	return request[*kmsg.DescribeConfigsResponse](t, g.client(), req).Resources[0]
}

func alterGroupConfig(t *testing.T, g *gateway, group, name, value string) int16 {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value = name, kmsg.StringPtr(value)
	res.Configs = append(res.Configs, c)
	req.Resources = append(req.Resources, res)
	return request[*kmsg.IncrementalAlterConfigsResponse](t, g.client(), req).Resources[0].ErrorCode
}

// KIP-848's consumer group configs on the GROUP resource, as Kafka 4.4
// answers them (kafkadiff configs-broker asks the real broker): a group
// never configured lists the broker's consumer.session.timeout.ms,
// DEFAULT_CONFIG, its synonym the broker config group.consumer.*; a value
// is bounded by the broker's min and max and must exceed the heartbeat
// interval (INVALID_CONFIG otherwise); a group's own heartbeat interval is
// what ConsumerGroupHeartbeat tells its members.
func TestGroupConsumerConfigs(t *testing.T) {
	g := newGateway(t)
	r := describeGroupConfig(t, g, "gc-none", "consumer.session.timeout.ms")
	if r.ErrorCode != 0 || len(r.Configs) != 1 {
		t.Fatalf("describe: code %d, %d configs", r.ErrorCode, len(r.Configs))
	}
	c := r.Configs[0]
	if c.Value == nil || *c.Value != "45000" || c.Source != kmsg.ConfigSourceDefaultConfig || c.ReadOnly ||
		len(c.ConfigSynonyms) != 1 || c.ConfigSynonyms[0].Name != "group.consumer.session.timeout.ms" {
		t.Fatalf("consumer.session.timeout.ms described as %+v", c)
	}
	for _, tc := range []struct {
		name, value string
		code        int16
	}{
		{"consumer.session.timeout.ms", "30000", kerr.InvalidConfig.Code}, // below group.consumer.min.session.timeout.ms
		{"consumer.session.timeout.ms", "70000", kerr.InvalidConfig.Code}, // above the max
		{"consumer.heartbeat.interval.ms", "4000", kerr.InvalidConfig.Code},
		{"consumer.session.timeout.ms", "50000", 0},
		{"consumer.heartbeat.interval.ms", "7000", 0},
	} {
		if code := alterGroupConfig(t, g, "gc", tc.name, tc.value); code != tc.code {
			t.Errorf("set %s=%s: code %d, want %d", tc.name, tc.value, code, tc.code)
		}
	}
	r = describeGroupConfig(t, g, "gc", "consumer.session.timeout.ms")
	if c := r.Configs[0]; *c.Value != "50000" || c.Source != 8 { // 8: DYNAMIC_GROUP_CONFIG
		t.Fatalf("set session timeout described as %s source %v", *c.Value, c.Source)
	}
	g.createTopic("gc-t", 1)
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.RebalanceTimeoutMillis = "gc", "gc-member-0123456789", 10000
	hb.SubscribedTopicNames, hb.Topics = []string{"gc-t"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	resp := request[*kmsg.ConsumerGroupHeartbeatResponse](t, g.client(), hb)
	if resp.ErrorCode != 0 || resp.HeartbeatIntervalMillis != 7000 {
		t.Fatalf("heartbeat: code %d interval %d, want the group's 7000", resp.ErrorCode, resp.HeartbeatIntervalMillis)
	}
}

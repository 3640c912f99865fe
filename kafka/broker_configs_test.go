package kafka

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Dynamic broker configs on the wire: IncrementalAlterConfigs on the
// cluster-wide default ("") and on this broker (its node id), described
// with their sources (DYNAMIC_DEFAULT_BROKER_CONFIG, DYNAMIC_BROKER_CONFIG)
// on the broker and as a topic config's synonyms; a read-only config is
// INVALID_REQUEST with Kafka's message, as Kafka answers.
func TestBrokerConfigsDynamic(t *testing.T) {
	g := newSessionRig(t, Config{NodeID: 3}, nil)
	if _, err := g.s.res.CreateTopic("t", 1, 1, nil, false); err != nil {
		t.Fatal(err)
	}
	alter := func(resource, name, value string) kmsg.IncrementalAlterConfigsResponseResource {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBroker, resource
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = name, kmsg.StringPtr(value)
		rr.Configs = append(rr.Configs, c)
		req.Resources = append(req.Resources, rr)
		return ask(g.c, req).(*kmsg.IncrementalAlterConfigsResponse).Resources[0]
	}
	describe := func(typ kmsg.ConfigResourceType, resource, name string) kmsg.DescribeConfigsResponseResourceConfig {
		req := kmsg.NewPtrDescribeConfigsRequest()
		req.SetVersion(4)
		req.IncludeSynonyms = true
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName, rr.ConfigNames = typ, resource, []string{name}
		req.Resources = append(req.Resources, rr)
		return ask(g.c, req).(*kmsg.DescribeConfigsResponse).Resources[0].Configs[0]
	}
	if r := alter("", "log.retention.ms", "7200000"); r.ErrorCode != 0 {
		t.Fatalf("default layer: %d %v", r.ErrorCode, r.ErrorMessage)
	}
	if r := alter("3", "log.segment.bytes", "1048576"); r.ErrorCode != 0 {
		t.Fatalf("this broker: %d %v", r.ErrorCode, r.ErrorMessage)
	}
	if c := describe(kmsg.ConfigResourceTypeBroker, "3", "log.retention.ms"); *c.Value != "7200000" || c.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig || c.ReadOnly {
		t.Fatalf("log.retention.ms: %v %v read-only %v", *c.Value, c.Source, c.ReadOnly)
	}
	if c := describe(kmsg.ConfigResourceTypeBroker, "3", "log.segment.bytes"); *c.Value != "1048576" || c.Source != kmsg.ConfigSourceDynamicBrokerConfig {
		t.Fatalf("log.segment.bytes: %v %v", *c.Value, c.Source)
	}
	c := describe(kmsg.ConfigResourceTypeTopic, "t", "segment.bytes")
	if *c.Value != "1048576" || c.Source != kmsg.ConfigSourceDynamicBrokerConfig || len(c.ConfigSynonyms) != 2 ||
		c.ConfigSynonyms[0].Name != "log.segment.bytes" || c.ConfigSynonyms[0].Source != kmsg.ConfigSourceDynamicBrokerConfig {
		t.Fatalf("topic segment.bytes: %v %v %+v", *c.Value, c.Source, c.ConfigSynonyms)
	}
	// The default resource describes its own layer only, as Kafka.
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.SetVersion(4)
	req.IncludeSynonyms = true
	dr := kmsg.NewDescribeConfigsRequestResource()
	dr.ResourceType = kmsg.ConfigResourceTypeBroker
	req.Resources = append(req.Resources, dr)
	if cs := ask(g.c, req).(*kmsg.DescribeConfigsResponse).Resources[0].Configs; len(cs) != 1 || cs[0].Name != "log.retention.ms" ||
		len(cs[0].ConfigSynonyms) != 1 || cs[0].Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
		t.Fatalf("the default resource: %+v", cs)
	}
	r := alter("3", "num.partitions", "3")
	if r.ErrorCode != kerr.InvalidRequest.Code || r.ErrorMessage == nil || *r.ErrorMessage != "Cannot update these configs dynamically: [num.partitions]" {
		t.Fatalf("read-only num.partitions: %d %v", r.ErrorCode, r.ErrorMessage)
	}
}

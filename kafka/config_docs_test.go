package kafka

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestConfigDocumentation: with include_documentation (v3+) every topic
// and broker config described has a description (topicconfig/docs.go),
// without it none has, as Kafka answers.
func TestConfigDocumentation(t *testing.T) {
	g := newSessionRig(t, Config{NodeID: 1}, map[string]int32{"t": 1})
	describe := func(typ kmsg.ConfigResourceType, name string, docs bool) []kmsg.DescribeConfigsResponseResourceConfig {
		req := kmsg.NewPtrDescribeConfigsRequest()
		req.SetVersion(4)
		req.IncludeDocumentation = docs
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = typ, name
		req.Resources = append(req.Resources, rr)
		res := ask(g.c, req).(*kmsg.DescribeConfigsResponse).Resources[0]
		if res.ErrorCode != 0 || len(res.Configs) == 0 {
			t.Fatalf("describe %v %q: %d, %d configs", typ, name, res.ErrorCode, len(res.Configs))
		}
		return res.Configs
	}
	for _, r := range []struct {
		typ  kmsg.ConfigResourceType
		name string
	}{{kmsg.ConfigResourceTypeTopic, "t"}, {kmsg.ConfigResourceTypeBroker, "1"}} {
		for _, c := range describe(r.typ, r.name, true) {
			if c.Documentation == nil || *c.Documentation == "" {
				t.Errorf("%v config %s has no documentation", r.typ, c.Name)
			}
		}
		for _, c := range describe(r.typ, r.name, false) {
			if c.Documentation != nil {
				t.Errorf("%v config %s has documentation %q though none was asked for", r.typ, c.Name, *c.Documentation)
			}
		}
	}
}

// TestBrokerCoordinatorConfigs: the broker configs Kafka describes for
// the coordinators' settings are described with kgateway's true values,
// read-only: Kafka's defaults as DEFAULT_CONFIG, a setting given at start
// as STATIC_BROKER_CONFIG over the default.
func TestBrokerCoordinatorConfigs(t *testing.T) {
	cfg := Config{NodeID: 1, Offsets: openOffsets(t, nil)}
	cfg.Txn.MaxTimeout = 2 * time.Minute
	g := newSessionRig(t, cfg, nil)
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.SetVersion(4)
	req.IncludeSynonyms = true
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
	req.Resources = append(req.Resources, rr)
	got := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
	for _, c := range ask(g.c, req).(*kmsg.DescribeConfigsResponse).Resources[0].Configs {
		got[c.Name] = c
	}
	for _, w := range []struct {
		name, value string
		source      kmsg.ConfigSource
		synonyms    int
	}{
		{"default.replication.factor", "1", kmsg.ConfigSourceDefaultConfig, 1},
		{"group.min.session.timeout.ms", "6000", kmsg.ConfigSourceDefaultConfig, 1},
		{"group.max.session.timeout.ms", "1800000", kmsg.ConfigSourceDefaultConfig, 1},
		{"group.consumer.session.timeout.ms", "45000", kmsg.ConfigSourceDefaultConfig, 1},
		{"group.consumer.min.session.timeout.ms", "45000", kmsg.ConfigSourceDefaultConfig, 1},
		{"group.consumer.max.session.timeout.ms", "60000", kmsg.ConfigSourceDefaultConfig, 1},
		{"group.share.session.timeout.ms", "45000", kmsg.ConfigSourceDefaultConfig, 1},
		{"offsets.retention.minutes", "10080", kmsg.ConfigSourceDefaultConfig, 1},
		{"transaction.max.timeout.ms", "120000", kmsg.ConfigSourceStaticBrokerConfig, 2},
	} {
		c, ok := got[w.name]
		if !ok {
			t.Errorf("%s is not described", w.name)
			continue
		}
		if *c.Value != w.value || c.Source != w.source || !c.ReadOnly || len(c.ConfigSynonyms) != w.synonyms {
			t.Errorf("%s = %s %v read-only %v synonyms %d, want %s %v read-only, %d synonyms",
				w.name, *c.Value, c.Source, c.ReadOnly, len(c.ConfigSynonyms), w.value, w.source, w.synonyms)
		}
	}
}

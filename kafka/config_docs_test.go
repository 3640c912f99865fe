package kafka

import (
	"testing"

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

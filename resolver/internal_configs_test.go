package resolver

import (
	"testing"

	"github.com/kgateway/kgateway/topicconfig"
)

// An internal topic's configs: the initial set until altered, then what
// the alteration left, across a restart.
func TestInternalTopicConfigsDurable(t *testing.T) {
	g := newGateway(t, Config{})
	initial := map[string]string{"cleanup.policy": "compact"}
	if set, err := g.r.DynamicConfigs().InternalTopicConfigs(OffsetsTopic, initial); err != nil || len(set) != 1 {
		t.Fatalf("initial: %v %v", set, err)
	}
	if err := g.r.DynamicConfigs().IncrementalAlterInternalTopicConfigs(OffsetsTopic, initial, []topicconfig.Op{{Name: "retention.ms", Op: topicconfig.OpSet, Value: "1000"}}, false); err != nil {
		t.Fatal(err)
	}
	g.reopen()
	if set, err := g.r.DynamicConfigs().InternalTopicConfigs(OffsetsTopic, initial); err != nil || set["retention.ms"] != "1000" || set["cleanup.policy"] != "compact" {
		t.Fatalf("after a restart: %v %v", set, err)
	}
}

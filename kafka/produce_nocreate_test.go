package kafka

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Produce never creates a topic, as in Kafka 4 (only Metadata and
// FindCoordinator do): a missing one is UNKNOWN_TOPIC_OR_PARTITION and
// stays missing, auto.create.topics.enable or not.
func TestProduceDoesNotAutoCreate(t *testing.T) {
	g := newSessionRig(t, Config{}, nil)
	if !g.s.res.AutoCreateTopics() {
		t.Fatal("the rig's resolver does not auto-create")
	}
	p := ask(g.c, produceReq(9, "never", 0)).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	if p.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("produce to a missing topic: %v", kerr.ErrorForCode(p.ErrorCode))
	}
	if _, ok := g.s.res.Topic("never"); ok {
		t.Fatal("produce created the topic")
	}
}

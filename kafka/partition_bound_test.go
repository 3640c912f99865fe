package kafka

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// partitions.max bounds the partitions of all topics together:
// CreateTopics, CreatePartitions and auto-creation by Metadata beyond it
// answer POLICY_VIOLATION and create nothing; within it they succeed.
func TestMaxPartitions(t *testing.T) {
	g := newSessionRig(t, Config{MaxPartitions: 6}, map[string]int32{"four": 4})
	create := func(name string, n int32) int16 {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.SetVersion(7)
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, n, 1
		req.Topics = append(req.Topics, rt)
		return ask(g.c, req).(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode
	}
	grow := func(name string, count int32) int16 {
		req := kmsg.NewPtrCreatePartitionsRequest()
		req.SetVersion(3)
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = name, count
		req.Topics = append(req.Topics, rt)
		return ask(g.c, req).(*kmsg.CreatePartitionsResponse).Topics[0].ErrorCode
	}
	autoCreate := func(name string) int16 {
		req := kmsg.NewPtrMetadataRequest()
		req.SetVersion(12)
		req.AllowAutoTopicCreation = true
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, rt)
		return ask(g.c, req).(*kmsg.MetadataResponse).Topics[0].ErrorCode
	}
	want := func(what string, got int16, code int16) {
		t.Helper()
		if got != code {
			t.Fatalf("%s: %v, want %v", what, kerr.ErrorForCode(got), kerr.ErrorForCode(code))
		}
	}
	want("3 more of 6 with 4", create("three", 3), kerr.PolicyViolation.Code)
	want("2 more of 6 with 4", create("two", 2), 0)
	want("growing to beyond", grow("four", 5), kerr.PolicyViolation.Code)
	want("auto-creating one more", autoCreate("auto"), kerr.PolicyViolation.Code)
	if _, ok := g.s.res.Topic("three"); ok {
		t.Fatal("a refused topic exists")
	}
	if n, _ := g.s.res.Partitions("four"); n != 4 {
		t.Fatalf("a refused growth left %d partitions", n)
	}
}

package kafka

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Auto-creation by Metadata answers as Kafka does: the request that
// starts it gets UNKNOWN_TOPIC_OR_PARTITION without partitions, and the
// topic appears once the creation, running on, ends; a deleted topic is
// created again the same way (what kafka-go's TestConn/test_delete_topics
// sees).
func TestMetadataAutoCreateAnswersFirstRequestWithoutTopic(t *testing.T) {
	g := newSessionRig(t, Config{}, nil)
	md := func() kmsg.MetadataResponseTopic {
		req := kmsg.NewPtrMetadataRequest()
		req.SetVersion(12)
		req.AllowAutoTopicCreation = true
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr("auto")
		req.Topics = append(req.Topics, rt)
		return ask(g.c, req).(*kmsg.MetadataResponse).Topics[0]
	}
	for round := range 2 {
		if mt := md(); mt.ErrorCode != kerr.UnknownTopicOrPartition.Code || len(mt.Partitions) != 0 {
			t.Fatalf("round %d, creating request: error %d, %d partitions", round, mt.ErrorCode, len(mt.Partitions))
		}
		var last kmsg.MetadataResponseTopic
		waitFor(t, "the auto-created topic", func() bool {
			last = md()
			return last.ErrorCode == 0
		})
		if len(last.Partitions) != 1 {
			t.Fatalf("round %d: %d partitions", round, len(last.Partitions))
		}
		del := kmsg.NewPtrDeleteTopicsRequest()
		del.SetVersion(5)
		del.TopicNames = []string{"auto"}
		del.TimeoutMillis = 5000
		if r := ask(g.c, del).(*kmsg.DeleteTopicsResponse); r.Topics[0].ErrorCode != 0 {
			t.Fatalf("delete: error %d", r.Topics[0].ErrorCode)
		}
	}
}

package kafka

// DescribeTopicPartitions (key 75), version 0 (KIP-966; flexible).
//
// Topics by name (none: every topic Metadata lists, internal ones too),
// in name order, cut into pages (kafka/paging): at most
// response_partition_limit partitions, capped at
// max.request.partition.size.limit (2000) and at least 1, and a next
// cursor where the page was cut. A cursor whose topic is not among the
// named ones, or whose partition is negative, is INVALID_REQUEST for
// every named topic. Partitions are described as Metadata describes them
// (leader, epoch, the leader alone as replicas and ISR; leader -1 and no
// replicas while a cluster partition has no owner, leaders at their epochs), with empty
// eligible and last-known ELR (KIP-966: one replica, none other
// eligible). A named topic that does not exist is
// UNKNOWN_TOPIC_OR_PARTITION, or INVALID_TOPIC_EXCEPTION for an invalid
// name; topics are never auto-created.
// Authorization as Metadata's (per-API authorization): a topic the principal may not
// DESCRIBE is left out of an all-topics answer and, when named, answered
// TOPIC_AUTHORIZATION_FAILED with no id, after the page (it takes no
// part of the limit). Every other topic carries its authorized
// operations, as Kafka fills them always.

import (
	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/topicview"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleDescribeTopicPartitions(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.DescribeTopicPartitionsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
	topicview.DescribePage(s.view(), r, resp, topicAllowed(rc, auth.OpDescribe), func(topic string) int32 {
		return rc.operations(auth.ResourceTopic, topic)
	})
	return resp, nil
}

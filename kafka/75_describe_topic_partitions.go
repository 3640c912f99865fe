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
	"slices"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/paging"
	"github.com/kgateway/kgateway/kafka/topicview"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxRequestPartitionSizeLimit is Kafka's max.request.partition.size.limit.
const maxRequestPartitionSizeLimit = 2000

func handleDescribeTopicPartitions(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.DescribeTopicPartitionsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
	all := len(r.Topics) == 0
	var names []string
	if all {
		names = topicview.AllTopicNames(s.view())
	} else {
		for _, t := range r.Topics {
			names = append(names, t.Topic)
		}
	}
	var cursor *paging.Mark
	if c := r.Cursor; c != nil {
		cursor = &paging.Mark{Topic: c.Topic, Partition: c.Partition}
		if (!all && !slices.Contains(names, c.Topic)) || c.Partition < 0 {
			for _, name := range names {
				resp.Topics = append(resp.Topics, topicview.DescribeError(name, kerr.InvalidRequest.Code))
			}
			return resp, nil
		}
	}
	describe := topicAllowed(rc, auth.OpDescribe)
	var allowed, refused []string
	for _, name := range names {
		switch {
		case cursor != nil && name < cursor.Topic:
		case describe(name):
			allowed = append(allowed, name)
		case !all:
			refused = append(refused, name)
		}
	}
	page := paging.Cut(allowed, s.partitionCount, cursor, paging.Limit(r.ResponsePartitionLimit, maxRequestPartitionSizeLimit), all)
	for _, e := range page.Entries {
		t := topicview.Describe(s.view(), e)
		t.AuthorizedOperations = rc.operations(auth.ResourceTopic, e.Topic)
		resp.Topics = append(resp.Topics, t)
	}
	if page.Next != nil {
		resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: page.Next.Topic, Partition: page.Next.Partition}
	}
	slices.Sort(refused)
	for _, name := range slices.Compact(refused) {
		resp.Topics = append(resp.Topics, topicview.DescribeError(name, kerr.TopicAuthorizationFailed.Code))
	}
	return resp, nil
}

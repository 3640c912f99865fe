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
	"github.com/kgateway/kgateway/kafka/topicadmin"
	"github.com/kgateway/kgateway/resolver"
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
		names = s.allTopicNames()
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
				resp.Topics = append(resp.Topics, dtpError(name, kerr.InvalidRequest.Code))
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
		t := s.dtpTopic(e)
		t.AuthorizedOperations = rc.operations(auth.ResourceTopic, e.Topic)
		resp.Topics = append(resp.Topics, t)
	}
	if page.Next != nil {
		resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: page.Next.Topic, Partition: page.Next.Partition}
	}
	slices.Sort(refused)
	for _, name := range slices.Compact(refused) {
		resp.Topics = append(resp.Topics, dtpError(name, kerr.TopicAuthorizationFailed.Code))
	}
	return resp, nil
}

// dtpError is a topic answered with code alone: no id, no partitions.
func dtpError(name string, code int16) kmsg.DescribeTopicPartitionsResponseTopic {
	t := kmsg.NewDescribeTopicPartitionsResponseTopic()
	t.Topic, t.ErrorCode = kmsg.StringPtr(name), code
	return t
}

// dtpTopic describes one page entry.
func (s *Server) dtpTopic(e paging.Entry) kmsg.DescribeTopicPartitionsResponseTopic {
	if e.Missing {
		code := kerr.UnknownTopicOrPartition.Code
		if !topicadmin.ValidName(e.Topic) {
			code = kerr.InvalidTopicException.Code
		}
		return dtpError(e.Topic, code)
	}
	t := kmsg.NewDescribeTopicPartitionsResponseTopic()
	t.Topic = kmsg.StringPtr(e.Topic)
	t.IsInternal = resolver.IsInternalTopic(e.Topic)
	if t.IsInternal {
		t.TopicID, _ = s.res.InternalTopicID(e.Topic)
	} else if rt, ok := s.res.Topic(e.Topic); ok {
		t.TopicID, t.IsInternal = rt.ID, rt.Companion // as in Metadata
	}
	t.Partitions = []kmsg.DescribeTopicPartitionsResponseTopicPartition{}
	for p := e.From; p < e.To; p++ {
		t.Partitions = append(t.Partitions, s.dtpPartition(e.Topic, p))
	}
	return t
}

func (s *Server) dtpPartition(topic string, partition int32) kmsg.DescribeTopicPartitionsResponseTopicPartition {
	p := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
	p.Partition = partition
	p.EligibleLeaderReplicas, p.LastKnownELR = []int32{}, []int32{}
	node, epoch, ok := s.leader(topic, partition)
	if !ok {
		p.LeaderID, p.LeaderEpoch = -1, -1
		p.Replicas, p.ISR = []int32{}, []int32{}
		return p
	}
	p.LeaderID, p.LeaderEpoch = node, epoch
	p.Replicas, p.ISR = []int32{node}, []int32{node}
	return p
}

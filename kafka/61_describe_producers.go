package kafka

// DescribeProducers (key 61), version 0.
//
//   v0  the active producers of partitions (KIP-664): producer id and
//       epoch, last sequence and timestamp, the coordinator epoch of its
//       last marker, and the start offset of its open transaction.
//
// A partition lists the idempotent and transactional producers whose state
// it keeps (producer expiry, the producer cap) and every producer with an open transaction
// there. An unknown topic or partition answers UNKNOWN_TOPIC_OR_PARTITION
// for it; in cluster mode a partition led elsewhere is
// NOT_LEADER_OR_FOLLOWER (NOT_LEADER_OR_FOLLOWER routing). Left out: nothing.

import (
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleDescribeProducers(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.DescribeProducersRequest)
	resp := r.ResponseKind().(*kmsg.DescribeProducersResponse)
	resp.Topics = make([]kmsg.DescribeProducersResponseTopic, len(r.Topics))
	for i, rt := range r.Topics {
		t := &resp.Topics[i]
		*t = kmsg.NewDescribeProducersResponseTopic()
		t.Topic = rt.Topic
		t.Partitions = make([]kmsg.DescribeProducersResponseTopicPartition, len(rt.Partitions))
		for j, part := range rt.Partitions {
			t.Partitions[j] = s.describeProducers(rt.Topic, part)
		}
	}
	return resp, nil
}

func (s *Server) describeProducers(topic string, partition int32) kmsg.DescribeProducersResponseTopicPartition {
	out := kmsg.NewDescribeProducersResponseTopicPartition()
	out.Partition = partition
	ps, err := s.producersOf(topic, partition)
	if err != nil {
		out.ErrorCode, out.ErrorMessage = errCode(err), errMessage(err)
		return out
	}
	out.ActiveProducers = make([]kmsg.DescribeProducersResponseTopicPartitionActiveProducer, len(ps))
	for i, p := range ps {
		a := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
		a.ProducerID, a.ProducerEpoch = p.ProducerID, int32(p.Epoch)
		a.LastSequence, a.LastTimestamp = p.LastSequence, p.LastTimestamp
		a.CoordinatorEpoch, a.CurrentTxnStartOffset = p.CoordinatorEpoch, int64(p.TxnStartOffset)
		out.ActiveProducers[i] = a
	}
	return out
}

func (s *Server) producersOf(topic string, partition int32) ([]resolver.ProducerState, error) {
	if _, err := s.partitionOf(topic, partition, false); err != nil {
		return nil, err
	}
	if err := s.routeError(topic, partition, noLeaderEpoch); err != nil { // NOT_LEADER_OR_FOLLOWER routing
		return nil, err
	}
	if resolver.IsInternalTopic(topic) { // nothing is ever produced to it
		return nil, nil
	}
	return s.res.Producers(topic, partition)
}

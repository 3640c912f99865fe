package kafka

// DeleteRecords (key 21), versions 0–2.
//
//   v0  per partition, delete the records below an offset; the response
//       carries the new low watermark (log start offset).
//   v1  nothing new (throttling after the response).
//   v2  flexible.
//
// The resolver soft-trims: the log start moves to the offset, reads below
// it are OFFSET_OUT_OF_RANGE, and whole ledgers below it are removed.
// Offset -1 means the high watermark; an offset past the high watermark
// is OFFSET_OUT_OF_RANGE; one at or below the log start changes nothing
// and returns the current low watermark.
// In cluster mode a partition led elsewhere is NOT_LEADER_OR_FOLLOWER (NOT_LEADER_OR_FOLLOWER routing).
// Left out: request timeouts (the trim is synchronous and durable before
// the response).

import (
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleDeleteRecords(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.DeleteRecordsRequest)
	resp := r.ResponseKind().(*kmsg.DeleteRecordsResponse)
	for _, rt := range r.Topics {
		t := kmsg.NewDeleteRecordsResponseTopic()
		t.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			t.Partitions = append(t.Partitions, s.deleteRecords(rt.Topic, rp))
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp, nil
}

func (s *Server) deleteRecords(topic string, rp kmsg.DeleteRecordsRequestTopicPartition) kmsg.DeleteRecordsResponseTopicPartition {
	out := kmsg.NewDeleteRecordsResponseTopicPartition()
	out.Partition, out.LowWatermark = rp.Partition, -1
	if _, err := s.partitionOf(topic, rp.Partition, false); err != nil {
		out.ErrorCode = errCode(err)
		return out
	}
	if err := s.routeError(topic, rp.Partition, noLeaderEpoch); err != nil { // NOT_LEADER_OR_FOLLOWER routing
		out.ErrorCode = errCode(err)
		return out
	}
	if resolver.IsInternalTopic(topic) { // as Kafka: records of an internal topic are not deleted
		out.ErrorCode = errCode(internalTopicErr(topic))
		return out
	}
	low, err := s.res.DeleteRecords(topic, rp.Partition, resolver.Offset(rp.Offset))
	if err != nil {
		out.ErrorCode = errCode(err)
		return out
	}
	out.LowWatermark = int64(low)
	return out
}

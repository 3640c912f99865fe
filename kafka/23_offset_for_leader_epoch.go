package kafka

// OffsetForLeaderEpoch (key 23), versions 0–4.
//
//   v1  the leader epoch of the returned end offset.
//   v2  the client's current leader epoch (fencing).
//   v3  replica id.      v4  flexible.
//
// There is one leader epoch, 0, for every partition. Asking for epoch 0 (or
// an older, negative one) returns epoch 0 ending at the high watermark, so
// clients' truncation checks after a leader change pass; asking for a
// later epoch returns epoch -1 and offset -1, as Kafka does for epochs it
// has never seen. A current epoch above 0 is UNKNOWN_LEADER_EPOCH, one
// below 0 other than -1 (none) FENCED_LEADER_EPOCH.
// Left out: a per-partition epoch history (nothing ever changes leader).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// leaderEpoch is the only leader epoch: this broker has always led.
const leaderEpoch = 0

// noLeaderEpoch is the current leader epoch of a client that knows none.
const noLeaderEpoch = -1

// leaderEpochError checks a client's current leader epoch against ours,
// as Kafka's Partition.checkCurrentLeaderEpoch does: an older epoch is
// FENCED_LEADER_EPOCH (the client's metadata is stale), a newer one
// UNKNOWN_LEADER_EPOCH (the client knows of a leader we do not); -1 is
// no epoch and is not checked. OffsetForLeaderEpoch v2+ and Fetch v9+
// (for epochs >= 0, as Kafka reads a negative one as absent) check it.
func leaderEpochError(current int32) error {
	switch {
	case current == noLeaderEpoch:
		return nil
	case current < leaderEpoch:
		return kerr.FencedLeaderEpoch
	case current > leaderEpoch:
		return kerr.UnknownLeaderEpoch
	}
	return nil
}

func handleOffsetForLeaderEpoch(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.OffsetForLeaderEpochRequest)
	resp := r.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	resp.Topics = make([]kmsg.OffsetForLeaderEpochResponseTopic, len(r.Topics))
	for i, rt := range r.Topics {
		t := &resp.Topics[i]
		*t = kmsg.NewOffsetForLeaderEpochResponseTopic()
		t.Topic = rt.Topic
		t.Partitions = make([]kmsg.OffsetForLeaderEpochResponseTopicPartition, len(rt.Partitions))
		for j, rp := range rt.Partitions {
			t.Partitions[j] = s.epochEnd(rt.Topic, rp, r.Version)
		}
	}
	return resp, nil
}

func (s *Server) epochEnd(topic string, rp kmsg.OffsetForLeaderEpochRequestTopicPartition, version int16) kmsg.OffsetForLeaderEpochResponseTopicPartition {
	out := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
	out.Partition = rp.Partition
	out.LeaderEpoch, out.EndOffset = -1, -1
	if _, err := s.partitionOf(topic, rp.Partition, false); err != nil {
		out.ErrorCode = errCode(err)
		return out
	}
	if err := leaderEpochError(rp.CurrentLeaderEpoch); version >= 2 && err != nil {
		out.ErrorCode = errCode(err)
		return out
	}
	if rp.LeaderEpoch > leaderEpoch {
		return out
	}
	_, hwm, _, err := s.bounds(topic, rp.Partition)
	if err != nil {
		out.ErrorCode = errCode(err)
		return out
	}
	out.LeaderEpoch, out.EndOffset = leaderEpoch, int64(hwm)
	return out
}

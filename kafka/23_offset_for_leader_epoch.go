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
// In cluster mode (NOT_LEADER_OR_FOLLOWER routing, the leader epoch check) the epoch is the partition's ownership epoch,
// the current epoch is checked against it and a partition led elsewhere
// is NOT_LEADER_OR_FOLLOWER; any epoch up to the current one ends at the
// high watermark, since acknowledged records are never truncated there.
// Left out: a per-partition epoch history.

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
	return epochError(current, leaderEpoch)
}

// epochError is leaderEpochError against the partition's epoch, which in
// cluster mode is its ownership's fencing epoch (the leader epoch check).
func epochError(current, epoch int32) error {
	switch {
	case current == noLeaderEpoch:
		return nil
	case current < epoch:
		return kerr.FencedLeaderEpoch
	case current > epoch:
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
	current := rp.CurrentLeaderEpoch
	if version < 2 {
		current = noLeaderEpoch // v0–v1 carry none
	}
	if err := s.epochEndRouteError(topic, rp.Partition, current); err != nil {
		out.ErrorCode = errCode(err)
		return out
	}
	epoch := s.currentEpochOf(topic, rp.Partition)
	if rp.LeaderEpoch > epoch {
		return out
	}
	_, hwm, _, err := s.bounds(topic, rp.Partition)
	if err != nil {
		out.ErrorCode = errCode(err)
		return out
	}
	out.LeaderEpoch, out.EndOffset = epoch, int64(hwm)
	return out
}

// epochEndRouteError checks the client's current epoch: against the one
// epoch 0 on a single node, against the partition's epoch and leader in
// cluster mode (NOT_LEADER_OR_FOLLOWER routing, the leader epoch check).
func (s *Server) epochEndRouteError(topic string, partition, current int32) error {
	if s.cfg.Cluster != nil {
		return s.routeError(topic, partition, current)
	}
	return leaderEpochError(current)
}

package logoffsets

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

import "github.com/twmb/franz-go/pkg/kmsg"

// EpochEnds answers OffsetForLeaderEpoch over log.
func EpochEnds(log Log, r *kmsg.OffsetForLeaderEpochRequest) *kmsg.OffsetForLeaderEpochResponse {
	resp := r.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	resp.Topics = make([]kmsg.OffsetForLeaderEpochResponseTopic, len(r.Topics))
	for i, rt := range r.Topics {
		t := &resp.Topics[i]
		*t = kmsg.NewOffsetForLeaderEpochResponseTopic()
		t.Topic = rt.Topic
		t.Partitions = make([]kmsg.OffsetForLeaderEpochResponseTopicPartition, len(rt.Partitions))
		for j, rp := range rt.Partitions {
			t.Partitions[j] = epochEnd(log, rt.Topic, rp, r.Version)
		}
	}
	return resp
}

func epochEnd(log Log, topic string, rp kmsg.OffsetForLeaderEpochRequestTopicPartition, version int16) kmsg.OffsetForLeaderEpochResponseTopicPartition {
	out := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
	out.Partition = rp.Partition
	out.LeaderEpoch, out.EndOffset = -1, -1
	if err := log.Exists(topic, rp.Partition); err != nil {
		out.ErrorCode = log.ErrorCode(err)
		return out
	}
	current := rp.CurrentLeaderEpoch
	if version < 2 {
		current = NoEpoch // v0–v1 carry none
	}
	if err := log.EpochRouted(topic, rp.Partition, current); err != nil {
		out.ErrorCode = log.ErrorCode(err)
		return out
	}
	epoch := log.Epoch(topic, rp.Partition)
	if rp.LeaderEpoch > epoch {
		return out
	}
	_, hwm, _, err := log.Bounds(topic, rp.Partition)
	if err != nil {
		out.ErrorCode = log.ErrorCode(err)
		return out
	}
	out.LeaderEpoch, out.EndOffset = epoch, hwm
	return out
}

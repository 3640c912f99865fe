package logoffsets

// ListOffsets (key 2), versions 1–11.
//
//   v1  one offset and its timestamp per partition (v0's offset lists are
//       left out).
//   v2  isolation level: under read_committed "latest" is the last stable
//       offset, and a timestamp lookup answers only offsets below it.
//   v3  nothing new.   v4  leader epochs (always 0 here).
//   v5  nothing new.   v6  flexible.   v7  -3: the max-timestamp offset.
//   v8  -4: the earliest local offset (KIP-405: the first offset not only
//       in the object store).   v9  -5: the latest tiered offset
//       (KIP-1005: the last offset in a published object, -1 if none).
//   v10 a timeout for lookups in remote storage (KIP-1075): kgateway's
//       lookups in its object tier answer from the published objects'
//       metadata, without waiting on the store, so no lookup outlasts it.
//   v11 -6: the earliest offset pending upload (KIP-1023): for a topic
//       with remote.storage.enable the offset after the last one in a
//       published object (the log start while none is published); -1
//       for any other topic, as Kafka answers without remote storage.
//
// Timestamp -1 is the high watermark, -2 the log start offset, -3 the
// first record carrying the largest timestamp; any other timestamp finds
// the first batch whose max timestamp is at or after it and answers the
// first record in it at or after it (decompressing the batch if need be),
// as Kafka does: that record's offset and timestamp, or offset and
// timestamp -1 when there is none.
// In cluster mode (NOT_LEADER_OR_FOLLOWER routing, the leader epoch check) the leader epoch is the partition's ownership
// epoch, a v4+ current leader epoch is checked against it and a partition
// led elsewhere is NOT_LEADER_OR_FOLLOWER; a single node does not check
// the current epoch.
// A special timestamp newer than the request's version (-3 below v7, -4
// below v8, -5 below v9, -6 below v11) is UNSUPPORTED_VERSION
// for its partition, as Kafka answers. An answer that finds no offset
// (offset -1) carries leader epoch -1, as Kafka's does.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The ListOffsets timestamps that name an offset rather than a time.
const (
	Latest        = -1
	Earliest      = -2
	EarliestLocal = -4
)

// readCommitted is the read_committed isolation level.
const readCommitted = 1

// specialSince is the first ListOffsets version a special timestamp may be
// sent at: -3 max timestamp (KIP-734), -4 earliest local (KIP-405), -5
// latest tiered (KIP-1005), -6 earliest pending upload (KIP-1023).
var specialSince = map[int64]int16{-3: 7, -4: 8, -5: 9, -6: 11}

// List answers ListOffsets over log.
func List(log Log, r *kmsg.ListOffsetsRequest) *kmsg.ListOffsetsResponse {
	resp := r.ResponseKind().(*kmsg.ListOffsetsResponse)
	committed := r.Version >= 2 && r.IsolationLevel == readCommitted
	resp.Topics = make([]kmsg.ListOffsetsResponseTopic, len(r.Topics))
	for i, rt := range r.Topics {
		t := &resp.Topics[i]
		*t = kmsg.NewListOffsetsResponseTopic()
		t.Topic = rt.Topic
		t.Partitions = make([]kmsg.ListOffsetsResponseTopicPartition, len(rt.Partitions))
		for j, rp := range rt.Partitions {
			if r.Version < 4 {
				rp.CurrentLeaderEpoch = NoEpoch // v1–v3 carry none
			}
			if since, ok := specialSince[rp.Timestamp]; ok && r.Version < since {
				p := kmsg.NewListOffsetsResponseTopicPartition()
				p.Partition, p.ErrorCode = rp.Partition, kerr.UnsupportedVersion.Code
				p.Timestamp, p.Offset, p.LeaderEpoch = -1, -1, -1
				t.Partitions[j] = p
				continue
			}
			t.Partitions[j] = listOffset(log, rt.Topic, rp, committed)
			if p := &t.Partitions[j]; p.ErrorCode == 0 && p.Offset < 0 {
				p.LeaderEpoch = -1 // no offset found
			}
		}
	}
	return resp
}

func listOffset(log Log, topic string, rp kmsg.ListOffsetsRequestTopicPartition, readCommitted bool) kmsg.ListOffsetsResponseTopicPartition {
	out := kmsg.NewListOffsetsResponseTopicPartition()
	out.Partition = rp.Partition
	out.Timestamp, out.Offset, out.LeaderEpoch = -1, -1, 0
	if err := log.Exists(topic, rp.Partition); err != nil {
		out.ErrorCode, out.LeaderEpoch = log.ErrorCode(err), -1
		return out
	}
	if err := log.Routed(topic, rp.Partition, rp.CurrentLeaderEpoch); err != nil { // NOT_LEADER_OR_FOLLOWER routing, the leader epoch check
		out.ErrorCode, out.LeaderEpoch = log.ErrorCode(err), -1
		return out
	}
	out.LeaderEpoch = log.Epoch(topic, rp.Partition)
	if rp.Timestamp == Latest && readCommitted {
		_, _, lso, err := log.Bounds(topic, rp.Partition)
		out.ErrorCode, out.Offset = log.ErrorCode(err), lso
		if err != nil {
			out.Offset = -1
		}
		return out
	}
	off, ts, err := log.ListOffset(topic, rp.Partition, rp.Timestamp)
	if err != nil {
		out.ErrorCode = log.ErrorCode(err)
		return out
	}
	if readCommitted && rp.Timestamp != Earliest && off >= 0 {
		// Kafka answers only offsets a read_committed consumer can fetch:
		// below the last stable offset.
		_, _, lso, err := log.Bounds(topic, rp.Partition)
		if err != nil {
			out.ErrorCode = log.ErrorCode(err)
			return out
		}
		if off >= lso {
			return out
		}
	}
	out.Offset, out.Timestamp = off, ts
	return out
}

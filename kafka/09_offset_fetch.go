package kafka

// OffsetFetch (key 9), versions 0–10.
//
//   v1  same shape (Kafka-stored offsets instead of ZooKeeper).
//   v2  top-level error code; null topics fetch every committed offset.
//   v3  throttle time.
//   v5  leader epoch.
//   v6  flexible.
//   v7  require-stable (KIP-447).
//   v8  several groups in one request.
//   v9  member id and epoch, checked against a consumer group (commits at the member epoch).
//   v10 topics by id instead of by name (KIP-848): an unknown id is
//       UNKNOWN_TOPIC_ID for each of its partitions; a fetch of all
//       topics leaves out committed topics that no longer exist, which
//       have no id to name them by (kafka/topicid).
//
// A partition without a commit is offset -1, metadata "". With
// require-stable a partition holding a pending transactional offset
// (TxnOffsetCommit of a transaction not yet ended, offsets O7) is
// UNSTABLE_OFFSET_COMMIT, and the client retries.

import "github.com/twmb/franz-go/pkg/kmsg"

func handleOffsetFetch(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.coordinator()
	if err != nil {
		return nil, err
	}
	return c.OffsetFetch(req.(*kmsg.OffsetFetchRequest)), nil
}

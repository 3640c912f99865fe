package kafka

// OffsetCommit (key 8), versions 0–10.
//
//   v1  generation, member id and a per-partition commit timestamp.
//   v2  retention time replaces the timestamp (v2–v4).
//   v3  throttle time.
//   v5  retention time removed (KIP-211).
//   v6  committed leader epoch.
//   v7  group instance id (static members, KIP-345).
//   v8  flexible.
//   v9  the member epoch of a consumer group (KIP-848) in the generation
//       field: STALE_MEMBER_EPOCH when not current (commits at the member epoch).
//   v10 topics by id instead of by name (KIP-848): an unknown id is
//       UNKNOWN_TOPIC_ID for each of its partitions (kafka/topicid).
//
// The coordinator acknowledges only durable commits (O1); commits with
// generation -1 (simple consumers, with or without a member id) go into an
// Empty or absent group.
// Left out: the per-commit retention time (offsets.retention.minutes
// governs).

import (
	"github.com/kgateway/kgateway/kafka/share"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleOffsetCommit(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.coordinator()
	if err != nil {
		return nil, err
	}
	r := req.(*kmsg.OffsetCommitRequest)
	if s.isShareGroup(r.Group) { // One group-id namespace: a share group commits no offsets
		return share.OffsetCommitAnswer(r), nil
	}
	if !s.admitGroup(rc, r.Group) {
		return commitRefused(r, errGroupBound), nil
	}
	return c.OffsetCommit(r), nil
}

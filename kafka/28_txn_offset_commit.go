package kafka

// TxnOffsetCommit (key 28), versions 0–6.
//
//   v1  same as v0.
//   v2  committed leader epoch.
//   v3  flexible; generation, member id and group instance id (KIP-447),
//       checked as OffsetCommit checks them.
//   v4  TRANSACTION_ABORTABLE may be returned (never is).
//   v5  transaction version 2: the group is added to the transaction by
//       this request, no AddOffsetsToTxn (KIP-890 implicit adds).
//   v6  topics by id instead of by name (KIP-1319): an unknown id is
//       UNKNOWN_TOPIC_ID (kafka/topicid).
//
// The offsets are stored pending (offsets O5): invisible to OffsetFetch
// until the transaction commits, dropped if it aborts (pending TxnOffsetCommit offsets).

import "github.com/twmb/franz-go/pkg/kmsg"

func handleTxnOffsetCommit(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.txnCoordinator()
	if err != nil {
		return nil, err
	}
	g, err := s.coordinator()
	if err != nil {
		return nil, err
	}
	return c.TxnOffsetCommit(req.(*kmsg.TxnOffsetCommitRequest), g), nil
}

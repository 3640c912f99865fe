package kafka

// AddOffsetsToTxn (key 25), versions 0–3.
//
//   v1  same as v0.
//   v2  PRODUCER_FENCED may be returned (KIP-588).
//   v3  flexible.
//
// The group joins the producer's transaction: its TxnOffsetCommit offsets
// commit or abort with it (X15); at transaction version 2 TxnOffsetCommit
// v5+ adds the group itself (X18). Left out: v4+ (TRANSACTION_ABORTABLE,
// KIP-890).

import "github.com/twmb/franz-go/pkg/kmsg"

func handleAddOffsetsToTxn(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.txnCoordinator()
	if err != nil {
		return nil, err
	}
	return c.AddOffsetsToTxn(req.(*kmsg.AddOffsetsToTxnRequest)), nil
}

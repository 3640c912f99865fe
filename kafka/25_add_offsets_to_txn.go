package kafka

// AddOffsetsToTxn (key 25), versions 0–4.
//
//   v1  same as v0.
//   v2  PRODUCER_FENCED may be returned (KIP-588).
//   v3  flexible.
//   v4  TRANSACTION_ABORTABLE may be returned (KIP-890); as in Kafka's
//       coordinator, adding a group never fails a transaction, so it
//       never is.
//
// The group joins the producer's transaction: its TxnOffsetCommit offsets
// commit or abort with it (pending TxnOffsetCommit offsets); at transaction version 2 TxnOffsetCommit
// v5+ adds the group itself (KIP-890 implicit adds).

import "github.com/twmb/franz-go/pkg/kmsg"

func handleAddOffsetsToTxn(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.txnCoordinator()
	if err != nil {
		return nil, err
	}
	return c.AddOffsetsToTxn(req.(*kmsg.AddOffsetsToTxnRequest)), nil
}

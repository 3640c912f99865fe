package kafka

// EndTxn (key 26), versions 0–4.
//
//   v1  same as v0.
//   v2  PRODUCER_FENCED may be returned (KIP-588).
//   v3  flexible.
//   v4  TRANSACTION_ABORTABLE may be returned (never is: there is no
//       transaction version 2 here).
//
// The coordinator writes the decision durably, then a COMMIT or ABORT
// marker on every partition of the transaction, then commits or drops its
// pending offsets with the completed state in one batch (X13), before it
// answers. Left out: v5+ (transaction version 2, KIP-890 part 2).

import "github.com/twmb/franz-go/pkg/kmsg"

func handleEndTxn(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.txnCoordinator()
	if err != nil {
		return nil, err
	}
	return c.EndTxn(req.(*kmsg.EndTxnRequest)), nil
}

package kafka

// EndTxn (key 26), versions 0–5.
//
//   v1  same as v0.
//   v2  PRODUCER_FENCED may be returned (KIP-588).
//   v3  flexible.
//   v4  TRANSACTION_ABORTABLE may be returned (never is).
//   v5  transaction version 2 (KIP-890 part 2): the producer epoch is
//       bumped at the end of every transaction, the markers carry the
//       bumped epoch, and the new producer id and epoch are returned
//       (the epoch bump at EndTxn, EndTxn retries across the bump).
//
// The coordinator writes the decision durably and answers (answer once
// decided, as Kafka answers once PrepareCommit is in its log), then
// writes a COMMIT or ABORT marker on every partition of the transaction,
// then commits or drops its pending offsets with the completed state in
// one batch (durable partition adds), under the transactional id's lock:
// the id's next request waits for all of it. Until then its offsets are
// pending (require_stable: UNSTABLE_OFFSET_COMMIT, as from Kafka).

import "github.com/twmb/franz-go/pkg/kmsg"

func handleEndTxn(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.txnCoordinator()
	if err != nil {
		return nil, err
	}
	return c.EndTxn(req.(*kmsg.EndTxnRequest)), nil
}

package kafka

// AddPartitionsToTxn (key 24), versions 0–5.
//
//   v1  same as v0.
//   v2  PRODUCER_FENCED may be returned (KIP-588); INVALID_PRODUCER_EPOCH
//       before.
//   v3  flexible.
//   v4  the brokers' batched form (KIP-890 part 1): several
//       transactions per request, each answered on its own, and
//       VerifyOnly, which asks whether partitions are in a transaction
//       without adding them; it needs CLUSTER_ACTION on the cluster,
//       as in Kafka (kafka/txn batch.go).
//   v5  a verified partition not in its transaction is
//       TRANSACTION_ABORTABLE (KIP-890); INVALID_TXN_STATE at v4.
//
// The coordinator (kafka/txn) adds the partitions to the producer's
// transaction durably, then registers them with the resolver (durable partition adds), so the
// producer's transactional batches are accepted there (KIP-890 part 1).
// At transaction version 2 Produce v12+ adds partitions itself (KIP-890 implicit adds).

import "github.com/twmb/franz-go/pkg/kmsg"

func handleAddPartitionsToTxn(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.txnCoordinator()
	if err != nil {
		return nil, err
	}
	return c.AddPartitionsToTxn(req.(*kmsg.AddPartitionsToTxnRequest)), nil
}

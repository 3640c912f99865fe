package kafka

// AddPartitionsToTxn (key 24), versions 0–3.
//
//   v1  same as v0.
//   v2  PRODUCER_FENCED may be returned (KIP-588); INVALID_PRODUCER_EPOCH
//       before.
//   v3  flexible.
//
// The coordinator (kafka/txn) adds the partitions to the producer's
// transaction durably, then registers them with the resolver (X13), so the
// producer's transactional batches are accepted there (KIP-890 part 1).
// At transaction version 2 Produce v12+ adds partitions itself (X18).
// Left out: v4+ (broker-to-broker batches and verification).

import "github.com/twmb/franz-go/pkg/kmsg"

func handleAddPartitionsToTxn(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.txnCoordinator()
	if err != nil {
		return nil, err
	}
	return c.AddPartitionsToTxn(req.(*kmsg.AddPartitionsToTxnRequest)), nil
}

package kafka

// ListTransactions (key 66), versions 0–2 (KIP-664).
//
//   v1  duration filter: transactions running longer than it (KIP-994).
//   v2  transactional id pattern (KIP-1152): an RE2 expression the whole
//       id must match (null or empty: every id); one that does not
//       compile is INVALID_REGULAR_EXPRESSION (kafka/txn).
//
// State and producer-id filters as Kafka applies them; unknown state names
// come back in UnknownStateFilters.

import "github.com/twmb/franz-go/pkg/kmsg"

func handleListTransactions(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.txnCoordinator()
	if err != nil {
		return nil, err
	}
	return c.ListTransactions(req.(*kmsg.ListTransactionsRequest)), nil
}

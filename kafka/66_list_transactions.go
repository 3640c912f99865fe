package kafka

// ListTransactions (key 66), versions 0–1 (KIP-664).
//
//   v1  duration filter: transactions running longer than it (KIP-994).
//
// State and producer-id filters as Kafka applies them; unknown state names
// come back in UnknownStateFilters. Left out: v2's transactional id
// pattern.

import "github.com/twmb/franz-go/pkg/kmsg"

func handleListTransactions(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.txnCoordinator()
	if err != nil {
		return nil, err
	}
	return c.ListTransactions(req.(*kmsg.ListTransactionsRequest)), nil
}

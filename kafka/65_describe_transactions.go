package kafka

// DescribeTransactions (key 65), version 0 (KIP-664): state, producer id
// and epoch, timeout, start time and partitions of each transactional id;
// TRANSACTIONAL_ID_NOT_FOUND for an unknown one.

import "github.com/twmb/franz-go/pkg/kmsg"

func handleDescribeTransactions(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.txnCoordinator()
	if err != nil {
		return nil, err
	}
	return c.DescribeTransactions(req.(*kmsg.DescribeTransactionsRequest)), nil
}

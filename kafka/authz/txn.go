package authz

import (
	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// authzDescribeTransactions: DESCRIBE on each transactional id; a refused
// one is answered TRANSACTIONAL_ID_AUTHORIZATION_FAILED (per-API authorization). Of a
// described transaction's topics only those the principal may DESCRIBE
// are listed, as Kafka's handleDescribeTransactionsRequest.
func authzDescribeTransactions(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	if !rc.Authorizing() {
		return nil, nil
	}
	r := req.(*kmsg.DescribeTransactionsRequest)
	refused := filterOut(&r.TransactionalIDs, func(id *string) bool {
		return rc.Allowed(auth.OpDescribe, auth.ResourceTransactionalID, *id)
	})
	topicOK := TopicAllowed(rc, auth.OpDescribe)
	return nil, func(resp kmsg.Response) {
		dr := resp.(*kmsg.DescribeTransactionsResponse)
		for i := range dr.TransactionStates {
			filterOut(&dr.TransactionStates[i].Topics, func(t *kmsg.DescribeTransactionsResponseTransactionStateTopic) bool {
				return topicOK(t.Topic)
			})
		}
		for _, id := range refused {
			st := kmsg.NewDescribeTransactionsResponseTransactionState()
			st.TransactionalID, st.ErrorCode = id, kerr.TransactionalIDAuthorizationFailed.Code
			st.ProducerID, st.ProducerEpoch = -1, -1
			dr.TransactionStates = append(dr.TransactionStates, st)
		}
	}
}

// authzListTransactions lists only the transactional ids the principal
// may DESCRIBE, as Kafka does (per-API authorization).
func authzListTransactions(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	if !rc.Authorizing() {
		return nil, nil
	}
	return nil, func(resp kmsg.Response) {
		lr := resp.(*kmsg.ListTransactionsResponse)
		filterOut(&lr.TransactionStates, func(st *kmsg.ListTransactionsResponseTransactionState) bool {
			return rc.Allowed(auth.OpDescribe, auth.ResourceTransactionalID, st.TransactionalID)
		})
	}
}

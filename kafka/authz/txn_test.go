package authz

import (
	"testing"

	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The transaction APIs' rules (per-API authorization), checked on the rules themselves:
// the transactional id's WRITE comes first, then the group's and the
// topics' READ or WRITE.
func TestTxnAuthzRules(t *testing.T) {
	txn := acl(auth.ResourceTransactionalID, "tx", auth.OpWrite)
	group := acl(auth.ResourceGroup, "g", auth.OpRead)
	topicW := acl(auth.ResourceTopic, "t", auth.OpWrite)
	topicR := acl(auth.ResourceTopic, "t", auth.OpRead)

	initPID := func(rc Request) int16 {
		r := kmsg.NewPtrInitProducerIDRequest()
		id := "tx"
		r.TransactionalID = &id
		resp, _ := authzInitProducerID(rc, r)
		if resp == nil {
			return 0
		}
		return resp.(*kmsg.InitProducerIDResponse).ErrorCode
	}
	endTxn := func(rc Request) int16 {
		r := kmsg.NewPtrEndTxnRequest()
		r.TransactionalID = "tx"
		resp, _ := authzEndTxn(rc, r)
		if resp == nil {
			return 0
		}
		return resp.(*kmsg.EndTxnResponse).ErrorCode
	}
	addOffsets := func(rc Request) int16 {
		r := kmsg.NewPtrAddOffsetsToTxnRequest()
		r.TransactionalID, r.Group = "tx", "g"
		resp, _ := authzAddOffsetsToTxn(rc, r)
		if resp == nil {
			return 0
		}
		return resp.(*kmsg.AddOffsetsToTxnResponse).ErrorCode
	}
	addPartitions := func(rc Request) int16 {
		r := kmsg.NewPtrAddPartitionsToTxnRequest()
		r.TransactionalID = "tx"
		rt := kmsg.NewAddPartitionsToTxnRequestTopic()
		rt.Topic, rt.Partitions = "t", []int32{0}
		r.Topics = append(r.Topics, rt)
		resp, _ := authzAddPartitionsToTxn(rc, r)
		if resp == nil {
			return 0
		}
		return resp.(*kmsg.AddPartitionsToTxnResponse).Topics[0].Partitions[0].ErrorCode
	}
	txnCommit := func(rc Request) int16 {
		r := kmsg.NewPtrTxnOffsetCommitRequest()
		r.TransactionalID, r.Group = "tx", "g"
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = "t"
		rt.Partitions = append(rt.Partitions, kmsg.NewTxnOffsetCommitRequestTopicPartition())
		r.Topics = append(r.Topics, rt)
		answer, after := authzTxnOffsetCommit(rc, r)
		if answer != nil {
			return answer.(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
		}
		if after == nil {
			return 0
		}
		resp := r.ResponseKind()
		after(resp)
		return resp.(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
	}
	produceTo := func(topic string) func(rc Request) int16 {
		return func(rc Request) int16 {
			r := kmsg.NewPtrProduceRequest()
			rt := kmsg.NewProduceRequestTopic()
			rt.Topic = topic
			rt.Partitions = append(rt.Partitions, kmsg.NewProduceRequestTopicPartition())
			r.Topics = append(r.Topics, rt)
			_, after := authzProduce(rc, r)
			if after == nil {
				return 0
			}
			resp := r.ResponseKind()
			after(resp)
			return resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
		}
	}
	produce := func(rc Request) int16 {
		r := kmsg.NewPtrProduceRequest()
		id := "tx"
		r.TransactionID = &id
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "t"
		rt.Partitions = append(rt.Partitions, kmsg.NewProduceRequestTopicPartition())
		r.Topics = append(r.Topics, rt)
		_, after := authzProduce(rc, r)
		if after == nil {
			return 0
		}
		resp := r.ResponseKind()
		after(resp)
		return resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
	}
	tiaf, gaf, taf := kerr.TransactionalIDAuthorizationFailed.Code, kerr.GroupAuthorizationFailed.Code, kerr.TopicAuthorizationFailed.Code
	cases := []struct {
		name string
		try  func(Request) int16
		acls []auth.ACL
		want int16
	}{
		{"InitProducerId/none", initPID, nil, tiaf},
		{"InitProducerId/txn", initPID, []auth.ACL{txn}, 0},
		{"EndTxn/none", endTxn, nil, tiaf},
		{"EndTxn/txn", endTxn, []auth.ACL{txn}, 0},
		{"AddOffsetsToTxn/group", addOffsets, []auth.ACL{group}, tiaf},
		{"AddOffsetsToTxn/txn", addOffsets, []auth.ACL{txn}, gaf},
		{"AddOffsetsToTxn/both", addOffsets, []auth.ACL{txn, group}, 0},
		{"AddPartitionsToTxn/topic", addPartitions, []auth.ACL{topicW}, tiaf},
		{"AddPartitionsToTxn/txn", addPartitions, []auth.ACL{txn}, taf},
		{"AddPartitionsToTxn/both", addPartitions, []auth.ACL{txn, topicW}, 0},
		{"TxnOffsetCommit/group+topic", txnCommit, []auth.ACL{group, topicR}, tiaf},
		{"TxnOffsetCommit/txn+topic", txnCommit, []auth.ACL{txn, topicR}, gaf},
		{"TxnOffsetCommit/txn+group", txnCommit, []auth.ACL{txn, group}, taf},
		{"TxnOffsetCommit/all", txnCommit, []auth.ACL{txn, group, topicR}, 0},
		{"Produce/topic", produce, []auth.ACL{topicW}, tiaf},
		{"Produce/txn", produce, []auth.ACL{txn}, taf},
		{"Produce/both", produce, []auth.ACL{txn, topicW}, 0},
		{"Produce/missing topic without CREATE", produceTo("new"), []auth.ACL{acl(auth.ResourceTopic, "new", auth.OpWrite)},
			kerr.UnknownTopicOrPartition.Code},
		{"Produce/missing topic with CREATE", produceTo("new"), []auth.ACL{acl(auth.ResourceTopic, "new", auth.OpWrite),
			acl(auth.ResourceTopic, "new", auth.OpCreate)}, 0},
	}
	for _, c := range cases {
		if got := c.try(authzConn(t, "User:alice", c.acls...)); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, kerr.ErrorForCode(got), kerr.ErrorForCode(c.want))
		}
	}
}

// DescribeTransactions answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED for
// an id without DESCRIBE, and ListTransactions leaves such ids out (per-API authorization).
// WRITE on an id implies DESCRIBE.
func TestTxnDescribeAuthzRules(t *testing.T) {
	rc := authzConn(t, "User:alice", acl(auth.ResourceTransactionalID, "mine", auth.OpWrite))

	dr := kmsg.NewPtrDescribeTransactionsRequest()
	dr.TransactionalIDs = []string{"mine", "theirs"}
	answer, after := authzDescribeTransactions(rc, dr)
	if answer != nil || after == nil {
		t.Fatalf("DescribeTransactions: answer %v, after %v", answer, after != nil)
	}
	if len(dr.TransactionalIDs) != 1 || dr.TransactionalIDs[0] != "mine" {
		t.Fatalf("the handler would see %v", dr.TransactionalIDs)
	}
	resp := dr.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	after(resp)
	if len(resp.TransactionStates) != 1 || resp.TransactionStates[0].TransactionalID != "theirs" ||
		resp.TransactionStates[0].ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Fatalf("refused ids answered %+v", resp.TransactionStates)
	}

	lr := kmsg.NewPtrListTransactionsRequest()
	_, after = authzListTransactions(rc, lr)
	if after == nil {
		t.Fatal("ListTransactions filters nothing")
	}
	list := lr.ResponseKind().(*kmsg.ListTransactionsResponse)
	for _, id := range []string{"mine", "theirs"} {
		st := kmsg.NewListTransactionsResponseTransactionState()
		st.TransactionalID = id
		list.TransactionStates = append(list.TransactionStates, st)
	}
	after(list)
	if len(list.TransactionStates) != 1 || list.TransactionStates[0].TransactionalID != "mine" {
		t.Fatalf("listed %+v", list.TransactionStates)
	}
}

// DescribeTransactions lists, of a described transaction's topics, only
// those the principal may DESCRIBE, as Kafka's
// handleDescribeTransactionsRequest: DESCRIBE on the transactional id
// does not reveal the names of the topics it writes to.
func TestTxnDescribeHidesUndescribableTopics(t *testing.T) {
	rc := authzConn(t, "User:alice", acl(auth.ResourceTransactionalID, "mine", auth.OpDescribe),
		acl(auth.ResourceTopic, "t", auth.OpDescribe))
	dr := kmsg.NewPtrDescribeTransactionsRequest()
	dr.TransactionalIDs = []string{"mine"}
	answer, after := authzDescribeTransactions(rc, dr)
	if answer != nil || after == nil {
		t.Fatalf("DescribeTransactions: answer %v, after %v", answer, after != nil)
	}
	resp := dr.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	st := kmsg.NewDescribeTransactionsResponseTransactionState() // the coordinator's answer
	st.TransactionalID = "mine"
	for _, name := range []string{"t", "secret"} {
		tt := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
		tt.Topic, tt.Partitions = name, []int32{0}
		st.Topics = append(st.Topics, tt)
	}
	resp.TransactionStates = append(resp.TransactionStates, st)
	after(resp)
	got := resp.TransactionStates[0].Topics
	if len(got) != 1 || got[0].Topic != "t" {
		t.Fatalf("described topics %+v, want only t", got)
	}
}

package routing

// NOT_COORDINATOR answers (coordinator routing, share groups in cluster mode, cluster transactions): what a node that does not
// coordinate groups and transactional ids answers their requests, in
// place of the handler, as Kafka's brokers answer.

import (
	"fmt"

	"github.com/kgateway/kgateway/kafka/authz"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// coordinatorAPIs are the APIs only the group coordinator serves (coordinator routing), the
// streams group APIs (their state is the coordinator's, in its mirrored
// offsets store, as consumer groups'), the transaction APIs, which it
// serves too (cluster transactions), and those of share groups but ShareFetch and
// ShareAcknowledge (share groups in cluster mode).
var coordinatorAPIs = map[int16]bool{8: true, 9: true, 11: true, 12: true, 13: true, 14: true, 15: true,
	16: true, 42: true, 47: true, 68: true, 69: true, 88: true, 89: true, 93: true,
	24: true, 25: true, 26: true, 28: true, 65: true, 66: true,
	76: true, 77: true, 90: true, 91: true, 92: true}

// NotCoordinator is the answer of a node that does not coordinate groups
// and transactional ids to a request of key: NOT_COORDINATOR wherever the
// response carries an error (coordinator routing, share groups in cluster mode, cluster transactions); nil for a request any node
// serves. InitProducerId is one only with a transactional id.
func NotCoordinator(key int16, req kmsg.Request) kmsg.Response {
	if r, ok := req.(*kmsg.InitProducerIDRequest); ok && r.TransactionalID != nil {
		resp := r.ResponseKind().(*kmsg.InitProducerIDResponse)
		resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = kerr.NotCoordinator.Code, -1, -1
		return resp
	}
	if !coordinatorAPIs[key] {
		return nil
	}
	if resp := shareNotCoordinator(req); resp != nil {
		return resp
	}
	return notCoordinatorResponse(req)
}

// notCoordinatorResponse is NOT_COORDINATOR wherever the request's
// response carries an error: per partition, per group or once. ListGroups
// answers an empty list: in Kafka each broker lists the groups it
// coordinates, and admin clients ask every broker and merge.
func notCoordinatorResponse(req kmsg.Request) kmsg.Response {
	code := kerr.NotCoordinator.Code
	switch r := req.(type) {
	case *kmsg.JoinGroupRequest:
		resp := r.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.ErrorCode, resp.Generation, resp.MemberID = code, -1, r.MemberID
		return resp
	case *kmsg.HeartbeatRequest:
		resp := r.ResponseKind().(*kmsg.HeartbeatResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.LeaveGroupRequest:
		resp := r.ResponseKind().(*kmsg.LeaveGroupResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.SyncGroupRequest:
		resp := r.ResponseKind().(*kmsg.SyncGroupResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.OffsetCommitRequest:
		resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
		resp.Topics = authz.OffsetCommitErrors(r.Topics, code)
		return resp
	case *kmsg.OffsetFetchRequest:
		return offsetFetchNotCoordinator(r)
	case *kmsg.DescribeGroupsRequest:
		resp := r.ResponseKind().(*kmsg.DescribeGroupsResponse)
		for _, g := range r.Groups {
			rg := kmsg.NewDescribeGroupsResponseGroup()
			rg.Group, rg.ErrorCode, rg.AuthorizedOperations = g, code, authz.OperationsNotRequested
			resp.Groups = append(resp.Groups, rg)
		}
		return resp
	case *kmsg.ListGroupsRequest:
		return r.ResponseKind()
	case *kmsg.DeleteGroupsRequest:
		resp := r.ResponseKind().(*kmsg.DeleteGroupsResponse)
		for _, g := range r.Groups {
			rg := kmsg.NewDeleteGroupsResponseGroup()
			rg.Group, rg.ErrorCode = g, code
			resp.Groups = append(resp.Groups, rg)
		}
		return resp
	case *kmsg.OffsetDeleteRequest:
		resp := r.ResponseKind().(*kmsg.OffsetDeleteResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.ConsumerGroupHeartbeatRequest:
		resp := r.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.ConsumerGroupDescribeRequest:
		resp := r.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
		for _, g := range r.Groups {
			rg := kmsg.NewConsumerGroupDescribeResponseGroup()
			rg.Group, rg.ErrorCode, rg.AuthorizedOperations = g, code, authz.OperationsNotRequested
			resp.Groups = append(resp.Groups, rg)
		}
		return resp
	case *kmsg.StreamsGroupHeartbeatRequest:
		resp := r.ResponseKind().(*kmsg.StreamsGroupHeartbeatResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.StreamsGroupTopologyDescriptionUpdateRequest:
		resp := r.ResponseKind().(*kmsg.StreamsGroupTopologyDescriptionUpdateResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.StreamsGroupDescribeRequest:
		resp := r.ResponseKind().(*kmsg.StreamsGroupDescribeResponse)
		for _, g := range r.Groups {
			rg := kmsg.NewStreamsGroupDescribeResponseGroup()
			rg.Group, rg.ErrorCode, rg.AuthorizedOperations = g, code, authz.OperationsNotRequested
			resp.Groups = append(resp.Groups, rg)
		}
		return resp
	}
	if resp := txnNotCoordinator(req); resp != nil {
		return resp
	}
	panic(fmt.Sprintf("kafka: notCoordinatorResponse: %T is not a group request", req))
}

// offsetFetchNotCoordinator is OffsetFetch's NOT_COORDINATOR as Kafka's
// OffsetFetchRequest.getErrorResponse builds it: per group from v8, once
// from v2, per partition before.
func offsetFetchNotCoordinator(r *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	code := kerr.NotCoordinator.Code
	resp := r.ResponseKind().(*kmsg.OffsetFetchResponse)
	switch {
	case r.Version >= 8:
		for _, g := range r.Groups {
			rg := kmsg.NewOffsetFetchResponseGroup()
			rg.Group, rg.ErrorCode = g.Group, code
			resp.Groups = append(resp.Groups, rg)
		}
	case r.Version >= 2:
		resp.ErrorCode = code
	default:
		for _, t := range r.Topics {
			resp.Topics = append(resp.Topics, authz.OffsetFetchErrors(t.Topic, t.Partitions, code))
		}
	}
	return resp
}

// txnNotCoordinator is NOT_COORDINATOR for the transaction APIs (cluster transactions);
// ListTransactions answers an empty list, as ListGroups does (coordinator routing).
func txnNotCoordinator(req kmsg.Request) kmsg.Response {
	code := kerr.NotCoordinator.Code
	switch r := req.(type) {
	case *kmsg.AddPartitionsToTxnRequest:
		resp := r.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
		for _, tx := range r.Transactions { // the batched form (v4+)
			res := kmsg.NewAddPartitionsToTxnResponseTransaction()
			res.TransactionalID = tx.TransactionalID
			for _, t := range tx.Topics {
				rt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
					rp.Partition, rp.ErrorCode = p, code
					rt.Partitions = append(rt.Partitions, rp)
				}
				res.Topics = append(res.Topics, rt)
			}
			resp.Transactions = append(resp.Transactions, res)
		}
		for _, t := range r.Topics {
			rt := kmsg.NewAddPartitionsToTxnResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p, code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	case *kmsg.AddOffsetsToTxnRequest:
		resp := r.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.EndTxnRequest:
		resp := r.ResponseKind().(*kmsg.EndTxnResponse)
		resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = code, -1, -1
		return resp
	case *kmsg.TxnOffsetCommitRequest:
		resp := r.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
		resp.Topics = authz.TxnCommitErrors(r.Topics, code)
		return resp
	case *kmsg.DescribeTransactionsRequest:
		resp := r.ResponseKind().(*kmsg.DescribeTransactionsResponse)
		for _, id := range r.TransactionalIDs {
			st := kmsg.NewDescribeTransactionsResponseTransactionState()
			st.TransactionalID, st.ErrorCode = id, code
			resp.TransactionStates = append(resp.TransactionStates, st)
		}
		return resp
	case *kmsg.ListTransactionsRequest:
		return r.ResponseKind()
	}
	return nil
}

// shareNotCoordinator is NOT_COORDINATOR for the share-group APIs the
// coordinator serves (share groups in cluster mode); nil for any other request.
func shareNotCoordinator(req kmsg.Request) kmsg.Response {
	code := kerr.NotCoordinator.Code
	switch r := req.(type) {
	case *kmsg.ShareGroupHeartbeatRequest:
		resp := r.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.ShareGroupDescribeRequest:
		resp := r.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
		for _, id := range r.GroupIDs {
			g := kmsg.NewShareGroupDescribeResponseGroup()
			g.GroupID, g.ErrorCode, g.AuthorizedOperations = id, code, authz.OperationsNotRequested
			resp.Groups = append(resp.Groups, g)
		}
		return resp
	case *kmsg.DescribeShareGroupOffsetsRequest:
		resp := r.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
		for _, rg := range r.Groups {
			g := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
			g.GroupID, g.ErrorCode = rg.GroupID, code
			resp.Groups = append(resp.Groups, g)
		}
		return resp
	case *kmsg.AlterShareGroupOffsetsRequest:
		resp := r.ResponseKind().(*kmsg.AlterShareGroupOffsetsResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.DeleteShareGroupOffsetsRequest:
		resp := r.ResponseKind().(*kmsg.DeleteShareGroupOffsetsResponse)
		resp.ErrorCode = code
		return resp
	}
	return nil
}

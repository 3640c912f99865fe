package test

// The versions Apache Kafka 4.4 added to APIs kgateway already served, end
// to end through franz-go (which negotiates the newest both sides serve;
// atMost pins one API lower): topic ids in Produce v13, OffsetCommit v10,
// OffsetFetch v10 and TxnOffsetCommit v6 (kafka/topicid), and the
// transaction APIs' KIP-890 versions. The wire-only ones are in
// kafka/versions44_test.go.

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// atMost caps one API's version for a client.
func atMost(key, v int16) kgo.Opt {
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(key, v)
	return kgo.MaxVersions(vs)
}

// noSuchTopicID is an id no topic of these tests has.
var noSuchTopicID = [16]byte{'n', 'o', ' ', 's', 'u', 'c', 'h'}

// wantVersion fails unless resp went at version v: the test is about v.
func wantVersion(t *testing.T, resp kmsg.Response, v int16) {
	t.Helper()
	if resp.GetVersion() != v {
		t.Fatalf("%s answered at v%d, want v%d", kmsg.NameForKey(resp.Key()), resp.GetVersion(), v)
	}
}

// Produce v13 names topics by id (KIP-516): a known id appends and is
// answered with its id; an unknown one is UNKNOWN_TOPIC_ID, with its id,
// and appends nothing anywhere (an id never creates a topic).
func TestProduceV13ByTopicID(t *testing.T) {
	g := newGateway(t)
	g.createTopic("p13", 1)
	cl := g.client()
	id := topicID(t, cl, "p13")
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 10_000
	for _, tid := range [][16]byte{id, noSuchTopicID} {
		rt := kmsg.NewProduceRequestTopic()
		rt.TopicID = tid
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = makeBatch(batchSpec{records: 2, pid: -1})
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	resp := request[*kmsg.ProduceResponse](t, cl, req)
	wantVersion(t, resp, 13)
	got := map[[16]byte]kmsg.ProduceResponseTopicPartition{}
	for _, rt := range resp.Topics {
		if len(rt.Partitions) != 1 {
			t.Fatalf("topic %x: %d partitions", rt.TopicID, len(rt.Partitions))
		}
		got[rt.TopicID] = rt.Partitions[0]
	}
	if p, ok := got[id]; !ok || p.ErrorCode != 0 || p.BaseOffset != 0 {
		t.Errorf("known id: %+v (answered: %v)", p, ok)
	}
	if p, ok := got[noSuchTopicID]; !ok || p.ErrorCode != kerr.UnknownTopicID.Code || p.BaseOffset != -1 {
		t.Errorf("unknown id: %+v (answered: %v)", p, ok)
	}
	if p := listOffset(t, cl, "p13", -1); p.Offset != 2 {
		t.Errorf("p13 high watermark %d, want 2", p.Offset)
	}
}

// OffsetCommit v10 and OffsetFetch v10 name topics by id (KIP-848): a
// commit by id is fetched back by id, and a fetch of all topics names
// them by id; an unknown id is UNKNOWN_TOPIC_ID (offset -1, metadata "")
// in both; a commit naming only unknown ids reaches no coordinator and
// creates no group, as in Kafka.
func TestOffsetsV10ByTopicID(t *testing.T) {
	g := newGateway(t)
	g.createTopic("o10", 2)
	cl := g.client()
	id := topicID(t, cl, "o10")

	commit := func(group string, tids ...[16]byte) *kmsg.OffsetCommitResponse {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.Generation = group, -1
		for _, tid := range tids {
			rt := kmsg.NewOffsetCommitRequestTopic()
			rt.TopicID = tid
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = 1, 42, -1, kmsg.StringPtr("md")
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
		}
		resp := request[*kmsg.OffsetCommitResponse](t, cl, req)
		wantVersion(t, resp, 10)
		return resp
	}
	resp := commit("g10", noSuchTopicID, id)
	if len(resp.Topics) != 2 {
		t.Fatalf("commit answered %d topics", len(resp.Topics))
	}
	for _, rt := range resp.Topics {
		want := int16(0)
		if rt.TopicID == noSuchTopicID {
			want = kerr.UnknownTopicID.Code
		} else if rt.TopicID != id {
			t.Errorf("commit answered topic id %x", rt.TopicID)
		}
		if rt.Partitions[0].ErrorCode != want {
			t.Errorf("commit topic %x: error %d, want %d", rt.TopicID, rt.Partitions[0].ErrorCode, want)
		}
	}

	fetch := func(topics []kmsg.OffsetFetchRequestGroupTopic) kmsg.OffsetFetchResponseGroup {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "g10", Topics: topics}}
		resp := request[*kmsg.OffsetFetchResponse](t, cl, req)
		wantVersion(t, resp, 10)
		if len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
			t.Fatalf("fetch: %+v", resp.Groups)
		}
		return resp.Groups[0]
	}
	byID := fetch([]kmsg.OffsetFetchRequestGroupTopic{{TopicID: id, Partitions: []int32{1}}, {TopicID: noSuchTopicID, Partitions: []int32{1}}})
	for _, rt := range byID.Topics {
		p := rt.Partitions[0]
		switch rt.TopicID {
		case id:
			if p.ErrorCode != 0 || p.Offset != 42 || p.Metadata == nil || *p.Metadata != "md" {
				t.Errorf("fetch by id: %+v", p)
			}
		case noSuchTopicID:
			if p.ErrorCode != kerr.UnknownTopicID.Code || p.Offset != -1 || p.Metadata == nil || *p.Metadata != "" {
				t.Errorf("fetch of an unknown id: %+v", p)
			}
		default:
			t.Errorf("fetch answered topic id %x", rt.TopicID)
		}
	}
	if len(byID.Topics) != 2 {
		t.Errorf("fetch by id answered %d topics", len(byID.Topics))
	}
	all := fetch(nil)
	if len(all.Topics) != 1 || all.Topics[0].TopicID != id || all.Topics[0].Partitions[0].Offset != 42 {
		t.Errorf("fetch of all topics: %+v", all.Topics)
	}

	// Only unknown ids: nothing reaches the coordinator, no group appears.
	resp = commit("g10-none", noSuchTopicID)
	if len(resp.Topics) != 1 || resp.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("commit of an unknown id only: %+v", resp.Topics)
	}
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{"g10-none"}
	if d := request[*kmsg.DescribeGroupsResponse](t, cl, dg); d.Groups[0].ErrorCode != kerr.GroupIDNotFound.Code {
		t.Errorf("group of an unknown-id commit: error %d state %q, want GROUP_ID_NOT_FOUND", d.Groups[0].ErrorCode, d.Groups[0].State)
	}
}

// initTxn starts transactional id id: its producer id and epoch.
func initTxn(t *testing.T, cl *kgo.Client, id string) (int64, int16) {
	t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID, req.TransactionTimeoutMillis = kmsg.StringPtr(id), 60_000
	resp := request[*kmsg.InitProducerIDResponse](t, cl, req)
	if resp.ErrorCode != 0 {
		t.Fatalf("InitProducerId %s: error %d", id, resp.ErrorCode)
	}
	return resp.ProducerID, resp.ProducerEpoch
}

// TxnOffsetCommit v6 names topics by id (KIP-1319): the offset committed
// by id is pending until the transaction commits, then fetched back; an
// unknown id is UNKNOWN_TOPIC_ID. InitProducerId v5 and EndTxn serve the
// same transaction.
func TestTxnOffsetCommitV6ByTopicID(t *testing.T) {
	g := newGateway(t)
	g.createTopic("t6", 1)
	cl := g.client()
	id := topicID(t, cl, "t6")
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionalID, init.TransactionTimeoutMillis = kmsg.StringPtr("tx6"), 60_000
	ir := request[*kmsg.InitProducerIDResponse](t, cl, init)
	wantVersion(t, ir, 5)
	if ir.ErrorCode != 0 {
		t.Fatalf("InitProducerId v5: error %d", ir.ErrorCode)
	}
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = "tx6", "g6", ir.ProducerID, ir.ProducerEpoch, -1
	for _, tid := range [][16]byte{id, noSuchTopicID} {
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.TopicID = tid
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Offset, rp.LeaderEpoch = 7, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	resp := request[*kmsg.TxnOffsetCommitResponse](t, cl, req)
	wantVersion(t, resp, 6)
	codes := map[[16]byte]int16{}
	for _, rt := range resp.Topics {
		codes[rt.TopicID] = rt.Partitions[0].ErrorCode
	}
	if c, ok := codes[id]; !ok || c != 0 || len(codes) != 2 || codes[noSuchTopicID] != kerr.UnknownTopicID.Code {
		t.Fatalf("TxnOffsetCommit v6: codes by id %v", codes)
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = "tx6", ir.ProducerID, ir.ProducerEpoch, true
	if er := request[*kmsg.EndTxnResponse](t, cl, end); er.ErrorCode != 0 {
		t.Fatalf("EndTxn: error %d", er.ErrorCode)
	}
	of := kmsg.NewPtrOffsetFetchRequest()
	of.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "g6", Topics: []kmsg.OffsetFetchRequestGroupTopic{{TopicID: id, Partitions: []int32{0}}}}}
	fr := stableOffsets(t, cl, of) // committed with the Complete state, after EndTxn's answer
	if p := fr.Groups[0].Topics[0].Partitions[0]; p.ErrorCode != 0 || p.Offset != 7 {
		t.Errorf("committed offset by id: %+v", p)
	}
}

// AddPartitionsToTxn v4+ is the brokers' batched form (KIP-890): a
// transaction is added as v3 adds it, and a VerifyOnly transaction asks
// partition by partition: in the transaction NONE, else
// TRANSACTION_ABORTABLE (v5) or INVALID_TXN_STATE (v4); a stale epoch is
// PRODUCER_FENCED and an unknown transactional id
// INVALID_PRODUCER_ID_MAPPING, as Kafka's coordinator answers. AddOffsetsToTxn v4 joins
// a group to the same transaction.
func TestAddPartitionsToTxnBatched(t *testing.T) {
	g := newGateway(t)
	g.createTopic("apt", 2)
	cl := g.client()
	pid, epoch := initTxn(t, cl, "apt-tx")
	txn := func(id string, pid int64, epoch int16, verify bool, partitions ...int32) kmsg.AddPartitionsToTxnRequestTransaction {
		tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
		tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = id, pid, epoch, verify
		tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
		tt.Topic, tt.Partitions = "apt", partitions
		tx.Topics = append(tx.Topics, tt)
		return tx
	}
	send := func(c *kgo.Client, v int16, txns ...kmsg.AddPartitionsToTxnRequestTransaction) map[string]map[int32]int16 {
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.Transactions = txns
		resp := request[*kmsg.AddPartitionsToTxnResponse](t, c, req)
		wantVersion(t, resp, v)
		if resp.ErrorCode != 0 {
			t.Fatalf("v%d: top-level error %d", v, resp.ErrorCode)
		}
		out := map[string]map[int32]int16{}
		for _, tx := range resp.Transactions {
			out[tx.TransactionalID] = map[int32]int16{}
			for _, rt := range tx.Topics {
				for _, p := range rt.Partitions {
					out[tx.TransactionalID][p.Partition] = p.ErrorCode
				}
			}
		}
		return out
	}
	// Two transactions in one request: franz-go sends a lone plain add at
	// v3, the client form.
	pid2, epoch2 := initTxn(t, cl, "apt-tx2")
	if got := send(cl, 5, txn("apt-tx", pid, epoch, false, 0), txn("apt-tx2", pid2, epoch2, false, 1)); got["apt-tx"][0] != 0 || got["apt-tx2"][1] != 0 {
		t.Fatalf("add apt/0 to apt-tx and apt/1 to apt-tx2: %v", got)
	}
	got := send(cl, 5, txn("apt-tx", pid, epoch, true, 0, 1), txn("apt-none", 99, 0, true, 0))
	if got["apt-tx"][0] != 0 || got["apt-tx"][1] != kerr.TransactionAbortable.Code {
		t.Errorf("v5 verify: %v, want apt/0 NONE, apt/1 TRANSACTION_ABORTABLE", got["apt-tx"])
	}
	if got["apt-none"][0] != kerr.InvalidProducerIDMapping.Code {
		t.Errorf("v5 verify of an unknown transactional id: %v", got["apt-none"])
	}
	if got := send(g.client(atMost(24, 4)), 4, txn("apt-tx", pid, epoch, true, 1)); got["apt-tx"][1] != kerr.InvalidTxnState.Code {
		t.Errorf("v4 verify of apt/1: %v, want INVALID_TXN_STATE", got["apt-tx"])
	}
	if got := send(cl, 5, txn("apt-tx", pid, epoch-1, true, 0)); got["apt-tx"][0] != kerr.ProducerFenced.Code {
		t.Errorf("verify at a stale epoch: %v, want PRODUCER_FENCED", got["apt-tx"])
	}
	ao := kmsg.NewPtrAddOffsetsToTxnRequest()
	ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = "apt-tx", pid, epoch, "apt-g"
	ar := request[*kmsg.AddOffsetsToTxnResponse](t, cl, ao)
	wantVersion(t, ar, 4)
	if ar.ErrorCode != 0 {
		t.Errorf("AddOffsetsToTxn v4: error %d", ar.ErrorCode)
	}
}

// ListTransactions v2 filters by a transactional id pattern (KIP-1152):
// an RE2 expression the whole id must match; one that does not compile
// is INVALID_REGULAR_EXPRESSION; none (or "") lists every transaction.
func TestListTransactionsV2Pattern(t *testing.T) {
	g := newGateway(t)
	cl := g.client()
	for _, id := range []string{"lt-app-1", "lt-app-2", "lt-other"} {
		initTxn(t, cl, id)
	}
	list := func(pattern *string) ([]string, int16) {
		req := kmsg.NewPtrListTransactionsRequest()
		req.TransactionalIDPattern = pattern
		resp := request[*kmsg.ListTransactionsResponse](t, cl, req)
		wantVersion(t, resp, 2)
		var ids []string
		for _, s := range resp.TransactionStates {
			ids = append(ids, s.TransactionalID)
		}
		return ids, resp.ErrorCode
	}
	for _, tc := range []struct {
		pattern *string
		want    int
	}{{nil, 3}, {kmsg.StringPtr(""), 3}, {kmsg.StringPtr("lt-app-.*"), 2}, {kmsg.StringPtr("app"), 0}, {kmsg.StringPtr("lt-(other|none)"), 1}} {
		ids, code := list(tc.pattern)
		if code != 0 || len(ids) != tc.want {
			t.Errorf("pattern %v: error %d, ids %v, want %d", tc.pattern, code, ids, tc.want)
		}
	}
	if _, code := list(kmsg.StringPtr("lt-(")); code != kerr.InvalidRegularExpression.Code {
		t.Errorf("pattern lt-(: error %d, want INVALID_REGULAR_EXPRESSION", code)
	}
}

// DeleteGroups v3 says why a group was not deleted; FindCoordinator v5 (a
// version bump for TRANSACTION_ABORTABLE) finds the group coordinator as
// v4 does.
func TestDeleteGroupsV3FindCoordinatorV5(t *testing.T) {
	g := newGateway(t)
	cl := g.client()
	dg := kmsg.NewPtrDeleteGroupsRequest()
	dg.Groups = []string{"dg3-none"}
	resp := request[*kmsg.DeleteGroupsResponse](t, cl, dg)
	wantVersion(t, resp, 3)
	if gr := resp.Groups[0]; gr.ErrorCode != kerr.GroupIDNotFound.Code || gr.ErrorMessage == nil || *gr.ErrorMessage == "" {
		t.Errorf("delete of an unknown group: error %d message %v", gr.ErrorCode, gr.ErrorMessage)
	}
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKeys = []string{"fc5"}
	fr := request[*kmsg.FindCoordinatorResponse](t, g.client(atMost(10, 5)), fc)
	wantVersion(t, fr, 5)
	if len(fr.Coordinators) != 1 || fr.Coordinators[0].ErrorCode != 0 || fr.Coordinators[0].NodeID < 0 {
		t.Errorf("FindCoordinator v5: %+v", fr.Coordinators)
	}
}

package kafka

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A partition the broker does not have is UNKNOWN_TOPIC_OR_PARTITION in
// OffsetCommit, TxnOffsetCommit and OffsetDelete whatever else fails, as
// Kafka 4.4 answers (its KafkaApis answers missing partitions before the
// group or transaction coordinator sees the request; checked against a
// real broker by test/kafkadiff's offsets-simple and txn-errors).
func TestMissingPartitionAnsweredFirst(t *testing.T) {
	g := newSessionRig(t, Config{Offsets: openOffsets(t, nil)}, map[string]int32{"os": 2})
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.SetVersion(8)
	oc.Group, oc.Generation, oc.MemberID = "os-g", -1, ""
	oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "os", Partitions: []kmsg.OffsetCommitRequestTopicPartition{
		{Partition: 0, Offset: 5, LeaderEpoch: -1}, {Partition: 7, Offset: 3, LeaderEpoch: -1}}}}
	codes := func(ps []kmsg.OffsetCommitResponseTopicPartition) []int16 {
		return []int16{ps[0].ErrorCode, ps[1].ErrorCode}
	}
	wantCodes(t, "simple commit", codes(ask(g.c, oc).(*kmsg.OffsetCommitResponse).Topics[0].Partitions), 0, kerr.UnknownTopicOrPartition.Code)
	oc.Generation = 3 // a member the simple group does not have
	wantCodes(t, "commit with a generation", codes(ask(g.c, oc).(*kmsg.OffsetCommitResponse).Topics[0].Partitions),
		kerr.UnknownMemberID.Code, kerr.UnknownTopicOrPartition.Code)

	od := kmsg.NewPtrOffsetDeleteRequest()
	od.SetVersion(0)
	od.Group = "os-g"
	od.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: "os", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}, {Partition: 9}}}}
	dr := ask(g.c, od).(*kmsg.OffsetDeleteResponse)
	if dr.ErrorCode != 0 {
		t.Fatalf("offset delete: group error %d", dr.ErrorCode)
	}
	wantCodes(t, "offset delete", []int16{dr.Topics[0].Partitions[0].ErrorCode, dr.Topics[0].Partitions[1].ErrorCode}, 0, kerr.UnknownTopicOrPartition.Code)

	to := kmsg.NewPtrTxnOffsetCommitRequest()
	to.SetVersion(3)
	to.TransactionalID, to.Group, to.ProducerID, to.ProducerEpoch, to.Generation = "os-tx", "os-g", 5, 0, -1
	to.Topics = []kmsg.TxnOffsetCommitRequestTopic{
		{Topic: "os", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1, LeaderEpoch: -1}}},
		{Topic: "os-missing", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1, LeaderEpoch: -1}}}}
	tr := ask(g.c, to).(*kmsg.TxnOffsetCommitResponse)
	wantCodes(t, "txn offset commit without a transaction", []int16{tr.Topics[0].Partitions[0].ErrorCode, tr.Topics[1].Partitions[0].ErrorCode},
		kerr.InvalidProducerIDMapping.Code, kerr.UnknownTopicOrPartition.Code)
}

func wantCodes(t *testing.T, what string, got []int16, want ...int16) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: codes %v, want %v", what, got, want)
		}
	}
}

package produce

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestAddErrorMapsAsKafka checks the implicit add's coordinator answers
// map to Produce errors as Kafka's ReplicaManager maps them: busy or
// moving coordinators are retriable NOT_ENOUGH_REPLICAS, a fenced
// producer INVALID_PRODUCER_EPOCH, anything else as it is.
func TestAddErrorMapsAsKafka(t *testing.T) {
	for _, c := range []struct{ in, want *kerr.Error }{
		{kerr.ConcurrentTransactions, kerr.NotEnoughReplicas},
		{kerr.CoordinatorNotAvailable, kerr.NotEnoughReplicas},
		{kerr.CoordinatorLoadInProgress, kerr.NotEnoughReplicas},
		{kerr.NotCoordinator, kerr.NotEnoughReplicas},
		{kerr.ProducerFenced, kerr.InvalidProducerEpoch},
		{kerr.InvalidTxnState, kerr.InvalidTxnState},
		{kerr.TransactionalIDAuthorizationFailed, kerr.TransactionalIDAuthorizationFailed},
	} {
		if got := addError(c.in.Code); !errors.Is(got, c.want) {
			t.Errorf("addError(%s) = %v, want %s", c.in.Message, got, c.want.Message)
		}
	}
}

// TestTxnAbortableRewritesOnlyInvalidTxnState checks KIP-890's v11+
// answer: INVALID_TXN_STATE becomes TRANSACTION_ABORTABLE, every other
// code stays.
func TestTxnAbortableRewritesOnlyInvalidTxnState(t *testing.T) {
	resp := kmsg.NewPtrProduceResponse()
	tp := kmsg.NewProduceResponseTopic()
	for _, code := range []int16{0, kerr.InvalidTxnState.Code, kerr.NotLeaderForPartition.Code} {
		p := kmsg.NewProduceResponseTopicPartition()
		p.ErrorCode = code
		tp.Partitions = append(tp.Partitions, p)
	}
	resp.Topics = append(resp.Topics, tp)
	TxnAbortable(resp)
	want := []int16{0, kerr.TransactionAbortable.Code, kerr.NotLeaderForPartition.Code}
	for i, p := range resp.Topics[0].Partitions {
		if p.ErrorCode != want[i] {
			t.Errorf("partition %d: code %d, want %d", i, p.ErrorCode, want[i])
		}
	}
	if !Failed(resp) {
		t.Error("Failed: false for a response with errors")
	}
}

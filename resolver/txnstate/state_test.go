package txnstate

import (
	"errors"
	"testing"

	"github.com/kgateway/kgateway/recordbatch"
)

func txnHeader(pid int64, epoch int16) recordbatch.Header {
	return recordbatch.Header{Attributes: recordbatch.TransactionalBit, ProducerID: pid, ProducerEpoch: epoch}
}

func noEpoch(int64) (int16, bool) { return 0, false }

// A decided registration takes no first batch: after Decide, a
// registration without a batch refuses the batch that would start the
// transaction (ErrConcurrentTransactions); a transaction that wrote a
// batch takes more until its marker; a registration at a newer epoch
// takes batches again.
func TestDecidedRegistrationTakesNoFirstBatch(t *testing.T) {
	s := NewSet()
	for _, pid := range []int64{1, 2} {
		if err := s.Register(pid, 3, noEpoch); err != nil {
			t.Fatal(err)
		}
	}
	s.Begin(2, 3, 10) // producer 2 wrote its first batch
	s.Decide(1, 3)
	s.Decide(2, 3)
	if err := s.Verify(txnHeader(1, 3), noEpoch); !errors.Is(err, ErrConcurrentTransactions) {
		t.Fatalf("first batch after the decision: %v, want ErrConcurrentTransactions", err)
	}
	if err := s.Verify(txnHeader(2, 3), noEpoch); err != nil {
		t.Fatalf("a later batch of a transaction with data here: %v", err)
	}
	if err := s.Register(1, 4, noEpoch); err != nil {
		t.Fatal(err)
	}
	if err := s.Verify(txnHeader(1, 4), noEpoch); err != nil {
		t.Fatalf("first batch at the newer epoch: %v", err)
	}
}

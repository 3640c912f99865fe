package txnstate

import (
	"fmt"
	"math"
)

// MarkerFenced reports whether a transaction marker at epoch, written at
// transaction version tv (WriteTxnMarkers v2 names it, KIP-1228; older
// requests are 0), is refused INVALID_PRODUCER_EPOCH by a partition whose
// producer is at current (the epoch of its latest batch or marker there),
// open telling whether the producer has a transaction open there. It is
// the leader's check of Kafka's ProducerAppendInfo:
//
//   - below transaction version 2 a marker older than current is fenced;
//   - at version 2 the coordinator bumps the epoch when it ends a
//     transaction (KIP-890 part 2), so a marker must be newer than every
//     batch of the transaction: a marker at current is fenced too, but
//     for a retried marker, one at current when no transaction is open
//     (it was ended already) or when current is the last epoch (32767,
//     which cannot be bumped).
func MarkerFenced(tv int8, epoch, current int16, open bool) bool {
	if tv < 2 {
		return epoch < current
	}
	if epoch == current && (!open || current == math.MaxInt16) {
		return false
	}
	return epoch <= current
}

// CheckMarker is MarkerFenced for producer pid's marker at epoch on a
// partition where the producer has transaction open (nil: none) and
// epoch producerEpoch (nil: unknown there), current being the newer of
// the two; a fenced marker is ErrInvalidProducerEpoch. Below transaction
// version 2 a producer with nothing open is never fenced: the marker
// ends nothing (recovery re-sends markers).
func CheckMarker(pid int64, epoch int16, tv int8, open *Entry, producerEpoch *int16) error {
	if open == nil && (producerEpoch == nil || tv < 2) {
		return nil
	}
	current := int16(math.MinInt16)
	if open != nil {
		current = open.Epoch
	}
	if producerEpoch != nil {
		current = max(current, *producerEpoch)
	}
	if !MarkerFenced(tv, epoch, current, open != nil) {
		return nil
	}
	return fmt.Errorf("%w: marker for producer %d at epoch %d (transaction version %d), the partition has epoch %d",
		ErrInvalidProducerEpoch, pid, epoch, tv, current)
}

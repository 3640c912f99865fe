package resolver

import "fmt"

// recordCheck is what Produce runs on each record of a batch for a topic
// with these settings: nil, or L1's key check on a compacted topic.
func (c cleanSettings) recordCheck() func(RecordMeta) error {
	if !c.compact {
		return nil
	}
	return refuseNullKey
}

// refuseNullKey is L1: a compacted topic keeps the latest record per key,
// so a record without one could never be cleaned; Kafka's LogValidator
// refuses it, and the whole batch with it.
func refuseNullKey(m RecordMeta) error {
	if m.NullKey {
		return fmt.Errorf("%w: compacted topic cannot accept message without key (record at offset delta %d)", ErrInvalidRecord, m.OffsetDelta)
	}
	return nil
}

// checkStored is check for a stored batch: a cleaned one (L4) spans the
// offsets its lastOffsetDelta says but may hold fewer records, even none
// (a producer's last batch, kept for its sequence).
func (h batchHeader) checkStored() error {
	if h.Records >= 0 && int64(h.Records) <= int64(h.LastOffsetDelta)+1 && h.Records != h.LastOffsetDelta+1 {
		h.Records = h.LastOffsetDelta + 1 // judge the rest as check does
	}
	return h.check()
}

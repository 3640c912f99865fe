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

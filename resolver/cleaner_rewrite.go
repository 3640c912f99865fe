package resolver

// batchFilter decides what a pass keeps of each batch of the range it
// cleans (L4, L8). It looks at a batch as a whole first (batchAction),
// then at its records: this is where, once transactions are stored, a
// control batch whose marker nothing needs any more and the batches of
// aborted transactions are dropped whole (batchAction returning
// dropBatch, from the aborted-transaction index of the range).
type batchFilter struct {
	m                 *offsetMap
	nowMs             int64
	deleteRetentionMs int64
	limit             int64 // Z3's bound on a batch's decompressed records
	// lastOfProducer is the base offset of each producer id's last batch
	// in the range: that batch stays, empty if need be (L4).
	lastOfProducer map[int64]Offset
	// minHorizon is the earliest delete horizon of a tombstone kept by
	// this pass, -1 when none (L2: a later pass is due then).
	minHorizon int64
}

type batchAction int

const (
	filterRecords batchAction = iota // decide record by record
	keepBatch                        // keep the batch as it is
	dropBatch                        // drop the whole batch
)

// batchAction is the decision about a batch before its records. A
// transactional batch and a control batch (a transaction marker) are kept
// as they are, and map no key (buildMap): until the transactions' rules
// replace this (aborted batches dropped, markers dropped once nothing
// needs them, nothing cleaned above the last stable offset), their
// records neither go nor supersede any other, which is safe whatever the
// transaction's outcome.
func (f *batchFilter) batchAction(h batchHeader) batchAction {
	if txnOrControl(h) {
		return keepBatch
	}
	return filterRecords
}

// txnOrControl reports a transactional or control batch.
func txnOrControl(h batchHeader) bool { return h.Attributes&(controlBit|transactionalBit) != 0 }

// clean returns what the pass keeps of batch b: b itself when nothing
// changes, a rebuilt batch (L4), or nil when the batch goes.
func (f *batchFilter) clean(b []byte) ([]byte, error) {
	h := decodeHeader(b)
	switch f.batchAction(h) {
	case keepBatch:
		return b, nil
	case dropBatch:
		return nil, nil
	}
	sec, err := decodeSection(b, f.limit)
	if err != nil {
		return nil, err
	}
	recs, err := parseRecords(h, sec)
	if err != nil {
		return nil, err
	}
	horizon := int64(-1)
	if h.Attributes&deleteHorizonBit != 0 {
		horizon = h.BaseTimestamp
	}
	expired := horizon >= 0 && f.nowMs >= horizon
	kept := make([]cleanRecord, 0, len(recs))
	tombs := false
	for _, r := range recs {
		if !f.keepRecord(r, expired) {
			continue
		}
		kept = append(kept, r)
		tombs = tombs || r.value == nil
	}
	switch {
	case tombs && horizon < 0:
		horizon = f.nowMs + f.deleteRetentionMs // L8: first cleaned now
	case !tombs:
		horizon = -1
	}
	if tombs && (f.minHorizon < 0 || horizon < f.minHorizon) {
		f.minHorizon = horizon
	}
	if len(kept) == 0 && !f.producersLast(h) {
		return nil, nil
	}
	if len(kept) == len(recs) && horizon == hdrHorizon(h) {
		return b, nil
	}
	return cleanedBatch(b, kept, horizon)
}

// producersLast reports the last batch of its producer id in the range.
func (f *batchFilter) producersLast(h batchHeader) bool {
	last, ok := f.lastOfProducer[h.ProducerID]
	return h.Idempotent() && ok && last == h.BaseOffset
}

// keepRecord is L4 and L8 for one record: keyed, not superseded by a
// later record of its key, and not a tombstone past its horizon.
func (f *batchFilter) keepRecord(r cleanRecord, horizonPassed bool) bool {
	if r.key == nil {
		return false
	}
	if latest, ok := f.m.get(r.key); ok && r.off < latest {
		return false
	}
	return r.value != nil || !horizonPassed
}

// hdrHorizon is the batch's delete horizon, -1 when it has none.
func hdrHorizon(h batchHeader) int64 {
	if h.Attributes&deleteHorizonBit != 0 {
		return h.BaseTimestamp
	}
	return -1
}

package cleaner

import "github.com/kgateway/kgateway/recordbatch"

// batchFilter decides what a pass keeps of each batch of the range it
// cleans (the latest-record rewrite, the tombstone horizon, aborted batches dropped, markers kept while needed and marker removal). It looks at a batch as a whole first
// (batchAction): the batches of aborted transactions and the markers
// nothing needs any more go whole, a marker found unneeded gets its
// delete horizon; then at the records of the rest.
type batchFilter struct {
	m                 *offsetMap
	nowMs             int64
	deleteRetentionMs int64
	limit             int64 // the decompression bound on a batch's decompressed records
	// lastOfProducer is the base offset of each producer id's last batch
	// in the range: that batch stays, empty if need be (the latest-record rewrite).
	lastOfProducer map[int64]Offset
	// minHorizon is the earliest delete horizon of a tombstone or marker
	// kept by this pass, -1 when none (the cleanable range: a later pass is due then).
	minHorizon int64
	// txn is the range's transactions (aborted batches dropped, markers kept while needed and marker removal).
	txn *txnFilter
}

type batchAction int

const (
	filterRecords batchAction = iota // decide record by record
	keepBatch                        // keep the batch as it is
	dropBatch                        // drop the whole batch
	emptyBatch                       // keep the header, drop every record (the latest-record rewrite, aborted batches dropped)
	markerHorizon                    // keep the marker, with a delete horizon (marker removal)
)

// batchAction is the decision about a batch before its records. A batch
// of an aborted transaction goes whole (aborted batches dropped), kept empty when it is its
// producer's last (the latest-record rewrite); a marker is kept or removed as markers kept while needed and marker removal say; a committed transactional
// batch is cleaned as any other.
func (f *batchFilter) batchAction(h recordbatch.Header) batchAction {
	if h.Control() {
		return f.markerAction(h)
	}
	f.txn.readBatch(h)
	if f.txn.abortedBatch(h) {
		if f.producersLast(h) {
			return emptyBatch
		}
		return dropBatch
	}
	return filterRecords
}

// clean returns what the pass keeps of batch b: b itself when nothing
// changes, a rebuilt batch (the latest-record rewrite), or nil when the batch goes.
func (f *batchFilter) clean(b []byte) ([]byte, error) {
	h := recordbatch.DecodeHeader(b)
	switch f.batchAction(h) {
	case keepBatch:
		return b, nil
	case dropBatch:
		return nil, nil
	case emptyBatch:
		return recordbatch.Rebuild(b, nil, -1)
	case markerHorizon:
		return f.withHorizon(b, f.nowMs+f.deleteRetentionMs)
	}
	sec, err := recordbatch.DecodeSection(b, f.limit)
	if err != nil {
		return nil, err
	}
	recs, err := recordbatch.ParseRecords(h, sec)
	if err != nil {
		return nil, err
	}
	horizon := int64(-1)
	if h.Attributes&recordbatch.DeleteHorizonBit != 0 {
		horizon = h.BaseTimestamp
	}
	expired := horizon >= 0 && f.nowMs >= horizon
	kept := make([]recordbatch.Record, 0, len(recs))
	tombs := false
	for _, r := range recs {
		if !f.keepRecord(r, expired) {
			continue
		}
		kept = append(kept, r)
		tombs = tombs || r.Value == nil
	}
	switch {
	case tombs && horizon < 0:
		horizon = f.nowMs + f.deleteRetentionMs // The tombstone horizon: first cleaned now
	case !tombs:
		horizon = -1
	}
	if tombs {
		f.noteHorizon(horizon)
	}
	if len(kept) == 0 && !f.producersLast(h) {
		return nil, nil
	}
	if len(kept) == len(recs) && horizon == hdrHorizon(h) {
		return b, nil
	}
	return recordbatch.Rebuild(b, kept, horizon)
}

// producersLast reports the last batch of its producer id in the range.
func (f *batchFilter) producersLast(h recordbatch.Header) bool {
	last, ok := f.lastOfProducer[h.ProducerID]
	return h.Idempotent() && ok && last == h.BaseOffset
}

// keepRecord implements the latest-record rewrite and the tombstone horizon for one record: keyed, not superseded by a
// later record of its key, and not a tombstone past its horizon.
func (f *batchFilter) keepRecord(r recordbatch.Record, horizonPassed bool) bool {
	if r.Key == nil {
		return false
	}
	if latest, ok := f.m.get(r.Key); ok && r.Off < latest {
		return false
	}
	return r.Value != nil || !horizonPassed
}

// hdrHorizon is the batch's delete horizon, -1 when it has none.
func hdrHorizon(h recordbatch.Header) int64 {
	if h.Attributes&recordbatch.DeleteHorizonBit != 0 {
		return h.BaseTimestamp
	}
	return -1
}

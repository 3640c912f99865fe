package resolver

import (
	"encoding/binary"
	"testing"

	"github.com/kgateway/kgateway/recordbatch"
)

// txnBatch is a transactional batch of n records from (pid, epoch) at seq.
func txnBatch(pid int64, epoch int16, seq int32, n int) testBatch {
	tb := idem(pid, epoch, seq, n)
	tb.txn = true
	return tb
}

// batchKey names a produced batch by producer and base sequence; plain
// batches (pid -1) by their base offset in seq.
type batchKey struct {
	pid int64
	seq int64
}

// committedRead is what a read_committed consumer delivers from a
// partition: the data batches of [0, LSO), read in fetches of maxBytes,
// with the aborted transactions' batches dropped exactly as Kafka's client
// does it (CompletedFetch, one per response): an aborted transaction of the
// response's AbortedTransactions applies to its producer's batches of that
// response from its first offset until that producer's ABORT marker, and
// control batches are never delivered. It also returns the LSO it read up
// to.
func committedRead(t *testing.T, r *Resolver, topic string, part int32, maxBytes int) ([]batchKey, Offset) {
	t.Helper()
	start, _, lso, err := r.Bounds(topic, part)
	if err != nil {
		t.Fatalf("bounds: %v", err)
	}
	var out []batchKey
	for off := start; off < lso; {
		res, err := r.Fetch(topic, part, off, maxBytes, true, ReadCommitted)
		if err != nil {
			t.Fatalf("read_committed fetch @%d: %v", off, err)
		}
		if res.LastStable < lso {
			t.Fatalf("LSO moved back from %d to %d (the LSO)", lso, res.LastStable)
		}
		if len(res.Batches) == 0 {
			t.Fatalf("read_committed fetch @%d below the LSO %d returned nothing", off, lso)
		}
		pending := res.Aborted // by first offset
		aborted := map[int64]bool{}
		for _, b := range res.Batches {
			h := decodeHeader(b)
			end := h.BaseOffset + Offset(h.Records)
			if end > res.LastStable {
				t.Fatalf("read_committed got a batch [%d,%d) past the LSO %d (the read_committed bound)", h.BaseOffset, end, res.LastStable)
			}
			if end <= off {
				continue
			}
			off = end
			if h.ProducerID >= 0 {
				for len(pending) > 0 && pending[0].FirstOffset < end {
					aborted[pending[0].ProducerID] = true
					pending = pending[1:]
				}
			}
			switch {
			case h.Control():
				m, err := recordbatch.DecodeMarker(b)
				if err != nil {
					t.Fatalf("marker at %d: %v", h.BaseOffset, err)
				}
				if !m.Commit {
					delete(aborted, h.ProducerID)
				}
			case h.Transactional() && aborted[h.ProducerID]:
			case h.ProducerID < 0:
				out = append(out, batchKey{-1, int64(h.BaseOffset)})
			default:
				out = append(out, batchKey{h.ProducerID, int64(h.BaseSequence)})
			}
		}
	}
	return out, lso
}

// markerAt reads the batch at off and decodes it as a marker.
func markerAt(t *testing.T, r *Resolver, topic string, part int32, off Offset) (batchHeader, recordbatch.Marker) {
	t.Helper()
	res, err := r.Fetch(topic, part, off, 1, true, ReadUncommitted)
	if err != nil || len(res.Batches) == 0 {
		t.Fatalf("fetch marker @%d: %v", off, err)
	}
	b := res.Batches[0]
	h := decodeHeader(b)
	if !h.Control() {
		t.Fatalf("batch at %d is no control batch: %+v", off, h)
	}
	m, err := recordbatch.DecodeMarker(b)
	if err != nil {
		t.Fatal(err)
	}
	return h, m
}

func int16At(b []byte, off int) int16 { return int16(binary.BigEndian.Uint16(b[off:])) }

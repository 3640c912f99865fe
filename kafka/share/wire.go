package share

// A ShareFetch answered without copying its record batches, as Fetch is
// (kafka/fetchwire): with a Wire, the acquisitions' reads are leased
// (pooled buffers, not zeroed, read and CRC-checked as any read), and a
// partition's Records is a marker the connection writer replaces with the
// acquired batches, written from the read buffers with one writev; the
// lease is given back once the response is written or dropped. Without
// one (tests, a caller with no connection) the reads are the caller's
// and the batches are copied into Records. Either way the same batches
// are answered (batchesIn), so the bytes on the wire are the same.

// Wire is one ShareFetch response's record batches by reference and the
// lease of its reads (kafka/fetchwire.Batches, wired in kafka/). The Log
// reads into it; nil reads unleased.
type Wire interface {
	// MarkRead keeps batches (size bytes, read through this Wire)
	// aside and returns what a partition's Records carries for them.
	MarkRead(batches [][]byte, size int) []byte
}

// batchesIn is the read batches that hold an acquired offset, in order,
// and their size: the batches an acquisition answers.
func batchesIn(batches [][]byte, spans []batchSpan, ranges []acquiredRange) ([][]byte, int) {
	holds := func(sp batchSpan) bool {
		for _, r := range ranges {
			if sp.first <= r.last && r.first <= sp.last {
				return true
			}
		}
		return false
	}
	var out [][]byte
	n := 0
	for i, sp := range spans {
		if holds(sp) {
			out = append(out, batches[i])
			n += len(batches[i])
		}
	}
	return out, n
}

// recordsOf is what a partition's Records carries for its acquired
// batches: a marker of w, or without a Wire the batches concatenated into
// one buffer sized first (growing it as it went was a tenth of a share
// fetch's CPU). One batch is answered as read, without a copy: a
// batch-optimized acquisition of MaxRecords usually takes exactly one (a
// producer's batches of up to 1 MB, 500 records asked). Unleased reads
// are the caller's and nothing writes to them; the slice is capped so
// that nothing appends into the buffer past it. Records is never null
// (answer).
func recordsOf(w Wire, batches [][]byte, size int) []byte {
	switch {
	case len(batches) == 0:
		return []byte{}
	case w != nil:
		return w.MarkRead(batches, size)
	case len(batches) == 1:
		b := batches[0]
		return b[:len(b):len(b)]
	}
	out := make([]byte, 0, size)
	for _, b := range batches {
		out = append(out, b...)
	}
	return out
}

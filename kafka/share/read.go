package share

import (
	"math"
	"sort"

	"github.com/kgateway/kgateway/offsets"
)

// firstReadChunk is the byte bound of an acquisition's first read; each
// further read doubles it (readSpans).
const firstReadChunk = 256 << 10

// reachLocked is the last offset an acquisition of n records from `from`
// can take: past the n-th available record in flight, or as far past the
// window's end as the records still wanted, never past the in-flight
// window bound. Records a read skips (control batches, compacted gaps)
// make it an estimate that can fall short, never one that reads records
// the acquisition could not take. Needs mu.
func (p *partition) reachLocked(from int64, n, maxLocks int) int64 {
	off := max(from, p.start)
	for ; off < p.end() && n > 0; off++ {
		if p.recs[off-p.start].state == available {
			n--
		}
	}
	if n == 0 {
		return off - 1
	}
	return min(off+int64(n)-1, p.start+int64(maxLocks)-1)
}

// shareRead is what an acquisition read: the batches, their spans, and
// at read_committed the last stable offset.
type shareRead struct {
	batches [][]byte
	spans   []batchSpan
	lso     int64
	corrupt bool // a batch header could not be read
}

// readSpans reads tp from `from` in reads of growing size until the
// batches cover reach or maxBytes were read. A share fetch asks for up to
// fetch.max.bytes (50 MiB by default) but acquires at most MaxRecords
// (500 by default) of them: reading maxBytes at once read, checksummed
// and copied a hundred times what the acquisition could take, and was
// the whole of a share fetch's CPU cost. At read_committed, aborted
// transactions' batches are marked (markAborted).
//
// The reads go into `into` (leased, wire.go); nil reads unleased.
//
// Only the first read's error is returned: after it, what was read is
// acquired and the rest is left to the next fetch.
func (c *Coordinator) readSpans(tp offsets.TopicPartition, from, reach int64, maxBytes int, committed bool, into Wire) (shareRead, error) {
	out := shareRead{lso: math.MaxInt64}
	var aborted []AbortedTxn
	chunk, read := min(maxBytes, firstReadChunk), 0
	for off := from; off <= reach && read < maxBytes; {
		var bs [][]byte
		var err error
		if committed {
			var lso int64
			var ab []AbortedTxn
			bs, lso, ab, err = c.log.ReadCommitted(tp.Topic, tp.Partition, off, chunk, into)
			if err == nil {
				out.lso = min(out.lso, lso)
				aborted = append(aborted, ab...)
			}
		} else {
			bs, err = c.log.Read(tp.Topic, tp.Partition, off, chunk, into)
		}
		if err != nil {
			if off == from {
				return out, err
			}
			break
		}
		if len(bs) == 0 {
			break
		}
		for _, b := range bs {
			sp, ok := spanOf(b)
			if !ok {
				out.corrupt = true
				return out, nil
			}
			out.batches, out.spans = append(out.batches, b), append(out.spans, sp)
			read += len(b)
		}
		next := out.spans[len(out.spans)-1].last + 1
		if next <= off {
			break
		}
		off, chunk = next, min(maxBytes-read, 2*chunk)
	}
	if committed {
		markAborted(out.batches, out.spans, uniqueAborted(aborted))
	}
	return out, nil
}

// uniqueAborted sorts the aborted transactions of several reads by first
// offset, each once: a transaction that spans two reads is in both.
func uniqueAborted(a []AbortedTxn) []AbortedTxn {
	sort.SliceStable(a, func(i, j int) bool { return a[i].FirstOffset < a[j].FirstOffset })
	var out []AbortedTxn
	for _, t := range a {
		if len(out) > 0 && t == out[len(out)-1] {
			continue
		}
		out = append(out, t)
	}
	return out
}

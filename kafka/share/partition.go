package share

import (
	"encoding/binary"
	"math"
	"sync"
	"time"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kerr"
)

// state is a record's state in flight, numbered as Kafka's RecordState.
type state uint8

const (
	available    state = 0
	acquired     state = 1
	acknowledged state = 2
	// archiving: on its way to the group's dead-letter queue (KIP-1191):
	// rejected, or out of deliveries, while the group has a DLQ topic.
	// It is not finished (the SPSO stops at it) until the DLQ writer
	// (dlq.go) has written its copy and archived it.
	archiving state = 3
	archived  state = 4
)

// Acknowledgement types of ShareFetch and ShareAcknowledge.
const (
	ackGap     int8 = 0
	ackAccept  int8 = 1
	ackRelease int8 = 2
	ackReject  int8 = 3
	ackRenew   int8 = 4 // v2, with IsRenewAck (KIP-1222)
)

// rec is one offset in flight.
type rec struct {
	state    state
	count    int32 // deliveries so far
	owner    string
	deadline time.Time // lock expiry while acquired
	// rejected: archiving because the client rejected it (else its
	// deliveries ran out); in memory only, as Kafka's, which after a
	// restart names the cause by the delivery count.
	rejected bool
}

// partition is one share-partition: the start offset (SPSO) and the
// records in flight from it, recs[i] being offset start+i (the in-flight window bound). Every
// field is guarded by mu.
type partition struct {
	mu    sync.Mutex
	start int64
	recs  []rec
	// waiters are the long-polling ShareFetches that found nothing to
	// acquire here, in the order they came (waiters.go): a change that
	// makes records acquirable wakes as many as it has records for.
	waiters []*waiter
	// promised: the records the fetches woken and not yet back want,
	// and those the fetches reading the log claimed (waiters.go), which
	// a later wake and another fetch do not count as free.
	promised int
	// Cluster mode's leader side (the leader side, leader writes before answers and re-reading after a leader change): the leader epoch and the
	// durable version the state was read or last written at, when it
	// was last known current, and dead once a write failed.
	epoch   int32
	version int64
	checked time.Time
	dead    bool
	// dlq: the group has a dead-letter queue (dlqOn), so records rejected
	// or out of deliveries become archiving, not archived. Set by the
	// coordinator under mu before each change.
	dlq bool
	// fed are the members given records here whose next fetch has not
	// yet found itself blocked on records they hold (answerHolderLocked).
	fed map[string]bool
}

func newPartition(start int64) *partition {
	return &partition{start: start}
}

// beyond reports whether the window runs past hwm: the state is of an
// earlier topic of the same name (the log never shrinks otherwise).
func (p *partition) beyond(hwm int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.end() > hwm
}

// end is the first offset not yet in flight. Needs mu.
func (p *partition) end() int64 { return p.start + int64(len(p.recs)) }

// wakeLocked wakes every fetch waiting on p (a release, an expiry, an
// archiving finished: rare, and each may free records anywhere in the
// window). Needs mu.
func (p *partition) wakeLocked() {
	p.wakeRoomLocked(math.MaxInt, false)
}

// releaseRec ends an acquisition: the record is available again unless
// it used up its deliveries, then archived (the delivery count limit), or
// archiving when dlq (KIP-1191).
func releaseRec(r *rec, limit int32, dlq bool) {
	r.owner, r.deadline = "", time.Time{}
	if r.count >= limit {
		r.state = deadState(dlq)
		return
	}
	r.state = available
}

// deadState is where a rejected record, or one out of deliveries, goes:
// archiving when the group has a dead-letter queue, else archived.
func deadState(dlq bool) state {
	if dlq {
		return archiving
	}
	return archived
}

// expireLocked releases every acquisition whose lock has expired (releases on lock expiry) and
// reports the earliest deadline still pending (zero if none). Needs mu.
func (p *partition) expireLocked(now time.Time, limit int32) (next time.Time, released bool) {
	for i := range p.recs {
		r := &p.recs[i]
		if r.state != acquired {
			continue
		}
		if !r.deadline.After(now) {
			releaseRec(r, limit, p.dlq)
			released = true
			continue
		}
		if next.IsZero() || r.deadline.Before(next) {
			next = r.deadline
		}
	}
	if released {
		p.advanceLocked()
		p.wakeLocked()
	}
	return next, released
}

// advanceLocked moves the SPSO past every finished record (the share-partition start offset). Needs mu.
func (p *partition) advanceLocked() {
	n := 0
	for n < len(p.recs) && (p.recs[n].state == acknowledged || p.recs[n].state == archived) {
		n++
	}
	if n > 0 {
		p.start += int64(n)
		p.recs = append(p.recs[:0:0], p.recs[n:]...)
	}
}

// trimLocked drops what is below logStart (removed from the log by
// retention or DeleteRecords): it can never be delivered. Needs mu.
func (p *partition) trimLocked(logStart int64) {
	if logStart <= p.start {
		return
	}
	if logStart >= p.end() {
		p.start, p.recs = logStart, nil
		return
	}
	n := logStart - p.start
	p.recs = append(p.recs[:0:0], p.recs[n:]...)
	p.start = logStart
}

// readFrom is where a fetch should read: the first available record in
// flight, else the end of the in-flight window; ok is false when nothing
// can be acquired (no available record and the window is full). Needs mu.
func (p *partition) readFromLocked(maxLocks int) (int64, bool) {
	for i := range p.recs {
		if p.recs[i].state == available {
			return p.start + int64(i), true
		}
	}
	return p.end(), len(p.recs) < maxLocks
}

// batchSpan is the offsets a stored record batch covers, and whether it is
// a control batch (a transaction marker, never delivered).
type batchSpan struct {
	first, last int64
	control     bool
	// aborted: a data batch of an aborted transaction (read_committed
	// only, markAborted), archived like a control batch.
	aborted bool
}

// spanOf reads a record batch header (magic 2): base offset at 0, the
// attributes at 21 (bit 5: control) and the last offset delta at 23.
func spanOf(b []byte) (batchSpan, bool) {
	if len(b) < 27 {
		return batchSpan{}, false
	}
	base := int64(binary.BigEndian.Uint64(b))
	attrs := binary.BigEndian.Uint16(b[21:])
	delta := int64(int32(binary.BigEndian.Uint32(b[23:])))
	if delta < 0 {
		return batchSpan{}, false
	}
	return batchSpan{first: base, last: base + delta, control: attrs&0x20 != 0}, true
}

// acquired is one range handed to a member, with its delivery count.
type acquiredRange struct {
	first, last int64
	count       int32
}

// acquireArgs bounds one acquisition.
type acquireArgs struct {
	member string
	hwm    int64 // nothing at or past it is acquired
	max    int   // records to acquire at most
	// wholeBatches: batch-optimized acquisition (ShareAcquireMode 0):
	// a batch begun below max is taken to its end, past max.
	wholeBatches bool
	maxLocks     int   // in-flight window bound (the in-flight window bound)
	limit        int32 // delivery count limit (the delivery count limit)
	deadline     time.Time
}

// acquireLocked acquires records of the read batches for a.member (one acquirer per record):
// available records in flight, then new records past the end while the
// window has room. Offsets the batches skip (compacted away) and control
// batches are archived as they join the window.
//
// In batch-optimized mode (a.wholeBatches) max is exceeded for the
// alignment of batch boundaries, as ShareFetch's MaxRecords allows: a
// batch the acquisition reached below max is acquired to its end (within
// the high watermark and the in-flight window bound). A response carries
// whole batches, so a batch split at max was sent whole to this member
// and again, whole, to the next one for its rest: with the 967-record
// batches of a fast producer, a 500-record acquisition sent 1 MB for
// 500 records, and the next one 2 MB for 500, three times the bytes per
// record read, checked, copied, sent and decoded. Needs mu.
func (p *partition) acquireLocked(spans []batchSpan, a acquireArgs) []acquiredRange {
	var out []acquiredRange
	n := 0
	take := func(off int64) {
		r := &p.recs[off-p.start]
		r.state, r.owner, r.deadline = acquired, a.member, a.deadline
		r.count++
		if k := len(out); k > 0 && out[k-1].last == off-1 && out[k-1].count == r.count {
			out[k-1].last = off
		} else {
			out = append(out, acquiredRange{first: off, last: off, count: r.count})
		}
		n++
	}
	for _, sp := range spans {
		if n >= a.max || a.wholeBatches && !p.fitsLocked(sp, a.maxLocks) {
			break
		}
		limit := a.max
		if a.wholeBatches {
			limit = math.MaxInt
		}
		for off := max(sp.first, p.start); off <= sp.last && n < limit && off < a.hwm; off++ {
			if off >= p.end() && !p.growLocked(off, a.maxLocks) {
				return out
			}
			r := &p.recs[off-p.start]
			switch {
			case r.state != available:
			case sp.control, sp.aborted:
				r.state = archived
			case r.count >= a.limit:
				r.state = deadState(p.dlq) // released at the limit before a restart (the delivery count limit)
			default:
				take(off)
			}
		}
	}
	p.advanceLocked()
	return out
}

// fitsLocked reports whether a batch-optimized acquisition may begin sp:
// a batch past the window's end is begun only when the window can hold
// it whole, or when nothing is in flight before it (a batch larger than
// the window bound is then taken in parts). A batch cut at the window
// bound is sent whole for the records before the cut, and whole again
// for the rest: with 967-record batches and 2,000 locks, every third
// batch went out twice (1 MB for 66 records). Needs mu.
func (p *partition) fitsLocked(sp batchSpan, maxLocks int) bool {
	return sp.first < p.end() || len(p.recs) == 0 || sp.last-p.start < int64(maxLocks)
}

// growLocked extends the window to hold off, archiving offsets before it
// that no batch covers; false when the window would exceed maxLocks.
// Needs mu.
func (p *partition) growLocked(off int64, maxLocks int) bool {
	if off-p.start >= int64(maxLocks) {
		return false
	}
	for p.end() < off {
		p.recs = append(p.recs, rec{state: archived})
	}
	p.recs = append(p.recs, rec{state: available})
	return true
}

// ackBatch is one acknowledgement batch of a request.
type ackBatch struct {
	first, last int64
	types       []int8 // one for the whole range, or one per offset
}

// typeAt is the acknowledgement type of offset off in b.
func (b ackBatch) typeAt(off int64) int8 {
	if len(b.types) == 1 {
		return b.types[0]
	}
	return b.types[off-b.first]
}

// checkAckLocked validates batches of member against the state (acknowledgement by the lock holder): every
// offset must be acquired by member. Needs mu.
func (p *partition) checkAckLocked(member string, batches []ackBatch) *kerr.Error {
	for _, b := range batches {
		if b.first < p.start || b.last >= p.end() {
			return kerr.InvalidRecordState
		}
		for off := b.first; off <= b.last; off++ {
			r := &p.recs[off-p.start]
			if r.state != acquired || r.owner != member {
				return kerr.InvalidRecordState
			}
		}
	}
	return nil
}

// ackLocked applies checked batches (acknowledgement by the lock holder)
// and reports how many waiting fetches it woke. Fetches waiting on p are
// woken when records became available or the start offset moved: a fetch
// that found the in-flight window full (the in-flight window bound) can
// acquire past its end now, and without the wake it slept until its
// MaxWaitMillis. Only as many are woken as the records released and the
// slots the window moved by cover (wakeRoomLocked): the fetches behind
// them would find the window full again. Needs mu.
func (p *partition) ackLocked(batches []ackBatch, limit int32, lockFor time.Time) (woke int) {
	start, freed := p.start, 0
	for _, b := range batches {
		for off := b.first; off <= b.last; off++ {
			r := &p.recs[off-p.start]
			switch b.typeAt(off) {
			case ackAccept:
				r.state, r.owner, r.deadline = acknowledged, "", time.Time{}
			case ackRelease:
				releaseRec(r, limit, p.dlq)
				if r.state == available {
					freed++
				}
			case ackReject:
				r.state, r.owner, r.deadline, r.rejected = deadState(p.dlq), "", time.Time{}, p.dlq
			case ackGap:
				r.state, r.owner, r.deadline = archived, "", time.Time{}
			case ackRenew:
				r.deadline = lockFor
			}
		}
	}
	p.advanceLocked()
	if room := freed + int(p.start-start); room > 0 {
		woke = p.wakeRoomLocked(room, true)
	}
	return woke
}

// holdsLocked reports whether member holds an acquired record of p.
// Needs mu.
func (p *partition) holdsLocked(member string) bool {
	for i := range p.recs {
		if r := &p.recs[i]; r.state == acquired && r.owner == member {
			return true
		}
	}
	return false
}

// fedLocked notes that member was given records here. Needs mu.
func (p *partition) fedLocked(member string) {
	if p.fed == nil {
		p.fed = map[string]bool{}
	}
	p.fed[member] = true
}

// answerHolderLocked is how a fetch of member that can acquire nothing
// here waits (a holder's fetch): holds reports that member holds records
// in p, now that the fetch is answered at once, empty, because it is the
// member's first since it was given records here (which this uses up).
//
// A client that sends its acknowledgements only after the fetch in flight
// is answered (franz-go's share consumer registers its next fetch as soon
// as a poll returns, and sends the acknowledgement of FlushAcks after that
// fetch's answer) holds them behind that fetch: a long poll there, on a
// full window, on records promised to fetches woken before it or at the
// high watermark, would hold them until it ends, and with them every
// member waiting on the window. At most one empty answer per acquisition:
// a client that fetches in the background while it holds records gets
// ownBlockWait polls after it, not a spin. Needs mu.
func (p *partition) answerHolderLocked(member string) (holds, now bool) {
	if !p.holdsLocked(member) {
		return false, false
	}
	now = p.fed[member]
	delete(p.fed, member)
	return true, now
}

// releaseMemberLocked releases every record member holds (its session
// closed or it left the group). Needs mu.
func (p *partition) releaseMemberLocked(member string, limit int32) bool {
	delete(p.fed, member)
	released := false
	for i := range p.recs {
		if r := &p.recs[i]; r.state == acquired && r.owner == member {
			releaseRec(r, limit, p.dlq)
			released = true
		}
	}
	if released {
		p.advanceLocked()
		p.wakeLocked()
	}
	return released
}

// persistedLocked is p as persisted (acquisitions persisted as available): acquired records are written
// available, with their delivery counts. Needs mu.
func (p *partition) persistedLocked(tp offsets.TopicPartition) offsets.SharePartition {
	sp := offsets.SharePartition{TopicPartition: tp, StartOffset: p.start}
	for i, r := range p.recs {
		st := offsets.ShareRecordState(r.state)
		if r.state == acquired {
			st = offsets.ShareAvailable
		}
		off := p.start + int64(i)
		if k := len(sp.Runs); k > 0 && sp.Runs[k-1].State == st && sp.Runs[k-1].DeliveryCount == r.count {
			sp.Runs[k-1].Last = off
			continue
		}
		sp.Runs = append(sp.Runs, offsets.ShareRun{First: off, Last: off, State: st, DeliveryCount: r.count})
	}
	return sp
}

// loadPartition rebuilds a partition from its persisted state: every
// record is available, acknowledged or archived, with its count (locks released at restart).
func loadPartition(sp offsets.SharePartition) *partition {
	p := newPartition(sp.StartOffset)
	for _, run := range sp.Runs {
		for off := run.First; off <= run.Last; off++ {
			p.recs = append(p.recs, rec{state: state(run.State), count: run.DeliveryCount})
		}
	}
	p.advanceLocked()
	return p
}

// inFlightDone counts the finished records in flight (acknowledged or
// archived), for the lag DescribeShareGroupOffsets v1 reports. Needs mu.
func (p *partition) doneLocked() int64 {
	var n int64
	for _, r := range p.recs {
		if r.state == acknowledged || r.state == archived {
			n++
		}
	}
	return n
}

// Record batch header fields (magic 2) read for read_committed.
const (
	attrTransactional = 0x10
	producerIDAt      = 43 // int64
	batchHeaderLen    = 61
)

// markAborted flags the data batches of aborted transactions, as a
// read_committed consumer skips them (Kafka's SharePartition archives
// them): walking the batches in offset order, a transactional producer
// is aborted from its aborted transaction's first offset until its
// abort marker (a control batch of that producer).
func markAborted(batches [][]byte, spans []batchSpan, aborted []AbortedTxn) {
	if len(aborted) == 0 {
		return
	}
	next := 0
	open := map[int64]bool{}
	for i, b := range batches {
		if len(b) < batchHeaderLen {
			continue
		}
		for next < len(aborted) && aborted[next].FirstOffset <= spans[i].last {
			open[aborted[next].ProducerID] = true
			next++
		}
		attrs := binary.BigEndian.Uint16(b[21:])
		if attrs&attrTransactional == 0 {
			continue
		}
		pid := int64(binary.BigEndian.Uint64(b[producerIDAt:]))
		switch {
		case spans[i].control:
			delete(open, pid) // its marker ends the transaction
		case open[pid]:
			spans[i].aborted = true
		}
	}
}

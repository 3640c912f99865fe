package share

import "github.com/kgateway/kgateway/offsets"

// waiter is a long-polling fetch's place in the queue of one partition
// it found nothing to acquire in (wake one fetch per freed range).
//
// A change that makes records acquirable wakes waiters in queue order
// until their wants cover what it made acquirable: an acknowledgement
// that accepts the 500 records at the window's start wakes one fetch of
// 500, not every fetch waiting on the window. Woken all at once, each read
// its 256 KiB or more of the log, and all but one found the window full
// again and went back to sleep.
//
// Invariants (no fetch sleeps on acquirable records it was not told of):
//   - A waiter is queued only under p.mu, at the moment its fetch saw
//     nothing it could acquire in p, so a later change finds it.
//   - A woken waiter's wake is used by its fetch's next acquisition from
//     p (which then takes what it can), or, when the fetch ends without
//     one, passed on to the next waiters (leaveWaits).
//   - An acquisition that took records and leaves acquirable records
//     behind wakes the next waiters for them (passOnLocked).
type waiter struct {
	ch   chan struct{} // the fetch's wake, shared by its partitions (cap 1)
	want int           // records the fetch still wants
	p    *partition    // where it is or was queued (nil: never)
	// Guarded by p.mu:
	queued bool // in p.waiters
	woken  bool // taken off the queue by a wake its fetch has not used
	// owing: woken by a change whose state write lingers for the
	// fetch's acquisition (stateWriter.owe); the fetch pays it back
	// (arrive) when it uses or passes on the wake.
	owing bool
}

// fetchWaits are one fetch's waiters, one per partition, sharing ch.
type fetchWaits struct {
	ch chan struct{}
	by map[offsets.TopicPartition]*waiter
}

func newFetchWaits() *fetchWaits {
	return &fetchWaits{ch: make(chan struct{}, 1), by: map[offsets.TopicPartition]*waiter{}}
}

// at is the fetch's waiter on tp.
func (f *fetchWaits) at(tp offsets.TopicPartition) *waiter {
	w := f.by[tp]
	if w == nil {
		w = &waiter{ch: f.ch}
		f.by[tp] = w
	}
	return w
}

// moveTo leaves the queue of a partition state w was queued on that is
// no longer tp's (replaced by an admin write or a new initial state), so
// that w can queue on p. Only w's fetch writes w.p.
func (w *waiter) moveTo(p *partition) {
	if w == nil || w.p == nil || w.p == p {
		return
	}
	old := w.p
	old.mu.Lock()
	old.unqueueLocked(w)
	old.useWakeLocked(w)
	old.mu.Unlock()
	w.p = nil
}

// leaveWaits takes the fetch's waiters off their queues when it ends,
// and passes on every wake it did not use: the records it was woken for
// are still there, and without the pass the fetches behind it would
// sleep on them until their MaxWaitMillis.
func leaveWaits(f *fetchWaits, sw *stateWriter) {
	for _, w := range f.by {
		p := w.p
		if p == nil {
			continue
		}
		p.mu.Lock()
		p.unqueueLocked(w)
		if w.woken {
			_, owing := p.useWakeLocked(w)
			n := p.wakeRoomLocked(max(w.want, 1), owing)
			if owing {
				sw.owe(n)
				sw.arrive()
			}
		}
		p.mu.Unlock()
	}
}

// queueLocked puts w at the back of p's queue, unless it is queued
// already (it keeps its place). Needs p.mu.
func (p *partition) queueLocked(w *waiter) {
	if w == nil || w.queued {
		return
	}
	w.p, w.queued = p, true
	p.waiters = append(p.waiters, w)
}

// unqueueLocked takes w off p's queue. Needs p.mu.
func (p *partition) unqueueLocked(w *waiter) {
	if w == nil || !w.queued {
		return
	}
	w.queued = false
	for i, x := range p.waiters {
		if x == w {
			p.waiters = append(p.waiters[:i:i], p.waiters[i+1:]...)
			return
		}
	}
}

// useWakeLocked is w's fetch back at p: a wake it had is used now. It
// reports whether it had one, and whether that one was owed to the writer
// (arrive). Needs p.mu.
func (p *partition) useWakeLocked(w *waiter) (used, owing bool) {
	if w == nil || !w.woken {
		return false, false
	}
	owing = w.owing
	w.woken, w.owing = false, false
	p.promised = max(p.promised-max(w.want, 1), 0)
	return true, owing
}

// poke makes w's fetch look again at once, without a place in a queue.
func (w *waiter) poke() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// wakeRoomLocked wakes queued waiters in order until their wants cover n
// records, and reports how many it woke; owing marks them as owed to the
// writer. Needs p.mu.
func (p *partition) wakeRoomLocked(n int, owing bool) int {
	woke := 0
	for n > 0 && len(p.waiters) > 0 {
		w := p.waiters[0]
		p.waiters = append(p.waiters[:0:0], p.waiters[1:]...)
		w.queued, w.woken, w.owing = false, true, owing
		w.poke()
		p.promised += max(w.want, 1)
		n -= max(w.want, 1)
		woke++
	}
	return woke
}

// acquirableLocked counts the records an acquisition could take now:
// those available in flight and the room past the window's end, below
// bound (the high watermark, or the last stable offset). Needs p.mu.
func (p *partition) acquirableLocked(maxLocks int, bound int64) int {
	n := 0
	for i := range p.recs {
		if p.recs[i].state == available {
			n++
		}
	}
	if room := min(int64(maxLocks-len(p.recs)), bound-p.end()); room > 0 {
		n += int(room)
	}
	return n
}

// promisedAwayLocked reports whether everything acquirable (bound as
// acquirableLocked's) is promised to fetches woken for it, or to fetches
// reading the log for it (acquire's claim): another fetch then waits in
// the queue rather than read the log for records those are on their way
// to take (it would race them, and all but one of the readers find
// nothing). A woken fetch is back when it asks (useWakeLocked took its
// want off promised), a reading one when it relocks. Needs p.mu.
func (p *partition) promisedAwayLocked(maxLocks int, bound int64) bool {
	return p.promised > 0 && p.acquirableLocked(maxLocks, bound) <= p.promised
}

// passOnLocked wakes the waiters behind an acquisition for what it left
// acquirable (bound as acquirableLocked's) beyond what fetches woken
// before are on their way to take (p.promised), and reports how many it
// woke. Needs p.mu.
func (p *partition) passOnLocked(maxLocks int, bound int64) int {
	if len(p.waiters) == 0 {
		return 0
	}
	if n := p.acquirableLocked(maxLocks, bound) - p.promised; n > 0 {
		return p.wakeRoomLocked(n, true)
	}
	return 0
}

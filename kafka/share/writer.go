package share

import (
	"sync"
	"time"

	"github.com/kgateway/kgateway/offsets"
)

// stateWriter makes share-partition states, and the share group records
// joins and leaves bump the epoch of, durable the way a group commit does: states submitted while a write is under way are gathered into the
// next write, one synced batch for all of them, and each submitter waits
// for the write that carries its state before it answers.
//
// A request changes a partition under the partition's lock, submits the
// new state, releases the lock and only then waits: the next member's
// request is not held behind this one's sync, and under load every
// concurrent ShareFetch and ShareAcknowledge of a node shares one sync
// instead of taking its turn at one each.
//
// Invariants:
//   - A state is never answered before it is durable: a submitter's
//     flight completes only after the write holding its state (or a later
//     state of the same partition, which includes its change) returned.
//   - Writes are applied one at a time in submission order, and a later
//     state of a partition replaces an earlier one still waiting, so the
//     store never goes back to an older state. A request that saw a state
//     in memory submits after the request that made it (both under the
//     partition's lock), so its answer waits for that state too.
//   - A failed write fails every submitter of it; the states stay in
//     memory as they were (as when a lone write fails).
//   - Each write is one atomic batch: a crash leaves a whole state per
//     partition, never a half-written one.
//
// Lingering for woken fetches: a change that wakes long-polling fetches
// (an acknowledgement that moved the in-flight window, an acquisition that
// left records for the next waiter) owes the writer their acquisitions
// (owe); each woken fetch pays back once its acquisition was submitted or
// found nothing (arrive). While anything is owed the writer holds the
// next write back, up to linger, so those acquisitions go into the same
// synced write as the change that woke them instead of the next one: a
// member's acknowledgement and the next member's acquisition share one
// sync. Nothing is answered earlier for it; a submitter only waits up to
// linger longer.
type stateWriter struct {
	write  func([]offsets.ShareWrite) error // the store's PutShareStates; tests wrap it
	linger time.Duration                    // the longest a write waits for owed acquisitions

	mu      sync.Mutex
	pending []offsets.ShareWrite
	index   map[stateKey]int // pending's entry of each partition
	next    *flight          // the write pending states go into
	current *flight          // the write under way, nil when none
	running bool             // a writer goroutine runs (lingering or writing)
	owed    int              // woken fetches not yet back (owe, arrive)
	// lingering: the writer waits for owed to reach 0; kick (cap 1)
	// tells it that it did.
	lingering bool
	kick      chan struct{}
}

// wokenLinger is how long a write waits at most for the acquisitions of
// the fetches its states woke: a woken fetch's read of the log and its
// acquisition take well under it, a synced write about as long.
const wokenLinger = 2 * time.Millisecond

type stateKey struct {
	group string
	tp    offsets.TopicPartition
}

// groupRecordKey stands for a group's record (ShareWrite.Record) among its
// partitions: no topic is named "". A later epoch replaces an earlier one
// still waiting, as a later state does.
var groupRecordKey = offsets.TopicPartition{Partition: -1}

// finished reports whether the write is over, and its error.
func (f *flight) finished() (bool, error) {
	select {
	case <-f.done:
		return true, f.err
	default:
		return false, nil
	}
}

// flight is one write: done is closed once it returned, err set before.
type flight struct {
	done chan struct{}
	err  error
}

func newFlight() *flight { return &flight{done: make(chan struct{})} }

// doneFlight is a write that is over: nothing to wait for.
func doneFlight() *flight {
	f := newFlight()
	close(f.done)
	return f
}

// wait blocks until the write is over and returns its error.
func (f *flight) wait() error {
	<-f.done
	return f.err
}

func newStateWriter(write func([]offsets.ShareWrite) error) *stateWriter {
	return &stateWriter{write: write, linger: wokenLinger, index: map[stateKey]int{}, next: newFlight(), kick: make(chan struct{}, 1)}
}

// owe records n woken fetches whose acquisitions the next write waits
// for (at most linger). A cluster's leader side has no writer: nothing.
func (w *stateWriter) owe(n int) {
	if w == nil || n <= 0 {
		return
	}
	w.mu.Lock()
	w.owed += n
	w.mu.Unlock()
}

// arrive is one woken fetch back: its acquisition was submitted, or it
// found nothing. The last one owed lets a lingering write start.
func (w *stateWriter) arrive() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.owed == 0 {
		return // its write stopped lingering already
	}
	w.owed--
	if w.owed == 0 && w.lingering {
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
}

// lingerLocked waits, mu released, until nothing is owed or linger
// passed; what is still owed then is forgotten (a fetch that never came
// back). Needs mu.
func (w *stateWriter) lingerLocked() {
	select {
	case <-w.kick: // a stale kick
	default:
	}
	timer := time.NewTimer(w.linger)
	defer timer.Stop()
	w.lingering = true
	for w.owed > 0 {
		w.mu.Unlock()
		select {
		case <-w.kick:
			w.mu.Lock()
		case <-timer.C:
			w.mu.Lock()
			w.owed = 0
		}
	}
	w.lingering = false
}

// submit queues ws for the next write and returns it, starting a writer
// when none runs.
func (w *stateWriter) submit(ws ...offsets.ShareWrite) *flight {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, x := range ws {
		k := stateKey{x.Group, x.Part.TopicPartition}
		if x.Record {
			k.tp = groupRecordKey
		}
		if i, ok := w.index[k]; ok {
			w.pending[i] = x
			continue
		}
		w.index[k] = len(w.pending)
		w.pending = append(w.pending, x)
	}
	f := w.next
	if !w.running {
		w.running = true
		if w.owed > 0 {
			go w.run(nil, nil) // it lingers first
		} else {
			go w.run(w.takeLocked())
		}
	}
	return f
}

// takeLocked starts the write of what is pending: it becomes the current
// flight, with the pending states, and later submissions go to a new
// one. Needs mu.
func (w *stateWriter) takeLocked() (*flight, []offsets.ShareWrite) {
	f, batch := w.next, w.pending
	w.current, w.next = f, newFlight()
	w.pending, w.index = nil, map[stateKey]int{}
	return f, batch
}

// run writes rounds until nothing is pending, each round's states in one
// call of write (f and batch: the first round's, taken already; nil: take
// it after lingering).
func (w *stateWriter) run(f *flight, batch []offsets.ShareWrite) {
	if f == nil {
		w.mu.Lock()
		f, batch = w.lingerTakeLocked()
		w.mu.Unlock()
	}
	for {
		f.err = w.write(batch)
		close(f.done)
		w.mu.Lock()
		if len(w.pending) == 0 {
			w.current, w.running = nil, false
			w.mu.Unlock()
			return
		}
		f, batch = w.lingerTakeLocked()
		w.mu.Unlock()
	}
}

// lingerTakeLocked takes the next round, after lingering while woken
// fetches are owed. Needs mu.
func (w *stateWriter) lingerTakeLocked() (*flight, []offsets.ShareWrite) {
	if w.owed > 0 {
		w.lingerLocked()
	}
	return w.takeLocked()
}

// flush returns a write that completes after everything submitted so far
// is written (at once without a writer: a cluster's leader side).
func (w *stateWriter) flush() *flight {
	if w == nil {
		f := newFlight()
		close(f.done)
		return f
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case len(w.pending) > 0:
		return w.next
	case w.current != nil:
		return w.current
	}
	f := newFlight()
	close(f.done)
	return f
}

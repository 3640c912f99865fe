package resolver

import "sync"

// Waiter waits for durable appends to any of many partitions at once (a
// long-poll Fetch over a fetch session of a thousand partitions): one
// registration per partition, one channel to select on, and the set of
// partitions that fired, so that a woken fetch re-reads only those. It is
// woken by durable appends only (D5), or when a watched partition is
// deleted or the resolver closed; it never polls and holds no read
// position (R1).
//
// A Waiter may be kept registered across many waits (a fetch session
// keeps one between its fetches): Keep of a partition already watched
// costs a map lookup by pointer; a partition bound again under the same
// name (a topic deleted and re-created) is another partition, registered
// anew; and Sweep drops the partitions not kept since the last Sweep
// (the old binding among them).
type Waiter struct {
	// C receives a value (non-blocking, capacity 1) after the next durable
	// append to any watched partition, or when one is deleted.
	C chan struct{}

	mu struct {
		sync.Mutex
		// parts are the partitions w is registered on, with the sweep
		// round each was last watched in.
		parts  map[*partition]uint64
		round  uint64
		fired  map[PartitionKey]bool
		closed bool
	}
}

// PartitionKey names a partition in a Waiter's fired set.
type PartitionKey struct {
	Topic     string
	Partition int32
}

// NewWaiter returns a Waiter watching nothing yet; Close it when done.
func (r *Resolver) NewWaiter() *Waiter {
	w := &Waiter{C: make(chan struct{}, 1)}
	w.mu.fired = make(map[PartitionKey]bool)
	w.mu.parts = make(map[*partition]uint64)
	return w
}

// WatchWith adds a partition to w. Register before reading, so that an append
// between the read and the wait is not missed.
func (r *Resolver) WatchWith(w *Waiter, topic string, partition int32) error {
	if src, ok := r.mu.companionSource(topic); ok {
		topic = src // a companion waits on its source (reads of the view)
	}
	p, err := r.mu.partition(topic, partition)
	if err != nil {
		return err
	}
	w.watch(p)
	return nil
}

// watch adds p to w, and reports whether it registered p now (false: p
// was watched already, or w is closed).
func (w *Waiter) watch(p *partition) (added bool) {
	w.mu.Lock()
	if w.mu.closed {
		w.mu.Unlock()
		return false
	}
	_, had := w.mu.parts[p]
	w.mu.parts[p] = w.mu.round
	w.mu.Unlock()
	if had {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.isClosed() {
		return false // Close ran meanwhile and may have missed p: not added
	}
	if p.mu.deleted {
		w.fire(p)
		return true
	}
	if p.mu.waiters == nil {
		p.mu.waiters = make(map[*Waiter]struct{})
	}
	p.mu.waiters[w] = struct{}{}
	return true
}

// unwatch unregisters w from p.
func (p *partition) unwatch(w *Waiter) {
	p.mu.Lock()
	delete(p.mu.waiters, w)
	p.mu.Unlock()
}

// isClosed reports Close; called under a partition's lock (which is
// taken before w.mu, as fire does).
func (w *Waiter) isClosed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mu.closed
}

// Sweep unregisters w from every partition not watched since the previous
// Sweep (a partition a fetch session forgot, or one no longer found).
func (w *Waiter) Sweep() {
	var gone []*partition
	w.mu.Lock()
	for p, round := range w.mu.parts {
		if round != w.mu.round {
			gone = append(gone, p)
			delete(w.mu.parts, p)
		}
	}
	w.mu.round++
	w.mu.Unlock()
	for _, p := range gone {
		p.unwatch(w)
	}
}

// Fired returns and clears the partitions that fired since the last call.
func (w *Waiter) Fired() map[PartitionKey]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	f := w.mu.fired
	w.mu.fired = make(map[PartitionKey]bool)
	return f
}

// Reset forgets every wake-up so far: C is drained and the fired set
// cleared. A wait kept registered across reads resets before each first
// read: an append after the Reset fires again, and one before it is in
// the read.
func (w *Waiter) Reset() {
	select {
	case <-w.C:
	default:
	}
	w.mu.Lock()
	clear(w.mu.fired)
	w.mu.Unlock()
}

// Watching is how many partitions w is registered on.
func (w *Waiter) Watching() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.mu.parts)
}

// Close unregisters w from every partition.
func (w *Waiter) Close() {
	w.mu.Lock()
	parts := w.mu.parts
	w.mu.parts, w.mu.closed = nil, true
	w.mu.Unlock()
	for p := range parts {
		p.unwatch(w)
	}
}

// fire records p and wakes w; called under p.mu.
func (w *Waiter) fire(p *partition) {
	w.mu.Lock()
	w.mu.fired[PartitionKey{Topic: p.topic, Partition: p.index}] = true
	w.mu.Unlock()
	select {
	case w.C <- struct{}{}:
	default:
	}
}

// wakeWaitersLocked fires every registered waiter; needs p.mu.
func (p *partition) wakeWaitersLocked() {
	for w := range p.mu.waiters {
		w.fire(p)
	}
}

// Waiters is how many Waiters are registered on a partition: for tests
// that check a dropped registration is gone.
func (r *Resolver) Waiters(topic string, partition int32) (int, error) {
	p, err := r.mu.partition(topic, partition)
	if err != nil {
		return 0, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.mu.waiters), nil
}

// Keep adds h's partition to w, as Watch, and reports whether it
// registered it now: false when w watched it already (a Waiter kept
// across waits), or is closed.
func (w *Waiter) Keep(h Partition) bool {
	if h.p == nil {
		return false
	}
	return w.watch(h.p)
}

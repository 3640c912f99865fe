package resolver

import "sync"

// Waiter waits for durable appends to any of many partitions at once (a
// long-poll Fetch over a fetch session of a thousand partitions): one
// registration per partition for the whole wait, one channel to select
// on, and the set of partitions that fired, so that a woken fetch re-reads
// only those. It is woken by durable appends only (D5), or when a watched
// partition is deleted or the resolver closed; it never polls and holds
// no read position (R1).
type Waiter struct {
	// C receives a value (non-blocking, capacity 1) after the next durable
	// append to any watched partition, or when one is deleted.
	C chan struct{}

	mu struct {
		sync.Mutex
		parts  []*partition
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

// watch adds p to w.
func (w *Waiter) watch(p *partition) {
	w.mu.Lock()
	if w.mu.closed {
		w.mu.Unlock()
		return
	}
	w.mu.parts = append(w.mu.parts, p)
	w.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.deleted {
		w.fire(p)
		return
	}
	if p.mu.waiters == nil {
		p.mu.waiters = make(map[*Waiter]struct{})
	}
	p.mu.waiters[w] = struct{}{}
}

// Fired returns and clears the partitions that fired since the last call.
func (w *Waiter) Fired() map[PartitionKey]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	f := w.mu.fired
	w.mu.fired = make(map[PartitionKey]bool)
	return f
}

// Close unregisters w from every partition.
func (w *Waiter) Close() {
	w.mu.Lock()
	parts := w.mu.parts
	w.mu.parts, w.mu.closed = nil, true
	w.mu.Unlock()
	for _, p := range parts {
		p.mu.Lock()
		delete(p.mu.waiters, w)
		p.mu.Unlock()
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

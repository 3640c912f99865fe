package fetch

import (
	"sync"

	"github.com/kgateway/kgateway/kafka/fetchsession"
	"github.com/kgateway/kgateway/resolver"
)

// keptWaiter is a fetch session's long-poll Waiter, kept registered on
// the session's partitions between its fetches (the kept session
// waiter): a fetch that must wait finds most partitions watched already
// and registers only those added since, or bound again (a topic deleted
// and re-created), instead of all of them, and unregisters only those
// the session forgot and old bindings (Waiter.Sweep). Appends between
// fetches fire it too, which the next fetch discards (Waiter.Reset)
// before its first read.
//
// One request at a time uses it (take): a second request on the same
// session while one waits (of the two, one-by-one session epochs fail
// the older at Finish) waits on a Waiter of its own, as a sessionless
// fetch does, so neither can drain a wake-up meant for the other. The session cache closes it when the
// session is dropped; if a request is using it then, the request closes
// it when done (release), so a drop never disturbs a wait.
type keptWaiter struct {
	w  *resolver.Waiter
	mu struct {
		sync.Mutex
		busy, dropped bool
	}
}

// take reserves k for one request; false when another holds it or the
// session was dropped.
func (k *keptWaiter) take() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.mu.busy || k.mu.dropped {
		return false
	}
	k.mu.busy = true
	return true
}

// release ends the request's use of k, closing k's Waiter if the session
// was dropped meanwhile.
func (k *keptWaiter) release() {
	k.mu.Lock()
	k.mu.busy = false
	dropped := k.mu.dropped
	k.mu.Unlock()
	if dropped {
		k.w.Close()
	}
}

// Close is the session cache's, when the session is dropped: it
// unregisters the Waiter now, or at release if a request holds it.
func (k *keptWaiter) Close() {
	k.mu.Lock()
	k.mu.dropped = true
	busy := k.mu.busy
	k.mu.Unlock()
	if !busy {
		k.w.Close()
	}
}

// keptFor reserves session fs's kept Waiter for this request (made on
// first use) and resets it for a first read; nil when it cannot be used
// (a cluster, whose reads carry no Versions; a duplicate request holding
// it; a dropped session): the fetch then waits as a sessionless one.
func (f *Fetcher) keptFor(fs *fetchsession.Session) *keptWaiter {
	if fs == nil || f.Cluster {
		return nil
	}
	kw, _ := f.Sessions.Watch(fs, func() fetchsession.Watch {
		return &keptWaiter{w: f.Host.NewWaiter()}
	}).(*keptWaiter)
	if kw == nil || !kw.take() {
		return nil
	}
	kw.w.Reset()
	return kw
}

// registerLate has w watch every known item's partition, through the
// binding the item was read with, and no other: after the fetch's first
// read, when it must wait. It returns the items a durable append may have
// changed since their read, to be read again as if they had fired: those
// registered only now (all of them on a new Waiter) whose Version moved
// since the read, or that were read without one. The others were
// registered before the fetch's first read (a kept Waiter, reset before
// it), so every append since has fired.
func (f *Fetcher) registerLate(w *resolver.Waiter, items []Item, rd *read) map[resolver.PartitionKey]bool {
	moved := make(map[resolver.PartitionKey]bool)
	for i := range items {
		it := &items[i]
		if it.Name == "" || resolver.IsInternalTopic(it.Name) {
			continue
		}
		h, err := it.resolve(f.Host)
		if err != nil || !w.Keep(h) {
			continue
		}
		if movedSinceRead(h, &rd.items[i]) {
			moved[it.firedKey()] = true
		}
	}
	w.Sweep()
	return moved
}

// movedSinceRead reports whether an append may have changed h since ir
// read it: its Version moved, or it was read without one.
func movedSinceRead(h resolver.Partition, ir *itemRead) bool {
	switch ir.kind {
	case fixed:
		return false
	case versioned:
		v, _ := h.Version()
		return v != ir.version
	}
	return true
}

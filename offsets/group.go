package offsets

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble/v2"
)

// Default bounds of one group of mirrored writes (O8), under what the
// cluster's mirror writes in one etcd transaction (etcd's default
// max-txn-ops of 128, one of them its own; a request of 1 MiB, about
// twice a batch's size once hex-encoded).
const (
	DefaultMirrorGroupEntries = 100
	DefaultMirrorGroupBytes   = 256 << 10
)

// errLead tells a queued write that it leads the next group.
var errLead = errors.New("offsets: lead the next group")

// mirrorQueue group-commits the store's mirrored writes (O8): writes that
// arrive while a group is being mirrored and applied wait in the queue;
// when that group is done, the first of them leads the next group, which
// takes the queue's head (in arrival order) up to the bounds, hands it to
// Options.Mirror as one batch holding all of them in that order, and
// applies that batch with one pebble sync. Each writer is answered after
// its group's apply: with nil once its batch is durable in the mirror
// and locally, or with the group's error, when nothing of the group was
// applied locally. One group runs at a time, so the mirror sees every
// batch in the order of application.
type mirrorQueue struct {
	mu      sync.Mutex
	waiting []*mirrorWrite
	leading bool // a writer is mirroring and applying a group
}

// mirrorWrite is one caller's batch and its answer: nil, the group's
// error, or errLead.
type mirrorWrite struct {
	b    *pebble.Batch
	done chan error
}

// applyMirrored is apply with Options.Mirror set: it returns once b's
// group is mirrored and applied synced, or failed (O8).
func (s *Store) applyMirrored(b *pebble.Batch) error {
	q := &s.mirrorQ
	w := &mirrorWrite{b: b, done: make(chan error, 1)}
	q.mu.Lock()
	q.waiting = append(q.waiting, w)
	lead := !q.leading
	q.leading = true
	q.mu.Unlock()
	if !lead {
		if err := <-w.done; err != errLead {
			return err
		}
	}
	group := s.takeGroup()  // w is the queue's head: a leader starts on an empty queue or is handed it
	err := errGroupPanicked // what the others get if applyGroup panics
	defer func() { s.finishGroup(w, group, err) }()
	err = s.applyGroup(group)
	return err
}

// localSync is how a mirrored group is applied locally: synced, unless
// the mirror is the only durable copy (Options.MirrorDurable), whose
// local store is never reopened, so an unsynced apply loses nothing.
func (s *Store) localSync() *pebble.WriteOptions {
	if s.opts.MirrorDurable {
		return pebble.NoSync
	}
	return pebble.Sync
}

// errGroupPanicked answers the writes of a group whose mirror or apply
// panicked in its leader.
var errGroupPanicked = errors.New("offsets: mirrored write panicked")

// finishGroup answers the group's writes other than the leader's with
// err and hands the lead to the first write queued since, if any.
func (s *Store) finishGroup(leader *mirrorWrite, group []*mirrorWrite, err error) {
	for _, o := range group {
		if o != leader {
			o.done <- err
		}
	}
	q := &s.mirrorQ
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiting) > 0 {
		q.waiting[0].done <- errLead
	} else {
		q.leading = false
	}
}

// takeGroup removes the next group from the queue: its head, and the
// writes after it while the group stays within
// Options.MirrorGroupEntries and MirrorGroupBytes.
func (s *Store) takeGroup() []*mirrorWrite {
	q := &s.mirrorQ
	q.mu.Lock()
	defer q.mu.Unlock()
	n, entries, size := 1, int(q.waiting[0].b.Count()), q.waiting[0].b.Len()
	for ; n < len(q.waiting); n++ {
		b := q.waiting[n].b
		if entries+int(b.Count()) > s.opts.MirrorGroupEntries || size+b.Len() > s.opts.MirrorGroupBytes {
			break
		}
		entries, size = entries+int(b.Count()), size+b.Len()
	}
	group := q.waiting[:n:n]
	q.waiting = append([]*mirrorWrite(nil), q.waiting[n:]...)
	return group
}

// applyGroup mirrors the group's batches as one batch, in order, then
// applies that batch, synced unless Options.MirrorDurable; a mirror that
// fails applies nothing.
func (s *Store) applyGroup(group []*mirrorWrite) error {
	b := group[0].b
	if len(group) > 1 {
		b = s.db.NewBatch()
		defer b.Close()
		for _, w := range group {
			if err := b.Apply(w.b, nil); err != nil {
				return err
			}
		}
	}
	if err := s.opts.Mirror(b); err != nil {
		return fmt.Errorf("offsets: mirror: %w", err)
	}
	return s.db.Apply(b, s.localSync())
}

package node

import (
	"sync"
	"time"
)

// Rebuild retry schedule: a partition whose rebuild failed (objects
// missing or unreadable, etcd errors) is not acquired again before
// rebuildBackoff of its consecutive failures has passed. Without it the
// release of the failed ownership wakes the next placement round at once
// and the rebuild is retried every few milliseconds.
const (
	rebuildBackoffMin = 100 * time.Millisecond
	rebuildBackoffMax = 10 * time.Second
)

// rebuildBackoff is how long to wait after the fails-th consecutive
// failure: rebuildBackoffMin doubling, capped at rebuildBackoffMax.
func rebuildBackoff(fails int) time.Duration {
	if fails <= 0 {
		return 0
	}
	d := rebuildBackoffMin
	for i := 1; i < fails && d < rebuildBackoffMax; i++ {
		d *= 2
	}
	return min(d, rebuildBackoffMax)
}

// retries is the per-partition retry state of failed rebuilds. A success
// forgets the partition (the next failure waits rebuildBackoffMin again).
type retries struct {
	mu sync.Mutex
	m  map[string]retryState
}

type retryState struct {
	fails int
	next  time.Time // not acquired again before
}

// failed records a failed rebuild of pkey at now.
func (r *retries) failed(pkey string, now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]retryState{}
	}
	s := r.m[pkey]
	s.fails++
	d := rebuildBackoff(s.fails)
	s.next = now.Add(d)
	r.m[pkey] = s
	return d
}

// succeeded forgets pkey's failures.
func (r *retries) succeeded(pkey string) {
	r.mu.Lock()
	delete(r.m, pkey)
	r.mu.Unlock()
}

// due keeps the pkeys of acquire that may be tried at now, in order.
func (r *retries) due(acquire []string, now time.Time) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := acquire[:0:0]
	for _, k := range acquire {
		if s, ok := r.m[k]; ok && now.Before(s.next) {
			continue
		}
		out = append(out, k)
	}
	return out
}

package resolver

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgateway/kgateway/storage"
	"go.uber.org/zap"
)

// The log cleaner of compacted topics (doc.go "Compaction", L2-L11).
// Each pass cleans one partition: it maps the dirty ledgers' keys to
// their latest offsets (L3), then rewrites the range from the log's first
// ledger to where the map ends as a new generation (L4, L8, L9).

// cleanerState is the cleaner's part of the Resolver.
type cleanerState struct {
	stop chan struct{}
	wg   sync.WaitGroup
	io   throttle

	mu struct {
		sync.Mutex
		busy map[*partition]bool
		// horizon is, per cleaned log (a partition's or its view's), the
		// earliest delete horizon of a tombstone or marker its last pass
		// kept (L2, L8).
		horizon map[storage.LogID]int64
		// scanned is, per view log, how far a view pass read its source
		// (W2), in memory: a restart reads the rest again.
		scanned map[storage.LogID]scanMark
	}
	stats cleanerCounters
}

// CleanerStats is what the cleaner has done since Open (metrics).
type CleanerStats struct {
	Passes       int64
	BytesRead    int64 // batches read by passes (the map's and the rewrite's)
	BytesWritten int64 // batches written to new generations
	// Recopy is the last pass's bytes written over the bytes of the range
	// it rewrote.
	Recopy float64
	// MaxDirtyRatio and MaxLagMs are the largest dirty ratio and the
	// oldest dirty entry's age among compacted partitions, as of the last
	// time the cleaner looked for work.
	MaxDirtyRatio float64
	MaxLagMs      int64
	LastPass      time.Duration
	PassTime      time.Duration // all passes together
}

type cleanerCounters struct {
	passes, read, written, lastPass, passTime, maxLag atomic.Int64
	recopy, maxRatio                                  atomic.Uint64 // float64 bits
}

// CleanerStats returns the cleaner's counters.
func (r *Resolver) CleanerStats() CleanerStats {
	c := &r.cleaner.stats
	return CleanerStats{
		Passes: c.passes.Load(), BytesRead: c.read.Load(), BytesWritten: c.written.Load(),
		Recopy: math.Float64frombits(c.recopy.Load()), MaxDirtyRatio: math.Float64frombits(c.maxRatio.Load()),
		MaxLagMs: c.maxLag.Load(), LastPass: time.Duration(c.lastPass.Load()), PassTime: time.Duration(c.passTime.Load()),
	}
}

// startCleaner starts log.cleaner.threads cleaner goroutines (none when
// negative).
func (r *Resolver) startCleaner() {
	c := &r.cleaner
	c.mu.busy = map[*partition]bool{}
	c.mu.horizon = map[storage.LogID]int64{}
	c.mu.scanned = map[storage.LogID]scanMark{}
	c.io.rate = r.cfg.Cleaner.IOMaxBytesPerSecond
	c.stop = make(chan struct{})
	c.io.stop = c.stop
	for range max(r.cfg.Cleaner.Threads, 0) {
		c.wg.Add(1)
		go r.cleanerLoop()
	}
}

// stopCleaner stops the cleaner goroutines and waits for their passes.
func (r *Resolver) stopCleaner() {
	if r.cleaner.stop != nil {
		close(r.cleaner.stop)
		r.cleaner.wg.Wait()
	}
}

func (r *Resolver) cleanerLoop() {
	defer r.cleaner.wg.Done()
	m := newOffsetMap(r.cfg.Cleaner.perThreadBuffer())
	for {
		select {
		case <-r.cleaner.stop:
			return
		default:
		}
		worked, err := r.cleanOne(m, r.now(), nil)
		if err != nil {
			r.log.Warn("cleaner-pass-failed", zap.Error(err))
		}
		if worked && err == nil {
			continue
		}
		if viewed, errs := r.viewPasses(m, r.now(), nil); viewed && len(errs) == 0 {
			continue // W2: a view took data; look for work again
		}
		t := time.NewTimer(r.cfg.Cleaner.Backoff)
		select {
		case <-r.cleaner.stop:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// RunCleaner cleans, as of now, every compacted partition that is due
// (L2), pass after pass, until none is: the background threads' work,
// on demand (tests, tools). A partition whose pass fails is not taken
// again by this call.
func (r *Resolver) RunCleaner(now time.Time) error {
	m := newOffsetMap(r.cfg.Cleaner.perThreadBuffer())
	skip := map[*partition]bool{}
	var errs []error
	for range 10000 {
		worked, err := r.cleanOne(m, now, skip)
		if err != nil {
			errs = append(errs, err)
		}
		if !worked {
			var verrs []error
			worked, verrs = r.viewPasses(m, now, skip) // W2
			errs = append(errs, verrs...)
		}
		if !worked {
			break
		}
	}
	return errors.Join(errs...)
}

// cleanOne picks the partition most in need (L2) and cleans it. worked is
// false when no partition was due.
func (r *Resolver) cleanOne(m *offsetMap, now time.Time, skip map[*partition]bool) (worked bool, err error) {
	plan, ok := r.pickPartition(now, skip)
	if !ok {
		return false, nil
	}
	defer r.release(plan.p)
	start := time.Now()
	err = r.cleanPartition(plan, m, now)
	d := time.Since(start)
	r.cleaner.stats.lastPass.Store(int64(d))
	r.cleaner.stats.passTime.Add(int64(d))
	if err != nil {
		if skip != nil {
			skip[plan.p] = true
		}
		if errors.Is(err, ErrUnknownTopic) || errors.Is(err, storage.ErrNoLog) || errors.Is(err, storage.ErrRemoved) ||
			errors.Is(err, errCleanerStopped) {
			return true, nil // deleted or trimmed meanwhile: a later pass
		}
		return true, fmt.Errorf("clean %s/%d: %w", plan.p.topic, plan.p.index, err)
	}
	r.cleaner.stats.passes.Add(1)
	return true, nil
}

// release ends a partition's pass.
func (r *Resolver) release(p *partition) {
	r.cleaner.mu.Lock()
	delete(r.cleaner.mu.busy, p)
	r.cleaner.mu.Unlock()
}

// pickPartition plans every compacted partition and takes the one most in
// need (L2): past max.compaction.lag.ms first, then the dirtiest, then
// one with a passed tombstone horizon. It marks it busy.
func (r *Resolver) pickPartition(now time.Time, skip map[*partition]bool) (cleanPlan, bool) {
	var best cleanPlan
	found := false
	maxRatio, maxLag := 0.0, int64(0)
	for _, p := range r.allPartitions() {
		if skip[p] {
			continue
		}
		plan, err := r.planClean(p, now)
		if err != nil || !plan.compact {
			continue
		}
		maxRatio, maxLag = max(maxRatio, plan.ratio), max(maxLag, plan.lagMs)
		if !plan.due() {
			continue
		}
		r.cleaner.mu.Lock()
		busy := r.cleaner.mu.busy[p]
		r.cleaner.mu.Unlock()
		if !busy && (!found || plan.before(best)) {
			best, found = plan, true
		}
	}
	r.cleaner.stats.maxRatio.Store(math.Float64bits(maxRatio))
	r.cleaner.stats.maxLag.Store(maxLag)
	if !found {
		return cleanPlan{}, false
	}
	r.cleaner.mu.Lock()
	defer r.cleaner.mu.Unlock()
	if r.cleaner.mu.busy[best.p] {
		return cleanPlan{}, false // another thread took it: look again
	}
	r.cleaner.mu.busy[best.p] = true
	return best, true
}

// horizonOf is the earliest tombstone horizon the partition's last pass
// kept, -1 when none.
func (r *Resolver) horizonOf(l storage.LogID) int64 {
	r.cleaner.mu.Lock()
	defer r.cleaner.mu.Unlock()
	if h, ok := r.cleaner.mu.horizon[l]; ok {
		return h
	}
	return -1
}

func (r *Resolver) setHorizon(l storage.LogID, h int64) {
	r.cleaner.mu.Lock()
	defer r.cleaner.mu.Unlock()
	if h < 0 {
		delete(r.cleaner.mu.horizon, l)
		return
	}
	r.cleaner.mu.horizon[l] = h
}

// throttle paces the cleaner's I/O (L7): every byte read or written
// takes 1/rate seconds of a schedule shared by all threads.
type throttle struct {
	rate float64
	stop <-chan struct{}
	mu   sync.Mutex
	next time.Time
}

// charge accounts n bytes and waits until the schedule allows them; it
// returns early when the cleaner stops.
func (t *throttle) charge(n int) {
	if t.rate <= 0 || t.rate == math.MaxFloat64 || n <= 0 {
		return
	}
	d := time.Duration(float64(n) / t.rate * float64(time.Second))
	t.mu.Lock()
	now := time.Now()
	if t.next.Before(now) {
		t.next = now
	}
	t.next = t.next.Add(d)
	wait := t.next.Sub(now)
	t.mu.Unlock()
	if wait <= 0 {
		return
	}
	tm := time.NewTimer(wait)
	defer tm.Stop()
	select {
	case <-tm.C:
	case <-t.stop:
	}
}

func floatBits(f float64) uint64 { return math.Float64bits(f) }

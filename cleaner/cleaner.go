package cleaner

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

// The log cleaner of compacted topics (resolver/doc.go "Compaction", the compaction rules).
// Each pass cleans one partition: it maps the dirty ledgers' keys to
// their latest offsets (the dedupe budget), then rewrites the range from the log's first
// ledger to where the map ends as a new generation (the latest-record rewrite, the tombstone horizon, compacted generations).

// Cleaner is the log cleaner of one resolver's partitions.
type Cleaner struct {
	store *storage.Store
	host  Host
	opts  Options
	log   *zap.Logger

	stop chan struct{}
	wg   sync.WaitGroup
	io   throttle

	mu struct {
		sync.Mutex
		busy map[Partition]bool
		// horizon is, per cleaned log (a partition's or its view's), the
		// earliest delete horizon of a tombstone or marker its last pass
		// kept (the cleanable range, the tombstone horizon).
		horizon map[storage.LogID]int64
		// scanned is, per view log, how far a view pass read its source
		// (the view log), in memory: a restart reads the rest again.
		scanned map[storage.LogID]scanMark
	}
	stats cleanerCounters
}

// Stats is what the cleaner has done since it started (metrics).
type Stats struct {
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

// Stats returns the cleaner's counters.
func (r *Cleaner) Stats() Stats {
	c := &r.stats
	return Stats{
		Passes: c.passes.Load(), BytesRead: c.read.Load(), BytesWritten: c.written.Load(),
		Recopy: math.Float64frombits(c.recopy.Load()), MaxDirtyRatio: math.Float64frombits(c.maxRatio.Load()),
		MaxLagMs: c.maxLag.Load(), LastPass: time.Duration(c.lastPass.Load()), PassTime: time.Duration(c.passTime.Load()),
	}
}

// New returns a cleaner of host's partitions over store. Start starts
// its threads.
func New(store *storage.Store, host Host, opts Options) *Cleaner {
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	r := &Cleaner{store: store, host: host, opts: opts, log: opts.Log, stop: make(chan struct{})}
	r.mu.busy = map[Partition]bool{}
	r.mu.horizon = map[storage.LogID]int64{}
	r.mu.scanned = map[storage.LogID]scanMark{}
	r.io.rate = opts.IOMaxBytesPerSecond
	r.io.stop = r.stop
	return r
}

// Start starts Options.Threads cleaner goroutines (none when not
// positive).
func (r *Cleaner) Start() {
	for range max(r.opts.Threads, 0) {
		r.wg.Add(1)
		go r.cleanerLoop()
	}
}

// Stop stops the cleaner goroutines and waits for their passes; a pass
// of Run in progress ends early.
func (r *Cleaner) Stop() {
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	r.wg.Wait()
}

func (r *Cleaner) cleanerLoop() {
	defer r.wg.Done()
	m := newOffsetMap(r.opts.BufferPerThread)
	for {
		select {
		case <-r.stop:
			return
		default:
		}
		worked, err := r.cleanOne(m, r.opts.Now(), nil)
		if err != nil {
			r.log.Warn("cleaner-pass-failed", zap.Error(err))
		}
		if worked && err == nil {
			continue
		}
		if viewed, errs := r.viewPasses(m, r.opts.Now(), nil); viewed && len(errs) == 0 {
			continue // The view log: a view took data; look for work again
		}
		t := time.NewTimer(r.opts.Backoff)
		select {
		case <-r.stop:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// Run cleans, as of now, every compacted partition that is due
// (the cleanable range), pass after pass, until none is: the background threads' work,
// on demand (tests, tools). A partition whose pass fails is not taken
// again by this call.
func (r *Cleaner) Run(now time.Time) error {
	m := newOffsetMap(r.opts.BufferPerThread)
	skip := map[Partition]bool{}
	var errs []error
	for range 10000 {
		worked, err := r.cleanOne(m, now, skip)
		if err != nil {
			errs = append(errs, err)
		}
		if !worked {
			var verrs []error
			worked, verrs = r.viewPasses(m, now, skip) // The view log
			errs = append(errs, verrs...)
		}
		if !worked {
			break
		}
	}
	return errors.Join(errs...)
}

// cleanOne picks the partition most in need (the cleanable range) and cleans it. worked is
// false when no partition was due.
func (r *Cleaner) cleanOne(m *offsetMap, now time.Time, skip map[Partition]bool) (worked bool, err error) {
	plan, ok := r.pickPartition(now, skip)
	if !ok {
		return false, nil
	}
	defer r.release(plan.p)
	start := time.Now()
	err = r.cleanPartition(plan, m, now)
	d := time.Since(start)
	r.stats.lastPass.Store(int64(d))
	r.stats.passTime.Add(int64(d))
	if err != nil {
		if skip != nil {
			skip[plan.p] = true
		}
		if errors.Is(err, r.opts.UnknownTopic) || errors.Is(err, storage.ErrNoLog) || errors.Is(err, storage.ErrRemoved) ||
			errors.Is(err, errCleanerStopped) {
			return true, nil // deleted or trimmed meanwhile: a later pass
		}
		return true, fmt.Errorf("clean %s/%d: %w", plan.p.Topic(), plan.p.Index(), err)
	}
	r.stats.passes.Add(1)
	return true, nil
}

// release ends a partition's pass.
func (r *Cleaner) release(p Partition) {
	r.mu.Lock()
	delete(r.mu.busy, p)
	r.mu.Unlock()
}

// pickPartition plans every compacted partition and takes the one most in
// need (the cleanable range): past max.compaction.lag.ms first, then the dirtiest, then
// one with a passed tombstone horizon. It marks it busy.
func (r *Cleaner) pickPartition(now time.Time, skip map[Partition]bool) (cleanPlan, bool) {
	var best cleanPlan
	found := false
	maxRatio, maxLag := 0.0, int64(0)
	for _, p := range r.host.Partitions() {
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
		r.mu.Lock()
		busy := r.mu.busy[p]
		r.mu.Unlock()
		if !busy && (!found || plan.before(best)) {
			best, found = plan, true
		}
	}
	r.stats.maxRatio.Store(math.Float64bits(maxRatio))
	r.stats.maxLag.Store(maxLag)
	if !found {
		return cleanPlan{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.busy[best.p] {
		return cleanPlan{}, false // another thread took it: look again
	}
	r.mu.busy[best.p] = true
	return best, true
}

// horizonOf is the earliest tombstone horizon the partition's last pass
// kept, -1 when none.
func (r *Cleaner) horizonOf(l storage.LogID) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h, ok := r.mu.horizon[l]; ok {
		return h
	}
	return -1
}

func (r *Cleaner) setHorizon(l storage.LogID, h int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h < 0 {
		delete(r.mu.horizon, l)
		return
	}
	r.mu.horizon[l] = h
}

// throttle paces the cleaner's I/O (the cleaner throttle): every byte read or written
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

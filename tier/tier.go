package tier

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgateway/kgateway/storage"
	"go.uber.org/zap"
)

// Options configure a Tier. The zero value of each field is its default.
type Options struct {
	// Prefix is prepended to every object name ("kgateway/" by default).
	Prefix string
	// Node names this process in leases and pins (default: random).
	Node string
	// UploadConcurrency bounds concurrent uploads (default 2).
	UploadConcurrency int
	// UploadBytesPerSec bounds upload bandwidth over all uploads (0: none).
	UploadBytesPerSec int64
	// ChunkBytes is the unit of ranged reads and of the cache (1 MiB).
	ChunkBytes int64
	// CacheBytes bounds the cache of fetched chunks (64 MiB).
	CacheBytes int64
	// PinTTL is a reader pin's lifetime (1 minute); LeaseTTL an upload
	// attempt's (10 minutes); OrphanGrace how old an object no record
	// names must be before it is deleted (10 minutes).
	PinTTL, LeaseTTL, OrphanGrace time.Duration
	// OpTimeout bounds one object-store call (30 s); Retries is how often
	// a failed call is tried again (5), with exponential backoff from
	// Backoff (100 ms).
	OpTimeout time.Duration
	Retries   int
	Backoff   time.Duration
	// ReadTimeout bounds one Read, its retries included (5 s): a fetch
	// of object data answers within it, with what it has or with an
	// error, however the store fails (down, hung, throttling), and the
	// client gets KAFKA_STORAGE_ERROR before its own request timeout
	// (a franz-go fetch's is its max wait plus 10 s) instead of no
	// answer for minutes. Negative: no bound but the retries'.
	ReadTimeout time.Duration
	Logger      *zap.Logger
	Now         func() time.Time
}

func (o Options) withDefaults() Options {
	def := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	if o.Prefix == "" {
		o.Prefix = "kgateway/"
	}
	if o.Node == "" {
		o.Node = randomID()
	}
	if o.UploadConcurrency <= 0 {
		o.UploadConcurrency = 2
	}
	if o.ChunkBytes <= 0 {
		o.ChunkBytes = 1 << 20
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = 64 << 20
	}
	def(&o.PinTTL, time.Minute)
	def(&o.LeaseTTL, 10*time.Minute)
	def(&o.OrphanGrace, 10*time.Minute)
	def(&o.OpTimeout, 30*time.Second)
	def(&o.ReadTimeout, 5*time.Second)
	def(&o.Backoff, 100*time.Millisecond)
	if o.Retries == 0 {
		o.Retries = 5
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Tier keeps sealed ledgers of a store in an object store: it uploads
// them, reads them back for fetches, and deletes them (doc.go).
type Tier struct {
	store  *storage.Store
	bucket Bucket
	meta   Meta
	opts   Options
	log    *zap.Logger
	upSem  chan struct{}
	limit  *limiter
	cache  *chunkCache
	stats  counters

	idxMu sync.Mutex
	idx   map[string][]indexRec // object-level indexes by key, checked

	// active names the objects this process is uploading now: an
	// Uploading record of this node that is not among them was left by
	// an earlier process of the node (a crash), and is an orphan.
	activeMu sync.Mutex
	active   map[string]bool

	// crashAfterWrite (tests): Upload returns right after writing the
	// object, as if the process had died there.
	crashAfterWrite bool

	closeOnce sync.Once
	closing   chan struct{}
	bg        sync.WaitGroup
}

// New returns a Tier over store, keeping objects in bucket and their
// metadata in meta.
func New(store *storage.Store, bucket Bucket, meta Meta, opts Options) *Tier {
	opts = opts.withDefaults()
	t := &Tier{
		store: store, bucket: bucket, meta: meta, opts: opts, log: opts.Logger,
		upSem: make(chan struct{}, opts.UploadConcurrency), limit: newLimiter(opts.UploadBytesPerSec),
		idx: make(map[string][]indexRec), closing: make(chan struct{}), active: make(map[string]bool),
	}
	t.cache = newChunkCache(opts.CacheBytes)
	return t
}

// Close stops background prefetches and waits for them.
func (t *Tier) Close() {
	t.closeOnce.Do(func() { close(t.closing) })
	t.bg.Wait()
}

// Meta is the tier's object metadata.
func (t *Tier) Meta() Meta { return t.meta }

// counters are the tier's metrics (Stats).
type counters struct {
	uploads, uploadBytes, uploadFailures      atomic.Int64
	offloads, deletes, orphans                atomic.Int64
	reads, readBytes, cacheHits, cacheMisses  atomic.Int64
	retries, corrupt, stale, pinned, failures atomic.Int64
}

// Stats are the tier's counters since New.
type Stats struct {
	Uploads, UploadBytes, UploadFailures int64
	Offloads, Deletes, Orphans           int64
	Reads, ReadBytes, CacheHits, Misses  int64
	// Retries counts object-store calls tried again; Corrupt objects
	// found corrupt or truncated (never served, B7); Stale candidates a
	// read found changed after pinning (B5); Failures failed calls.
	Retries, Corrupt, Stale, Pins, Failures int64
}

// Stats returns the counters.
func (t *Tier) Stats() Stats {
	c := &t.stats
	return Stats{
		Uploads: c.uploads.Load(), UploadBytes: c.uploadBytes.Load(), UploadFailures: c.uploadFailures.Load(),
		Offloads: c.offloads.Load(), Deletes: c.deletes.Load(), Orphans: c.orphans.Load(),
		Reads: c.reads.Load(), ReadBytes: c.readBytes.Load(), CacheHits: c.cacheHits.Load(), Misses: c.cacheMisses.Load(),
		Retries: c.retries.Load(), Corrupt: c.corrupt.Load(), Stale: c.stale.Load(), Pins: c.pinned.Load(), Failures: c.failures.Load(),
	}
}

// setActive marks key as being uploaded by this process, or not.
func (t *Tier) setActive(key string, on bool) {
	t.activeMu.Lock()
	defer t.activeMu.Unlock()
	if on {
		t.active[key] = true
	} else {
		delete(t.active, key)
	}
}

func (t *Tier) isActive(key string) bool {
	t.activeMu.Lock()
	defer t.activeMu.Unlock()
	return t.active[key]
}

// abandoned reports whether an Uploading record is dead: its lease
// expired, or it is this node's and no upload of this process owns it
// (the node's previous process died; a node is one data directory, which
// one process holds at a time).
func (t *Tier) abandoned(o Object, now time.Time) bool {
	return o.LeaseUntil <= now.UnixNano() || (o.Owner == t.opts.Node && !t.isActive(o.Key))
}

// NodeID returns the node identity kept in store's metadata (made at the
// first call): the Options.Node of every process over that data
// directory, so a restarted process recognizes its predecessor's upload
// attempts as dead at once instead of waiting out their leases.
func NodeID(store *storage.Store) (string, error) {
	key := []byte("tier/node")
	v, err := store.GetMeta(key)
	if err == nil {
		return string(v), nil
	}
	if !errors.Is(err, storage.ErrNotFound) {
		return "", err
	}
	id := randomID()
	return id, store.ApplyMeta(storage.MetaOp{Key: key, Value: []byte(id)})
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// objectKey names one upload attempt's object: never reused, so an
// attempt can never overwrite a published object (B3).
func (t *Tier) objectKey(log storage.LogID, led storage.LedgerID, pub string) string {
	return fmt.Sprintf("%s%016x/%016x-%s.kgo", t.opts.Prefix, uint64(log), uint64(led), pub)
}

// permanent reports an error no retry can mend: a missing object, a
// corrupt one, a cancelled context.
func permanent(err error) bool {
	return errors.Is(err, ErrNotExist) || errors.Is(err, storage.ErrCorrupt) ||
		errors.Is(err, context.Canceled) || errors.Is(err, ErrConflict)
}

// retry runs op until it succeeds, fails permanently, or has been tried
// opts.Retries+1 times, backing off exponentially between tries (an
// error, a timeout, a 503 SlowDown alike). Each try gets OpTimeout.
func (t *Tier) retry(ctx context.Context, op func(ctx context.Context) error) error {
	return t.retryWith(ctx, t.opts.OpTimeout, op)
}

// retryWith is retry with a per-try timeout (0: none).
func (t *Tier) retryWith(ctx context.Context, timeout time.Duration, op func(ctx context.Context) error) error {
	wait := t.opts.Backoff
	for n := 0; ; n++ {
		octx, cancel := ctx, context.CancelFunc(func() {})
		if timeout > 0 {
			octx, cancel = context.WithTimeout(ctx, timeout)
		}
		err := op(octx)
		cancel()
		if err == nil {
			return nil
		}
		t.stats.failures.Add(1)
		if permanent(err) || n >= t.opts.Retries || ctx.Err() != nil {
			return err
		}
		t.stats.retries.Add(1)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		}
		wait = min(2*wait, 10*time.Second)
	}
}

// limiter bounds upload bandwidth: take(n) waits until n more bytes fit
// the rate (a token bucket of one second's worth).
type limiter struct {
	rate int64
	mu   sync.Mutex
	next time.Time // when the bytes taken so far have been paid for
}

func newLimiter(rate int64) *limiter { return &limiter{rate: rate} }

func (l *limiter) take(ctx context.Context, n int) error {
	if l.rate <= 0 {
		return nil
	}
	l.mu.Lock()
	now := time.Now()
	if l.next.Before(now.Add(-time.Second)) {
		l.next = now.Add(-time.Second) // at most one second of burst
	}
	l.next = l.next.Add(time.Duration(int64(n) * int64(time.Second) / l.rate))
	wait := l.next.Sub(now)
	l.mu.Unlock()
	if wait <= 0 {
		return nil
	}
	select {
	case <-time.After(wait):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

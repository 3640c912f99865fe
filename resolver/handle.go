package resolver

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/kgateway/kgateway/ledger"
	"github.com/kgateway/kgateway/storage"
)

// Partition is one partition resolved once for one request: step 1 of
// the read and write flows (doc.go), done by Resolve, after which the
// request's reads, long-poll registration and writes go through the
// binding it found without looking the name up again. It is a value,
// valid for one request: a partition replaced since it was resolved is
// resolved again by name, once per rebinding (the old copy's retirement), and one deleted since
// answers ErrUnknownTopic.
type Partition struct {
	r *Resolver
	p *partition
	// name is the name asked for: a companion's for its view (reads of the view).
	name string
	idx  int32
	// view is what a read of name sees: TopicCompacted for a companion,
	// else Committed (reads of the view).
	view ledger.View
}

// traceHook, set only by tests (TraceCrossings), is told of every
// costly step of a request's way through the resolver.
var traceHook atomic.Pointer[func(string)]

// TraceCrossings has f told, until stop is called, of every costly step a
// request takes through the resolver, by kind:
//
//	"lookup"    a lookup of a partition binding by name (Resolve, and
//	            every by-name call, which resolves inside)
//	"parse"     a parse of produced records' batch headers (ParseBatches,
//	            or again after a recompression)
//	"peek"      a look at the first batch header's bytes before the parse
//	            (BatchTransactional, BatchCodec)
//	"snapshot"  a partition's bounds taken apart from a read (Bounds, and
//	            the snapshot of DeleteRecords and ListOffsets)
//	"read"      a ledger read of a fetch, with the snapshot it read under
//
// It is for tests, of the resolver and of the layers above (kafka/'s
// counts of one fetch and one produce), one at a time; unset, each step
// costs one atomic load.
func TraceCrossings(f func(kind string)) (stop func()) {
	traceHook.Store(&f)
	return func() { traceHook.Store(nil) }
}

// trace tells traceHook of one step.
func trace(kind string) {
	if f := traceHook.Load(); f != nil {
		(*f)(kind)
	}
}

// lookedUp is trace("lookup").
func lookedUp() { trace("lookup") }

// Resolve resolves (topic, partition) through the binding, once: a topic,
// or a companion (the companion topic), whose reads see its source's compacted view (reads of the view).
// ErrUnknownTopic when there is no such partition.
func (r *Resolver) Resolve(topic string, idx int32) (Partition, error) {
	lookedUp()
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.mu.closed {
		return Partition{}, fmt.Errorf("%w: %w", ErrStorage, ledger.ErrClosed)
	}
	view := ledger.Committed
	t, ok := r.mu.topics[topic]
	if !ok {
		if t, ok = r.mu.companionLocked(topic); !ok {
			return Partition{}, ErrUnknownTopic
		}
		view = ledger.TopicCompacted
	}
	if idx < 0 || int(idx) >= len(t.parts) {
		return Partition{}, fmt.Errorf("%w: %s partition %d", ErrUnknownTopic, topic, idx)
	}
	return Partition{r: r, p: t.parts[idx], name: topic, idx: idx, view: view}, nil
}

// rebind resolves h's name again: after a ReplacePartition bound another
// log in its place (the old copy's retirement).
func (h Partition) rebind() (Partition, error) { return h.r.Resolve(h.name, h.idx) }

// readable is the ledger a read of h goes to; errRebound when h was
// replaced and deleted (its caller rebinds), ErrUnknownTopic when it was
// deleted.
func (h Partition) readable() (*ledger.Managed, error) {
	p := h.p
	p.mu.Lock()
	ml, deleted, replaced := p.mu.ml, p.mu.deleted, p.mu.replaced
	p.mu.Unlock()
	switch {
	case deleted && replaced:
		return nil, errRebound
	case deleted:
		return nil, ErrUnknownTopic
	}
	return ml, nil
}

// Fetch reads from offset under one snapshot (the read snapshot rules). With minOne the first
// batch is returned whole even past maxBytes (KIP-74). ReadCommitted reads
// only the batches below the last stable offset and lists the aborted
// transactions overlapping them (the read_committed bound); both levels report the LSO. The
// bounds are set on the result also when the error is ErrOffsetOutOfRange
// or ErrStorage, so a caller needs no second snapshot for them.
//
// With a lease, reads of local segment files are leased (ledger
// ReadEntries, storage ReadIndexedLeased): the batches read from files
// are lease's pooled buffers, valid until the caller releases it, and
// FetchResult.Srcs says where each lies in its file, for a caller that
// sends them with sendfile. Every batch is validated as without one.
func (h Partition) Fetch(offset Offset, maxBytes int, minOne bool, iso Isolation, lease *storage.Lease) (FetchResult, error) {
	for attempt := 0; ; attempt++ {
		res, err := h.fetchOnce(offset, maxBytes, minOne, iso, lease)
		if !errors.Is(err, errRebound) {
			return res, err
		}
		if attempt == maxRebinds {
			return FetchResult{}, errReplaced
		}
		if h, err = h.rebind(); err != nil { // The old copy's retirement: replaced during the read
			return FetchResult{}, err
		}
	}
}

// errRebound: a read's partition was replaced while it read; the read
// starts again on the new binding.
var errRebound = errors.New("resolver: partition rebound during the read")

func (h Partition) fetchOnce(offset Offset, maxBytes int, minOne bool, iso Isolation, lease *storage.Lease) (FetchResult, error) {
	p := h.p
	ml, err := h.readable() // step 1 was Resolve; the view is h's (reads of the view)
	if err != nil {
		return FetchResult{}, err
	}
	// Steps 2–5 are the ledger's: one snapshot, the entries under it, and
	// a fresh start after a concurrent trim. The snapshot comes back for
	// the log start check, the empty read at the end and the fresh end check; the entries stop at its end.
	trace("read")
	sn, entries, err := ml.ReadEntries(h.view, offset, ledger.NoLimit, FetchEntries(maxBytes), max(maxBytes, 1), lease)
	if err != nil && p.isReplaced() {
		return FetchResult{}, errRebound // its ledger closed, its log deleted
	}
	if errors.Is(err, ledger.ErrClosed) {
		// The partition was deleted (or the resolver closed) during the
		// read; a ledger closed under a live partition is the store's.
		if _, err := h.rebind(); err != nil {
			return FetchResult{}, err
		}
		return FetchResult{}, storageErr("read", err)
	}
	// The transactions are read after the snapshot: a transaction that
	// starts after it starts at or past its end, and one whose marker
	// became durable since is in the aborted index already (the LSO).
	res := p.boundsOf(sn)
	if err != nil {
		return res, storageErr("read", err)
	}
	switch {
	case offset < sn.Start: // The log start check: trimmed
		return res, fmt.Errorf("%w: %s is below log start %s", ErrOffsetOutOfRange, offset, sn.Start)
	case offset == sn.End: // The empty read at the end: nothing yet; a long poll waits for the next append
		return res, nil
	case offset > sn.End: // The fresh end check: sn is fresh (taken after the request arrived)
		return res, fmt.Errorf("%w: %s is beyond the end %s", ErrOffsetOutOfRange, offset, sn.End)
	}
	if iso == ReadCommitted {
		entries = belowOffset(entries, res.LastStable) // The read_committed bound
	}
	res.Batches, res.Bytes, err = limitBatches(entries, maxBytes, minOne, sn.ViewEnd)
	if err == nil && lease != nil {
		res.Srcs = sourcesOf(entries[:len(res.Batches)])
	}
	fromView := len(entries) > 0 && entries[0].Offset < sn.ViewEnd
	if err == nil && iso == ReadCommitted && len(res.Batches) > 0 && !fromView { // Reads of the view: the view holds no aborted batch
		res.Aborted = p.abortedIn(entries[0].Offset, entries[len(res.Batches)-1].End())
	}
	return res, err
}

// Bounds returns log start, high watermark and last stable offset from a
// fresh snapshot, in h's view (reads of the view): a fetch with no byte budget left.
func (h Partition) Bounds() (logStart, hwm, lso Offset, err error) {
	s, err := h.snapshot()
	if err != nil {
		return -1, -1, -1, err
	}
	b := s.p.boundsOf(s.info)
	return b.LogStart, b.HighWatermark, b.LastStable, nil
}

// A Version stands for everything a read of a partition at its end
// answers (its log's state, start and durable end, its LSO, its binding):
// equal Versions of one partition, the first loaded before a read, mean
// a read now would answer the same (a fetch session's unchanged
// partitions). It is opaque: compare it, never take it apart.
type Version [3]uint64

// partitionIDs names partitions in Versions: a partition bound again is
// another partition, whose Versions never equal the old one's.
var partitionIDs atomic.Uint64

// Version returns h's Version now; ok is false for a handle whose reads
// no Version covers: a companion's (its compacted view changes with the
// cleaner) and a cluster's local copy (its start is the published log's).
func (h Partition) Version() (v Version, ok bool) {
	p := h.p
	if p == nil || h.view != ledger.Committed || p.id == 0 {
		return Version{}, false
	}
	return Version{p.id, p.logChanges.Load(), p.changes.Load()}, true
}

// Watch adds h to w, as WatchWith: a companion waits on its source (reads of the view).
// Register before reading, so that an append between the read and the
// wait is not missed.
func (h Partition) Watch(w *Waiter) { w.watch(h.p) }

// WatchKey is h's name in a Waiter's fired set: its partition's, which
// for a companion is its source's (whose appends it waits on).
func (h Partition) WatchKey() PartitionKey {
	return PartitionKey{Topic: h.p.topic, Partition: h.p.index}
}

// ProduceAsync is Resolver.ProduceAsync through h, for a caller that hands
// the batch over (b from ParseBatches over a buffer it gives up): the
// resolver stamps it in place and the store keeps it (tail cache) instead
// of a copy, so the caller must neither modify nor reuse it afterwards,
// even when an error is returned. The Kafka front end parses each request
// into a fresh buffer and passes the records slices straight through: the
// produced bytes are copied once, from the socket, on their way to disk.
// When the batch is a slice of a larger buffer (one partition of a
// many-partition request), frame describes that buffer, so that the tail
// cache charges what it keeps alive (storage C5); nil when the batch is
// the whole of its buffer, or most of it.
//
// b may be passed again after a refusal that wrote nothing (a transaction
// verified since): the refusal left it as it was but for a LogAppendTime
// stamp, which the retry sets again.
func (h Partition) ProduceAsync(b Batches, frame *storage.Backing) (*PendingProduce, error) {
	return h.produceAsync(b, true, frame)
}

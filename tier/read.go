package tier

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/kgateway/kgateway/storage"
)

// ErrStale: the candidate changed between being listed and being pinned
// (B5): the read releases its pin and tries the next candidate.
var ErrStale = errors.New("tier: object candidate is stale")

// Candidates lists the object targets of ledger led of log, best first:
// published objects, the highest generation first. Each record's Version
// is what Read revalidates against.
func (t *Tier) Candidates(log storage.LogID, led storage.LedgerID) ([]Object, error) {
	o, err := t.meta.Get(log, led)
	if errors.Is(err, ErrNoObject) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if o.State != Published {
		return nil, nil
	}
	return []Object{o}, nil
}

// Read reads the entries hdrs (of candidate c's ledger, in order) from
// c's object (B5): it pins the object durably, revalidates the candidate
// (record key and version, lifecycle, SHA-256s, range, publication id and
// object name) and, if any differ, releases the pin and returns ErrStale;
// otherwise it reads and checks every frame (B7) and releases the pin.
// It takes at most Options.ReadTimeout, and returns the entries it read
// before an error.
func (t *Tier) Read(ctx context.Context, c Object, hdrs []storage.EntryHeader) ([]storage.Entry, error) {
	if t.opts.ReadTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.opts.ReadTimeout)
		defer cancel()
	}
	if out, ok, err := t.readCached(c, hdrs); ok || err != nil {
		return out, err
	}
	pin, err := t.Pin(c.Key)
	if err != nil {
		return nil, err
	}
	defer t.Unpin(pin)
	if err := t.revalidate(c, hdrs); err != nil {
		t.stats.stale.Add(1)
		return nil, err
	}
	return t.readPinned(ctx, c, hdrs)
}

// readCached serves hdrs wholly from what is cached of c (its index and
// every chunk the frames lie in), with no pin and so no write: a pin keeps
// the object's bytes from deletion while they are read (B6), and a read
// served from the cache reads none of them. The candidate is revalidated
// all the same (B5: a read of a deleted or replaced candidate is stale,
// whatever is cached), and every frame is checked (B7). ok is false, with
// nothing done, when anything needed is not cached: the caller reads
// through a pin.
func (t *Tier) readCached(c Object, hdrs []storage.EntryHeader) (out []storage.Entry, ok bool, err error) {
	t.idxMu.Lock()
	idx, cached := t.idx[c.Key]
	t.idxMu.Unlock()
	if !cached || len(hdrs) == 0 {
		return nil, false, nil
	}
	frames := make([][]byte, len(hdrs))
	for i, h := range hdrs {
		if _, err := checkEntry(idx, h); err != nil {
			return nil, false, nil // the pinned read reports it
		}
		if frames[i], cached = t.cachedBytes(c, h.Pos, storage.FrameHeaderLen+int64(h.Size)); !cached {
			return nil, false, nil
		}
	}
	if err := t.revalidate(c, hdrs); err != nil {
		t.stats.stale.Add(1)
		return nil, true, err
	}
	out = make([]storage.Entry, 0, len(hdrs))
	for i, h := range hdrs {
		e, err := storage.VerifyFrame(frames[i], h)
		if err != nil {
			return out, true, t.corrupt(c, err)
		}
		out = append(out, e)
		t.stats.reads.Add(1)
		t.stats.readBytes.Add(int64(len(frames[i])))
	}
	return out, true, nil
}

// cachedBytes returns [off, off+n) of o's frames region if every chunk it
// lies in is cached, and prefetches as bytes does.
func (t *Tier) cachedBytes(o Object, off, n int64) ([]byte, bool) {
	if off < 0 || n <= 0 || off+n > o.FramesBytes {
		return nil, false
	}
	cb := t.opts.ChunkBytes
	first, last := off/cb, (off+n-1)/cb
	out := make([]byte, 0, n)
	for c := first; c <= last; c++ {
		data, ok := t.cache.get(chunkID{key: o.Key, n: c})
		if !ok {
			return nil, false
		}
		lo, hi := max(off, c*cb)-c*cb, min(off+n, (c+1)*cb)-c*cb
		if hi > int64(len(data)) {
			return nil, false
		}
		out = append(out, data[lo:hi]...)
	}
	t.stats.cacheHits.Add(last - first + 1)
	if t.cache.touched(o.Key, last) && (last+1)*cb < o.FramesBytes {
		t.prefetch(o, t.cache.epoch(o.Key), last+1)
	}
	return out, true
}

// Pin records a durable reader pin on object key, expiring after PinTTL.
func (t *Tier) Pin(key string) (Pin, error) {
	p := Pin{Key: key, ID: randomID(), Owner: t.opts.Node, Expires: t.opts.Now().Add(t.opts.PinTTL).UnixNano()}
	if err := t.meta.AddPin(p); err != nil {
		return Pin{}, fmt.Errorf("tier: pin %s: %w", key, err)
	}
	t.stats.pinned.Add(1)
	return p, nil
}

// Unpin releases a pin (an expired one is reaped anyway).
func (t *Tier) Unpin(p Pin) { _ = t.meta.RemovePin(p.Key, p.ID) }

// revalidate re-reads c's record after the pin: the read may use c only
// if nothing about it changed since it was listed.
func (t *Tier) revalidate(c Object, hdrs []storage.EntryHeader) error {
	cur, err := t.meta.Get(c.Log, c.Ledger)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStale, err)
	}
	var why string
	switch {
	case cur.Version != c.Version:
		why = fmt.Sprintf("version %d, listed %d", cur.Version, c.Version)
	case cur.State != Published:
		why = "state " + string(cur.State)
	case cur.Key != c.Key || cur.PubID != c.PubID:
		why = "another publication"
	case cur.FramesSHA != c.FramesSHA || cur.IndexSHA != c.IndexSHA:
		why = "checksums differ"
	case len(hdrs) > 0 && !cur.Covers(hdrs[0].Offset, hdrs[len(hdrs)-1].End()):
		why = "range does not hold the read"
	}
	for _, h := range hdrs {
		if h.Ledger != c.Ledger {
			why = fmt.Sprintf("entry of %v", h.Ledger)
		}
	}
	if why != "" {
		return fmt.Errorf("%w: %v %v: %s", ErrStale, c.Log, c.Ledger, why)
	}
	return nil
}

// readPinned reads hdrs from a pinned, revalidated object.
func (t *Tier) readPinned(ctx context.Context, o Object, hdrs []storage.EntryHeader) ([]storage.Entry, error) {
	idx, err := t.index(ctx, o)
	if err != nil {
		return nil, t.corrupt(o, err)
	}
	out := make([]storage.Entry, 0, len(hdrs))
	epoch := t.cache.epoch(o.Key)
	for _, h := range hdrs {
		if _, err := checkEntry(idx, h); err != nil {
			return out, t.corrupt(o, err)
		}
		frame, err := t.bytes(ctx, o, epoch, h.Pos, storage.FrameHeaderLen+int64(h.Size))
		if err != nil {
			return out, t.corrupt(o, err)
		}
		e, err := storage.VerifyFrame(frame, h)
		if err != nil {
			return out, t.corrupt(o, err)
		}
		out = append(out, e)
		t.stats.reads.Add(1)
		t.stats.readBytes.Add(int64(len(frame)))
	}
	return out, nil
}

// corrupt counts a corrupt or truncated object and forgets what was
// cached of it, so nothing of it is served (B7).
func (t *Tier) corrupt(o Object, err error) error {
	if errors.Is(err, storage.ErrCorrupt) {
		t.stats.corrupt.Add(1)
		t.cache.dropObject(o.Key)
		t.idxMu.Lock()
		delete(t.idx, o.Key)
		t.idxMu.Unlock()
	}
	return fmt.Errorf("tier: %s: %w", o.Key, err)
}

// index returns o's object-level index, fetched once and checked: the
// stored size, the footer, and the index's SHA-256 against the record.
func (t *Tier) index(ctx context.Context, o Object) ([]indexRec, error) {
	t.idxMu.Lock()
	idx, ok := t.idx[o.Key]
	t.idxMu.Unlock()
	if ok {
		return idx, nil
	}
	var tail []byte
	err := t.retry(ctx, func(ctx context.Context) error {
		size, err := t.bucket.Size(ctx, o.Key)
		if err != nil {
			return err
		}
		if size != o.Size {
			return fmt.Errorf("%w: object of %d bytes, recorded %d", storage.ErrCorrupt, size, o.Size)
		}
		tail, err = t.fetch(ctx, o.Key, o.FramesBytes, o.IndexBytes+footerLen)
		return err
	})
	if err != nil {
		return nil, err
	}
	f, err := decodeFooter(tail[o.IndexBytes:], o.Size)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(tail[:o.IndexBytes])
	if hex.EncodeToString(sum[:]) != o.IndexSHA {
		return nil, fmt.Errorf("%w: object index sha256 differs from its record", storage.ErrCorrupt)
	}
	if idx, err = decodeIndex(tail[:o.IndexBytes], f); err != nil {
		return nil, err
	}
	t.idxMu.Lock()
	if len(t.idx) >= 1024 {
		clear(t.idx) // bounded; an index is fetched again at need
	}
	t.idx[o.Key] = idx
	t.idxMu.Unlock()
	return idx, nil
}

// fetch reads exactly n bytes of key at off; fewer is a truncated object.
func (t *Tier) fetch(ctx context.Context, key string, off, n int64) ([]byte, error) {
	r, err := t.bucket.ReadRange(ctx, key, off, n)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: short read of %s at %d", storage.ErrCorrupt, key, off)
		}
		return nil, err
	}
	return buf, nil
}

// bytes returns [off, off+n) of o's frames region through the chunk
// cache, and prefetches the chunk after the last one for a sequential
// reader.
func (t *Tier) bytes(ctx context.Context, o Object, epoch uint64, off, n int64) ([]byte, error) {
	if off < 0 || off+n > o.FramesBytes {
		return nil, fmt.Errorf("%w: frame [%d,+%d) outside the frames region of %d", storage.ErrCorrupt, off, n, o.FramesBytes)
	}
	cb := t.opts.ChunkBytes
	first, last := off/cb, (off+n-1)/cb
	out := make([]byte, 0, n)
	for c := first; c <= last; c++ {
		data, err := t.chunk(ctx, o, epoch, c)
		if err != nil {
			return nil, err
		}
		lo, hi := max(off, c*cb)-c*cb, min(off+n, (c+1)*cb)-c*cb
		out = append(out, data[lo:hi]...)
	}
	if t.cache.touched(o.Key, last) && (last+1)*cb < o.FramesBytes {
		t.prefetch(o, epoch, last+1)
	}
	return out, nil
}

// chunk returns chunk c of o's frames region, from the cache or fetched
// (once, however many readers want it).
func (t *Tier) chunk(ctx context.Context, o Object, epoch uint64, c int64) ([]byte, error) {
	id := chunkID{key: o.Key, n: c}
	if data, ok := t.cache.get(id); ok {
		t.stats.cacheHits.Add(1)
		return data, nil
	}
	f, leader := t.cache.join(id, epoch)
	if !leader {
		select {
		case <-f.done:
			return f.data, f.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	t.stats.cacheMisses.Add(1)
	cb := t.opts.ChunkBytes
	n := min(cb, o.FramesBytes-c*cb)
	f.err = t.retry(ctx, func(ctx context.Context) error {
		var err error
		f.data, err = t.fetch(ctx, o.Key, c*cb, n)
		return err
	})
	if f.err == nil {
		t.cache.put(id, f)
	}
	t.cache.land(id, f)
	return f.data, f.err
}

// prefetch fetches chunk c of o in the background, unless it is cached or
// on its way. Its bytes are checked when a read uses them.
func (t *Tier) prefetch(o Object, epoch uint64, c int64) {
	if t.cache.has(chunkID{key: o.Key, n: c}) {
		return
	}
	select {
	case <-t.closing:
		return
	default:
	}
	t.bg.Add(1)
	go func() {
		defer t.bg.Done()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-t.closing:
				cancel()
			case <-ctx.Done():
			}
		}()
		_, _ = t.chunk(ctx, o, epoch, c)
	}()
}

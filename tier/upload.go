package tier

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"

	"github.com/kgateway/kgateway/storage"
	"go.uber.org/zap"
)

// ErrBusy: another live upload attempt owns the ledger (its lease has not
// expired).
var ErrBusy = errors.New("tier: upload in progress elsewhere")

// errCrashed is a simulated crash (tests).
var errCrashed = errors.New("tier: simulated crash")

// maxUploadRun bounds the bytes of consecutive frames read from the local
// file and written at once.
const maxUploadRun = 1 << 20

// Upload copies sealed ledger led of log to the object store and
// publishes it (B2–B4): the attempt is recorded (Uploading, with a fresh
// publication id and object name) before a byte is written; the object
// is written, read back and its SHA-256s checked; only then is the record
// compare-and-swapped to Published. A failed attempt deletes its object
// and then its record; what it cannot delete (the store is down, the
// upload was cancelled) it leaves to Reap, as a crashed one does. An
// already published ledger returns its object.
func (t *Tier) Upload(ctx context.Context, log storage.LogID, led storage.LedgerID) (Object, error) {
	info, hdrs, err := t.store.LedgerEntries(log, led)
	if err != nil {
		return Object{}, err
	}
	if len(hdrs) == 0 {
		return Object{}, fmt.Errorf("%w: %v %v has no entries", storage.ErrInvalid, log, led)
	}
	prev, err := t.meta.Get(log, led)
	switch {
	case errors.Is(err, ErrNoObject):
	case err != nil:
		return Object{}, err
	case prev.State == Published:
		return prev, nil
	case prev.State == Deleting:
		return Object{}, fmt.Errorf("%w: %v %v is being deleted", storage.ErrRemoved, log, led)
	case !t.abandoned(prev, t.opts.Now()):
		return Object{}, fmt.Errorf("%w: %v %v by %s", ErrBusy, log, led, prev.Owner)
	default:
		// An expired (or our own, older) attempt: its object is an
		// orphan; the new attempt takes the record over by version.
		t.deleteObject(ctx, prev.Key)
	}
	select {
	case t.upSem <- struct{}{}:
		defer func() { <-t.upSem }()
	case <-ctx.Done():
		return Object{}, ctx.Err()
	}
	pub := randomID()
	now := t.opts.Now()
	o := Object{
		Log: log, Ledger: led, Gen: info.Gen, State: Uploading, Key: t.objectKey(log, led, pub), PubID: pub,
		Owner: t.opts.Node, Version: prev.Version, LeaseUntil: now.Add(t.opts.LeaseTTL).UnixNano(), Created: now.UnixNano(),
		FirstOffset: hdrs[0].Offset, EndOffset: hdrs[len(hdrs)-1].End(), Entries: int64(len(hdrs)),
	}
	for _, h := range hdrs {
		o.MaxTime = max(o.MaxTime, h.MaxTime)
	}
	t.setActive(o.Key, true)
	defer t.setActive(o.Key, false)
	if o, err = t.meta.Put(o); err != nil { // B2: recorded before written
		return Object{}, err
	}
	if o, err = t.writeAndCheck(ctx, o, hdrs); errors.Is(err, errCrashed) {
		return Object{}, err
	} else if err != nil {
		t.stats.uploadFailures.Add(1)
		t.abandon(ctx, o)
		return Object{}, fmt.Errorf("tier: upload %v %v: %w", log, led, err)
	}
	o.State, o.LeaseUntil = Published, 0
	if o, err = t.meta.Put(o); err != nil {
		t.stats.uploadFailures.Add(1)
		return Object{}, fmt.Errorf("tier: publish %v %v: %w", log, led, err)
	}
	t.stats.uploads.Add(1)
	t.stats.uploadBytes.Add(o.Size)
	t.log.Debug("tier-published", zap.Stringer("log", log), zap.Stringer("ledger", led), zap.String("key", o.Key), zap.Int64("bytes", o.Size))
	return o, nil
}

// writeAndCheck writes o's object (retrying the whole write on a
// transient failure) and reads it back (B4); it returns o with sizes and
// SHA-256s filled in.
func (t *Tier) writeAndCheck(ctx context.Context, o Object, hdrs []storage.EntryHeader) (Object, error) {
	err := t.retryStream(ctx, func(ctx context.Context) error {
		var err error
		o, err = t.writeObject(ctx, o, hdrs)
		return err
	})
	if err != nil {
		return o, err
	}
	if t.crashAfterWrite {
		return o, errCrashed
	}
	return o, t.retryStream(ctx, func(ctx context.Context) error { return t.readBack(ctx, o) })
}

// retryStream is retry without a timeout on the whole call: a stream's
// length grows with its object; each of its calls is bounded instead
// (stallGuard).
func (t *Tier) retryStream(ctx context.Context, op func(context.Context) error) error {
	return t.retryWith(ctx, 0, op)
}

// writeObject streams the ledger's frames from its pinned local file into
// the object, checking each against the index (a corrupt local frame is
// never uploaded), then the object-level index and the footer.
func (t *Tier) writeObject(ctx context.Context, o Object, hdrs []storage.EntryHeader) (Object, error) {
	f, release, err := t.store.PinLedger(o.Log, o.Ledger)
	if err != nil {
		return o, err
	}
	defer release()
	wctx, guard, cancel := newStallGuard(ctx, t.opts.OpTimeout)
	defer cancel()
	var bw io.WriteCloser
	if err := guard.call(func() (err error) { bw, err = t.bucket.Write(wctx, o.Key); return err }); err != nil {
		return o, err
	}
	w := guardedWriter{w: bw, g: guard}
	fsha, isha := sha256.New(), sha256.New()
	var index []byte
	var pos int64
	fail := func(err error) (Object, error) {
		cancel() // aborts the write: nothing is stored under o.Key
		_ = w.Close()
		return o, err
	}
	for i := 0; i < len(hdrs); {
		n, size := runOf(hdrs[i:])
		buf := make([]byte, size)
		if _, err := f.ReadAt(buf, hdrs[i].Pos); err != nil {
			return fail(fmt.Errorf("read local %v %v: %w", o.Log, o.Ledger, err))
		}
		for _, h := range hdrs[i : i+n] {
			at := h.Pos - hdrs[i].Pos
			frame := buf[at : at+storage.FrameHeaderLen+int64(h.Size)]
			if h.Pos != pos {
				return fail(fmt.Errorf("%w: entry %v at %d, expected %d", storage.ErrCorrupt, h.Entry, h.Pos, pos))
			}
			if _, err := storage.VerifyFrame(frame, h); err != nil {
				return fail(err)
			}
			index = appendIndexRec(index, indexRec{Offset: h.Offset, Records: h.Records, MaxTime: h.MaxTime, Pos: h.Pos, Size: h.Size})
			pos += int64(len(frame))
		}
		if err := t.put(ctx, w, fsha, buf); err != nil {
			return fail(err)
		}
		i += n
	}
	if err := t.put(ctx, w, isha, index); err != nil {
		return fail(err)
	}
	ft := footer{Version: formatVersion, Entries: uint32(len(hdrs)), FramesBytes: pos, IndexBytes: int64(len(index)), FirstOffset: hdrs[0].Offset}
	if err := t.put(ctx, w, nil, ft.encode()); err != nil {
		return fail(err)
	}
	if err := w.Close(); err != nil {
		return o, err
	}
	o.FramesBytes, o.IndexBytes, o.Size = pos, int64(len(index)), pos+int64(len(index))+footerLen
	o.FramesSHA, o.IndexSHA = hex.EncodeToString(fsha.Sum(nil)), hex.EncodeToString(isha.Sum(nil))
	return o, nil
}

// put writes b to w, hashing it, within the bandwidth bound.
func (t *Tier) put(ctx context.Context, w io.Writer, h hash.Hash, b []byte) error {
	for len(b) > 0 {
		n := min(len(b), 256<<10)
		if err := t.limit.take(ctx, n); err != nil {
			return err
		}
		if _, err := w.Write(b[:n]); err != nil {
			return err
		}
		if h != nil {
			h.Write(b[:n])
		}
		b = b[n:]
	}
	return nil
}

// runOf is how many of hdrs, from the first, lie back to back within
// maxUploadRun bytes (at least one), and their bytes.
func runOf(hdrs []storage.EntryHeader) (n int, size int64) {
	size = storage.FrameHeaderLen + int64(hdrs[0].Size)
	for n = 1; n < len(hdrs); n++ {
		prev, h := hdrs[n-1], hdrs[n]
		next := storage.FrameHeaderLen + int64(h.Size)
		if h.Pos != prev.Pos+storage.FrameHeaderLen+int64(prev.Size) || size+next > maxUploadRun {
			break
		}
		size += next
	}
	return n, size
}

// readBack reads the whole object as stored and checks its size, footer,
// index and both SHA-256s against o (B4): what is published is what was
// verified, whatever the store did with the bytes.
func (t *Tier) readBack(ctx context.Context, o Object) error {
	return readBack(ctx, t.bucket, o, t.opts.OpTimeout)
}

// readBack reads o whole, each call to the store bounded by stall
// (stallGuard).
func readBack(ctx context.Context, b Bucket, o Object, stall time.Duration) error {
	ctx, guard, cancel := newStallGuard(ctx, stall)
	defer cancel()
	var size int64
	if err := guard.call(func() (err error) { size, err = b.Size(ctx, o.Key); return err }); err != nil {
		return err
	}
	if size != o.Size {
		return fmt.Errorf("%w: stored %d bytes of %d", storage.ErrCorrupt, size, o.Size)
	}
	var r io.ReadCloser
	if err := guard.call(func() (err error) { r, err = b.ReadRange(ctx, o.Key, 0, -1); return err }); err != nil {
		return err
	}
	defer r.Close()
	return checkObject(guardedReader{r: r, g: guard}, o)
}

// checkObject reads an object from r and checks it against o: size,
// SHA-256 of frames and index, footer, the index's shape, and (frames
// != nil) every frame against the index.
func checkObject(r io.Reader, o Object) error {
	fsha, isha := sha256.New(), sha256.New()
	frames := make([]byte, o.FramesBytes)
	if _, err := io.ReadFull(r, frames); err != nil {
		return fmt.Errorf("%w: frames: %w", storage.ErrCorrupt, err)
	}
	fsha.Write(frames)
	index := make([]byte, o.IndexBytes)
	if _, err := io.ReadFull(r, index); err != nil {
		return fmt.Errorf("%w: index: %w", storage.ErrCorrupt, err)
	}
	isha.Write(index)
	ft := make([]byte, footerLen+1)
	n, err := io.ReadFull(r, ft)
	if n != footerLen || (err != nil && !errors.Is(err, io.ErrUnexpectedEOF)) {
		return fmt.Errorf("%w: footer of %d bytes or trailing bytes", storage.ErrCorrupt, n)
	}
	if got := hex.EncodeToString(fsha.Sum(nil)); got != o.FramesSHA {
		return fmt.Errorf("%w: frames sha256 %s, recorded %s", storage.ErrCorrupt, got, o.FramesSHA)
	}
	if got := hex.EncodeToString(isha.Sum(nil)); got != o.IndexSHA {
		return fmt.Errorf("%w: index sha256 %s, recorded %s", storage.ErrCorrupt, got, o.IndexSHA)
	}
	f, err := decodeFooter(ft[:footerLen], o.Size)
	if err != nil {
		return err
	}
	idx, err := decodeIndex(index, f)
	if err != nil {
		return err
	}
	if int64(len(idx)) != o.Entries || (len(idx) > 0 && (idx[0].Offset != o.FirstOffset || idx[len(idx)-1].Offset+storage.Offset(idx[len(idx)-1].Records) != o.EndOffset)) {
		return fmt.Errorf("%w: object index does not match its record's range", storage.ErrCorrupt)
	}
	for i, rec := range idx {
		frame := frames[rec.Pos : rec.Pos+storage.FrameHeaderLen+int64(rec.Size)]
		h := storage.EntryHeader{Offset: rec.Offset, Records: rec.Records, Size: rec.Size, Pos: rec.Pos, Entry: storage.EntryID(i)}
		if _, err := storage.VerifyFrame(frame, h); err != nil {
			return fmt.Errorf("entry %d: %w", i, err)
		}
	}
	return nil
}

// abandon removes a failed attempt: its object, then its record (by
// version, so a newer attempt is never touched). It works under the
// upload's ctx: a cancelled upload (shutdown) returns at once instead of
// retrying deletes against a store that may be down. Whatever it does
// not remove is left to Reap, the record with the object: the record is
// this node's and no upload owns it any more, so it is abandoned (B8),
// and Reap deletes its object before it. (Removing the record of an
// object not deleted would hide the object from all but the orphan scan,
// for OrphanGrace.)
func (t *Tier) abandon(ctx context.Context, o Object) {
	if ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, t.opts.OpTimeout)
	defer cancel()
	if t.deleteObject(ctx, o.Key) != nil {
		return
	}
	_ = t.meta.Delete(o.Log, o.Ledger, o.Version)
}

// deleteObject deletes key, retrying; a missing object is no error.
func (t *Tier) deleteObject(ctx context.Context, key string) error {
	err := t.retry(ctx, func(ctx context.Context) error { return t.bucket.Delete(ctx, key) })
	if errors.Is(err, ErrNotExist) {
		return nil
	}
	if err != nil {
		t.log.Warn("tier-delete-failed", zap.String("key", key), zap.Error(err))
	}
	return err
}

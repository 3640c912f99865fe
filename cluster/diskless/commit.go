package diskless

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/kgateway/kgateway/cluster/owner"
	clientv3 "go.etcd.io/etcd/client/v3"
	"gocloud.dev/blob"
)

// part is one partition's share of a commit: its range in the object.
type part struct {
	own owner.Ownership
	r   Range
}

// Commit makes batches durable: ONE object holding all of them, grouped
// per partition and contiguous, then per partition a range record and the
// new end, published in fenced transactions (acknowledgement after PUT and commit). The result has an entry
// per partition of batches: nil when its batches are durable and may be
// acknowledged; an error wrapping owner.ErrFenced when its ownership is
// lost (fenced writers publish nothing); any other error when they must not be acknowledged (their
// outcome may be unknown: no acknowledgement without a fenced commit). It is Begin then Wait: it publishes after
// every commit begun before it (in-order publication).
func (c *Committer) Commit(ctx context.Context, batches []Batch, owns map[string]owner.Ownership) map[string]error {
	return c.Begin(ctx, batches, owns).Wait()
}

// Flight is a group commit begun (Begin) and not waited for.
type Flight struct {
	done chan struct{} // closed once its publication is over
	res  map[string]error
	// unpublished are its partitions not published, with their errors,
	// for the commit begun after it (in-order publication); set before
	// done is closed.
	unpublished map[string]error
}

// Wait returns the commit's result (Commit) once its publication is over,
// which is after that of every commit begun before it (in-order publication).
func (f *Flight) Wait() map[string]error {
	<-f.done
	return f.res
}

// Begin starts a group commit of batches (Commit) and returns at once:
// the object's PUT starts now, while the commits begun before are still
// in flight, and its publication follows theirs (in-order publication). ctx bounds the
// whole commit; it must outlive Wait.
func (c *Committer) Begin(ctx context.Context, batches []Batch, owns map[string]owner.Ownership) *Flight {
	f := &Flight{done: make(chan struct{}), res: make(map[string]error)}
	parts, data := layout(batches, owns, c.opts.PieceBytes, f.res)
	c.pipe.Lock()
	prev := c.pipe.last
	c.pipe.last = f
	c.pipe.Unlock()
	if prev != nil {
		select {
		case <-prev.done:
			// Over before this one began: nothing to wait for (in-order publication);
			// ranges tiling the log's end comparison refuses what follows a batch it did
			// not publish.
			prev = nil
		default:
		}
	}
	go c.fly(ctx, f, prev, parts, data)
	return f
}

// fly is a begun commit: the PUT, then its turn (in-order publication), then the
// publication.
func (c *Committer) fly(ctx context.Context, f, prev *Flight, parts []part, data []byte) {
	defer close(f.done)
	defer func() { f.unpublished = unpublished(f.res) }()
	res := f.res
	if len(parts) == 0 {
		c.turn(prev, nil, res)
		return
	}
	name := c.uniqueName(commitsDir + c.node + "/")
	for i := range parts {
		parts[i].r.Object = name
	}
	putAt := c.opts.Now()
	began := time.Now()
	// The pieces' SHA-256s are needed only at publication: computed
	// while the PUT runs (commit ranges in pieces).
	summed := sumPieces(parts, data)
	err := c.bucket.WriteAll(ctx, name, data, &blob.WriterOptions{ContentType: "application/octet-stream"})
	put := time.Since(began)
	<-summed
	if c.afterPut != nil {
		c.afterPut(name)
	}
	if err != nil {
		for _, p := range parts {
			res[p.r.PKey] = fmt.Errorf("diskless: %s: write %s: %w", p.r.PKey, name, err)
		}
		c.turn(prev, nil, res)
		return
	}
	parts = c.turn(prev, parts, res)
	txnStart := time.Now()
	published, unknown := c.publish(ctx, name, putAt, parts, res)
	if published == 0 && !unknown {
		// Certainly unreferenced: remove it now rather than at Collect.
		c.bucket.Delete(ctx, name)
	}
	if c.opts.Observer != nil {
		fenced := 0
		for _, err := range res {
			if errors.Is(err, owner.ErrFenced) {
				fenced++
			}
		}
		c.opts.Observer.ObserveCommit(put, time.Since(txnStart), len(data), fenced)
	}
}

// turn waits until the commit begun before this one finished its
// publication (in-order publication) and returns parts without the partitions that commit
// carried and did not publish, each refused in res: nothing of a
// partition is published after a commit of it that was not. The refusal
// wraps the earlier commit's error too: a partition whose ownership that
// commit found lost is refused as fenced here as well (fenced writers
// publish nothing), which the caller answers as a lost leadership, not
// as a storage fault.
func (c *Committer) turn(prev *Flight, parts []part, res map[string]error) []part {
	if prev == nil {
		return parts
	}
	<-prev.done
	var keep []part
	for _, p := range parts {
		if err, ok := prev.unpublished[p.r.PKey]; ok {
			res[p.r.PKey] = fmt.Errorf("diskless: %s: %w (%w)", p.r.PKey, ErrPredecessor, err)
			continue
		}
		keep = append(keep, p)
	}
	return keep
}

// unpublished are the partitions of res not published, with their
// errors: refused at layout or by the publication.
func unpublished(res map[string]error) map[string]error {
	out := map[string]error{}
	for pk, err := range res {
		if err != nil {
			out[pk] = err
		}
	}
	return out
}

// layout groups batches per partition, in the order partitions first
// appear, checks each partition's batches, and lays the valid ones out in
// one object; a partition's range longer than pieceBytes is cut into
// pieces (commit ranges in pieces), whose SHA-256s fly computes while
// the object's PUT runs. Refused partitions get their error in res.
func layout(batches []Batch, owns map[string]owner.Ownership, pieceBytes int64, res map[string]error) ([]part, []byte) {
	var order []string
	by := make(map[string][]Batch)
	size := 0
	for _, b := range batches {
		if _, ok := by[b.PKey]; !ok {
			order = append(order, b.PKey)
		}
		by[b.PKey] = append(by[b.PKey], b)
		size += len(b.Data)
	}
	data := make([]byte, 0, size)
	var parts []part
	for _, pk := range order {
		bs := by[pk]
		o, ok := owns[pk]
		if !ok || o.Partition != pk {
			res[pk] = fmt.Errorf("diskless: %s: %w", pk, ErrNotOwned)
			continue
		}
		if err := contiguous(bs); err != nil {
			res[pk] = fmt.Errorf("diskless: %s: %w: %v", pk, ErrInvalid, err)
			continue
		}
		last := bs[len(bs)-1]
		r := Range{PKey: pk, Base: bs[0].Base, End: last.Base + int64(last.Records), Pos: int64(len(data)), MaxTime: bs[0].MaxTime}
		for _, b := range bs {
			data = append(data, b.Data...)
			r.MaxTime = max(r.MaxTime, b.MaxTime)
		}
		r.Len = int64(len(data)) - r.Pos
		r.SHA256 = sha256.Sum256(data[r.Pos:])
		if r.Len > pieceBytes {
			r.Pieces = cutPieces(bs, r.Pos, pieceBytes)
		}
		parts = append(parts, part{own: o, r: r})
	}
	return parts, data
}

// contiguous checks that each batch tiles its own offsets and starts
// where the previous one ended.
func contiguous(bs []Batch) error {
	for i, b := range bs {
		if b.Records <= 0 || b.Base < 0 {
			return fmt.Errorf("batch at %d covers %d offsets", b.Base, b.Records)
		}
		if i > 0 && b.Base != bs[i-1].Base+int64(bs[i-1].Records) {
			return fmt.Errorf("batch at %d follows one that ends at %d", b.Base, bs[i-1].Base+int64(bs[i-1].Records))
		}
		if err := tile(b.Data, b.Base, b.Base+int64(b.Records)); err != nil {
			return err
		}
	}
	return nil
}

// maxTries bounds the retries of a transaction whose comparisons failed
// because a concurrent writer changed a record it reads (an object's
// reference count), not because of this writer's own state.
const maxTries = 16

// publish publishes parts of object name in transactions of at most
// txnBudget comparisons: per partition two for its ownership (the fenced transaction) and
// one for its end (ranges tiling the log), plus one for the object's record. Each partition
// is whole in one transaction. It sets every part's result and reports
// how many were published, and whether some outcome is unknown.
func (c *Committer) publish(ctx context.Context, name string, putAt time.Time, parts []part, res map[string]error) (published int, unknown bool) {
	var obj objState // the object's record: none until the first transaction creates it
	per := (c.txnBudget() - 1) / 3
	for i := 0; len(parts) > 0; i++ {
		chunk := parts[:min(per, len(parts))]
		parts = parts[len(chunk):]
		if c.beforeChunk != nil {
			c.beforeChunk(i)
		}
		n, unsure, err := c.publishChunk(ctx, name, putAt, chunk, &obj, res)
		published += n
		if err != nil {
			// Not tried: not published, and not to be acknowledged.
			for _, p := range parts {
				res[p.r.PKey] = fmt.Errorf("diskless: %s: not published: %w", p.r.PKey, err)
			}
			return published, unsure
		}
	}
	return published, false
}

// publishChunk publishes chunk in one transaction, dropping (with their
// error) the partitions whose ownership is lost or whose end is not
// their base, and trying again without them. A non-nil error stops the
// commit: unsure says whether the chunk's outcome is unknown.
func (c *Committer) publishChunk(ctx context.Context, name string, putAt time.Time, chunk []part, obj *objState, res map[string]error) (n int, unsure bool, err error) {
	objKey := c.objKey(name)
	for try := 0; len(chunk) > 0; try++ {
		if try == maxTries {
			err = fmt.Errorf("%w: object record %s", ErrConflict, objKey)
			break
		}
		if obj.rev == 0 && c.opts.Now().Sub(putAt) >= c.opts.OrphanAge {
			// Collect may take the object for an orphan (reference-counted collection).
			err = fmt.Errorf("%w: %s is older than %v", ErrObjectGone, name, c.opts.OrphanAge)
			break
		}
		var owns []owner.Ownership
		var cmps []clientv3.Cmp
		var then []clientv3.Op
		diag := []clientv3.Op{clientv3.OpGet(objKey)}
		if obj.rev == 0 {
			cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(objKey), "=", 0))
		} else {
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(objKey), "=", obj.rev))
		}
		refs := obj.Refs + int64(len(chunk))
		then = append(then, clientv3.OpPut(objKey, encodeObj(objRecord{Refs: refs})))
		for _, p := range chunk {
			ek := c.endKey(p.r.PKey)
			owns = append(owns, p.own)
			cmps = append(cmps, c.endIs(p.r.PKey, p.r.Base))
			then = append(then, clientv3.OpPut(c.rangeKey(p.r.PKey, p.r.Base), encodeRange(p.r)), clientv3.OpPut(ek, decimal(p.r.End)))
			diag = append(diag, clientv3.OpGet(ek))
		}
		rev, lost, d, terr := c.fencedTxn(ctx, owns, cmps, then, diag)
		if terr != nil {
			for _, p := range chunk {
				res[p.r.PKey] = fmt.Errorf("diskless: %s: publish, outcome unknown: %w", p.r.PKey, terr)
			}
			return 0, true, terr
		}
		if rev > 0 {
			for _, p := range chunk {
				res[p.r.PKey] = nil
			}
			*obj = objState{objRecord: objRecord{Refs: refs}, rev: rev}
			return len(chunk), false, nil
		}
		if len(lost) > 0 {
			chunk = drop(chunk, lost, res)
			continue
		}
		var keep []part
		for i, p := range chunk {
			if v, _, ok := getValue(d[1+i]); ok != (p.r.Base != 0) || (ok && string(v) != decimal(p.r.Base)) {
				res[p.r.PKey] = fmt.Errorf("diskless: %s: %w: end %q, batches at %d", p.r.PKey, ErrEndMismatch, v, p.r.Base)
				continue
			}
			keep = append(keep, p)
		}
		chunk = keep
		v, mod, ok := getValue(d[0])
		switch {
		case obj.rev == 0 && ok, obj.rev != 0 && !ok:
			err = fmt.Errorf("%w: %s", ErrObjectGone, name)
		case ok && mod != obj.rev:
			cur, derr := decodeObj(objKey, v, mod)
			if derr != nil || cur.Dead != 0 {
				err = fmt.Errorf("%w: %s (%v)", ErrObjectGone, name, derr)
				break
			}
			*obj = cur
		}
		if err != nil {
			break
		}
	}
	for _, p := range chunk {
		res[p.r.PKey] = fmt.Errorf("diskless: %s: not published: %w", p.r.PKey, err)
	}
	return 0, false, err
}

// endIs is the comparison that the partition's published end is base: a
// partition never published has no end key, and its end is 0.
func (c *Committer) endIs(pkey string, base int64) clientv3.Cmp {
	if base == 0 {
		return clientv3.Compare(clientv3.CreateRevision(c.endKey(pkey)), "=", 0)
	}
	return clientv3.Compare(clientv3.Value(c.endKey(pkey)), "=", decimal(base))
}

// drop removes the lost partitions from chunk, with their error (fenced writers publish nothing).
func drop(chunk []part, lost []string, res map[string]error) []part {
	var keep []part
	for _, p := range chunk {
		if contains(lost, p.r.PKey) {
			res[p.r.PKey] = fenced(p.r.PKey)
			continue
		}
		keep = append(keep, p)
	}
	return keep
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

package diskless

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/kgateway/kgateway/cluster/owner"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"gocloud.dev/blob"
)

// part is one partition's share of a commit: its range in the object.
type part struct {
	own owner.Ownership
	r   Range
	// res is the result map of the commit it belongs to.
	res map[string]error
	// then is the same partition's part of the commit begun next, when
	// this commit publishes that one's too (coalesced publication): its
	// range follows this one's in the same transaction.
	then *part
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

	// Coalesced publication, guarded by the Committer's pipe mutex: next
	// is the commit begun just after this one; ready is this one's
	// object, PUT and waiting for its turn, which the commit before it
	// may publish with its own (carried, set once, before that commit's
	// done is closed).
	next    *Flight
	ready   *pubObject
	carried bool
}

// pubObject is a commit's object as its publication sees it.
type pubObject struct {
	name  string
	putAt time.Time
	parts []part
	st    objState // the object's record: none until a transaction creates it
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
	if prev != nil {
		prev.next = f
	}
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
		parts[i].res = res
	}
	putAt := c.opts.Now()
	began := time.Now()
	// The pieces' SHA-256s are needed only at publication: computed
	// while the PUT runs (commit ranges in pieces).
	summed := sumPieces(parts, data)
	err := c.bucket.WriteAll(ctx, name, data, &blob.WriterOptions{ContentType: "application/octet-stream"})
	put := time.Since(began)
	// The pieces' hashes are part of what a publication writes, this
	// commit's own or the one before it (coalesced publication).
	<-summed
	if err == nil && prev != nil {
		// Offered to the commit before, which may publish it with its
		// own (coalesced publication).
		c.pipe.Lock()
		f.ready = &pubObject{name: name, putAt: putAt, parts: parts}
		c.pipe.Unlock()
	}
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
	if c.carriedBy(prev, f) {
		// Published (or refused) with the commit before it: res is set;
		// no transaction of its own.
		c.observe(put, 0, len(data), res)
		return
	}
	parts = c.turn(prev, parts, res)
	txnStart := time.Now()
	objs := []*pubObject{{name: name, putAt: putAt, parts: parts}}
	if next := c.claim(f, parts, res); next != nil {
		objs = append(objs, next)
	}
	unknown := c.publish(ctx, objs)
	for _, o := range objs {
		if !unknown && !published(objs, o.name) {
			// Certainly unreferenced: remove it now rather than at Collect.
			c.bucket.Delete(ctx, o.name)
		}
	}
	c.observe(put, time.Since(txnStart), len(data), res)
}

// observe tells the Observer of a commit's timings.
func (c *Committer) observe(put, txn time.Duration, bytes int, res map[string]error) {
	if c.opts.Observer != nil {
		fenced := 0
		for _, err := range res {
			if errors.Is(err, owner.ErrFenced) {
				fenced++
			}
		}
		c.opts.Observer.ObserveCommit(put, txn, bytes, fenced)
	}
}

// carriedBy waits until prev, the commit begun just before f, finished
// its publication, and says whether that publication carried f's
// (coalesced publication).
func (c *Committer) carriedBy(prev, f *Flight) bool {
	if prev == nil {
		return false
	}
	<-prev.done
	c.pipe.Lock()
	defer c.pipe.Unlock()
	return f.carried
}

// claim takes the object of the commit begun after f into f's
// publication (coalesced publication) when its PUT has returned already and both
// fit in one transaction, and returns it; nil otherwise. Its partitions
// that f refused (res) are refused in its result too (in-order
// publication); each of its partitions that f publishes becomes the then of f's
// part, so that both ranges are published in one transaction or neither.
func (c *Committer) claim(f *Flight, parts []part, res map[string]error) *pubObject {
	if len(parts) == 0 {
		return nil
	}
	c.pipe.Lock()
	defer c.pipe.Unlock()
	n := f.next
	if n == nil || n.ready == nil || len(parts)+len(n.ready.parts) > (c.txnBudget()-1)/3-1 {
		return nil
	}
	n.carried = true
	o := n.ready
	mine := make(map[string]int, len(parts))
	for i, p := range parts {
		mine[p.r.PKey] = i
	}
	var own []part
	for _, p := range o.parts {
		if err := res[p.r.PKey]; err != nil {
			p.res[p.r.PKey] = predecessor(p.r.PKey, err)
			continue
		}
		if i, ok := mine[p.r.PKey]; ok {
			q := p
			parts[i].then = &q
			continue
		}
		own = append(own, p)
	}
	o.parts = own
	return o
}

// predecessor is the result of a partition whose part in the commit
// before failed with err (in-order publication).
func predecessor(pkey string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("diskless: %s: %w (%w)", pkey, ErrPredecessor, err)
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
			res[p.r.PKey] = predecessor(p.r.PKey, err)
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

// publish publishes the parts of objs (a commit's object, then the
// object of the commit begun after it that claim took, if any) in
// transactions of at most txnBudget comparisons: per partition two for
// its ownership (the fenced transaction) and one for its end (ranges tiling the log), plus one
// per object for its record. Each partition is whole in one transaction,
// with the range of its part's then after its own (coalesced publication). It sets every
// part's result (and its then's), and reports whether some outcome is
// unknown.
func (c *Committer) publish(ctx context.Context, objs []*pubObject) (unknown bool) {
	var parts []part
	for _, o := range objs {
		parts = append(parts, o.parts...)
	}
	per := (c.txnBudget() - len(objs)) / 3
	for i := 0; len(parts) > 0; i++ {
		chunk := parts[:min(per, len(parts))]
		parts = parts[len(chunk):]
		if c.beforeChunk != nil {
			c.beforeChunk(i)
		}
		unsure, err := c.publishChunk(ctx, objs, chunk)
		if err != nil {
			// Not tried: not published, and not to be acknowledged.
			for _, p := range parts {
				p.set(fmt.Errorf("diskless: %s: not published: %w", p.r.PKey, err))
			}
			return unsure
		}
	}
	return false
}

// set is the part's result, and its then's (in-order publication).
func (p part) set(err error) {
	p.res[p.r.PKey] = err
	if p.then != nil {
		p.then.res[p.r.PKey] = predecessor(p.r.PKey, err)
	}
}

// published says whether a range of the object name was published: a
// part of objs, or a part's then, naming it whose result is nil.
func published(objs []*pubObject, name string) bool {
	for _, o := range objs {
		for _, p := range o.parts {
			for q := &p; q != nil; q = q.then {
				if q.r.Object == name && q.res[q.r.PKey] == nil {
					return true
				}
			}
		}
	}
	return false
}

// publishChunk publishes chunk in one transaction, dropping (with their
// error) the partitions whose ownership is lost or whose end is not
// their base, and trying again without them. A non-nil error stops the
// commit: unsure says whether the chunk's outcome is unknown.
func (c *Committer) publishChunk(ctx context.Context, objs []*pubObject, chunk []part) (unsure bool, err error) {
	for try := 0; len(chunk) > 0; try++ {
		if try == maxTries {
			err = fmt.Errorf("%w: object records %s", ErrConflict, c.objKey(objs[0].name))
			break
		}
		var tx publishTxn
		if tx, err = c.publishTxnOf(objs, chunk); err != nil {
			break
		}
		rev, lost, d, terr := c.fencedTxn(ctx, tx.owns, tx.cmps, tx.then, tx.diag)
		if terr != nil {
			for _, p := range chunk {
				p.set(fmt.Errorf("diskless: %s: publish, outcome unknown: %w", p.r.PKey, terr))
			}
			return true, terr
		}
		if rev > 0 {
			for _, p := range chunk {
				p.set(nil)
			}
			for i, o := range objs {
				if tx.refs[i] > 0 {
					o.st = objState{objRecord: objRecord{Refs: o.st.Refs + tx.refs[i]}, rev: rev}
				}
			}
			return false, nil
		}
		if len(lost) > 0 {
			chunk = drop(chunk, lost)
			continue
		}
		chunk = keepAtEnd(chunk, d[:len(chunk)])
		if err = c.reread(objs, tx.refs, d[len(tx.diag)-tx.objects:]); err != nil {
			break
		}
	}
	for _, p := range chunk {
		p.set(fmt.Errorf("diskless: %s: not published: %w", p.r.PKey, err))
	}
	return false, err
}

// publishTxn is one try of a chunk's transaction: for each partition
// its ranges and its new end, on the condition that its end is still its
// first range's base; for each object the chunk refers to, its reference
// count raised, on the condition that its record is as last read. diag
// reads the partitions' ends, in the chunk's order, then the objects'
// records (objects of them), for a try that fails.
type publishTxn struct {
	owns    []owner.Ownership
	cmps    []clientv3.Cmp
	then    []clientv3.Op
	diag    []clientv3.Op
	refs    []int64 // per object of objs, the references the chunk adds
	objects int
}

// publishTxnOf builds a try's transaction; ErrObjectGone for an object
// never recorded that Collect may already take for an orphan
// (reference-counted collection).
func (c *Committer) publishTxnOf(objs []*pubObject, chunk []part) (publishTxn, error) {
	tx := publishTxn{refs: make([]int64, len(objs))}
	for _, p := range chunk {
		ek := c.endKey(p.r.PKey)
		tx.owns = append(tx.owns, p.own)
		tx.cmps = append(tx.cmps, c.endIs(p.r.PKey, p.r.Base))
		end := p.r.End
		for q := &p; q != nil; q = q.then {
			tx.refs[objIndex(objs, q.r.Object)]++
			tx.then = append(tx.then, clientv3.OpPut(c.rangeKey(q.r.PKey, q.r.Base), encodeRange(q.r)))
			end = q.r.End
		}
		tx.then = append(tx.then, clientv3.OpPut(ek, decimal(end)))
		tx.diag = append(tx.diag, clientv3.OpGet(ek))
	}
	for i, o := range objs {
		if tx.refs[i] == 0 {
			continue
		}
		if o.st.rev == 0 && c.opts.Now().Sub(o.putAt) >= c.opts.OrphanAge {
			return publishTxn{}, fmt.Errorf("%w: %s is older than %v", ErrObjectGone, o.name, c.opts.OrphanAge)
		}
		k := c.objKey(o.name)
		if o.st.rev == 0 {
			tx.cmps = append(tx.cmps, clientv3.Compare(clientv3.CreateRevision(k), "=", 0))
		} else {
			tx.cmps = append(tx.cmps, clientv3.Compare(clientv3.ModRevision(k), "=", o.st.rev))
		}
		tx.then = append(tx.then, clientv3.OpPut(k, encodeObj(objRecord{Refs: o.st.Refs + tx.refs[i]})))
		tx.diag = append(tx.diag, clientv3.OpGet(k))
		tx.objects++
	}
	return tx, nil
}

// keepAtEnd keeps the parts whose partition's end (ends, read in the
// failed try) is still their base; the others fail with ErrEndMismatch.
func keepAtEnd(chunk []part, ends []*pb.ResponseOp) []part {
	var keep []part
	for i, p := range chunk {
		if v, _, ok := getValue(ends[i]); ok != (p.r.Base != 0) || (ok && string(v) != decimal(p.r.Base)) {
			p.set(fmt.Errorf("diskless: %s: %w: end %q, batches at %d", p.r.PKey, ErrEndMismatch, v, p.r.Base))
			continue
		}
		keep = append(keep, p)
	}
	return keep
}

// reread takes the object records read in a failed try (recs, one per
// object with references) as the next try's conditions; ErrObjectGone
// when one was created or removed meanwhile, or is being collected.
func (c *Committer) reread(objs []*pubObject, refs []int64, recs []*pb.ResponseOp) error {
	j := 0
	for i, o := range objs {
		if refs[i] == 0 {
			continue
		}
		v, mod, ok := getValue(recs[j])
		j++
		switch {
		case o.st.rev == 0 && ok, o.st.rev != 0 && !ok:
			return fmt.Errorf("%w: %s", ErrObjectGone, o.name)
		case ok && mod != o.st.rev:
			cur, err := decodeObj(c.objKey(o.name), v, mod)
			if err != nil || cur.Dead != 0 {
				return fmt.Errorf("%w: %s (%v)", ErrObjectGone, o.name, err)
			}
			o.st = cur
		}
	}
	return nil
}

// objIndex is the index in objs of the object named name.
func objIndex(objs []*pubObject, name string) int {
	for i, o := range objs {
		if o.name == name {
			return i
		}
	}
	panic("diskless: a part of an object not published")
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
func drop(chunk []part, lost []string) []part {
	var keep []part
	for _, p := range chunk {
		if contains(lost, p.r.PKey) {
			p.set(fenced(p.r.PKey))
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

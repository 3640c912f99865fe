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

// Merge replaces runs of adjacent small ranges of pkey (each shorter than
// Options.MergeBelow, together at most Options.MergeMax) by one object
// "merged/<pkey>/..." and one range record each, so etcd keeps few records
// per partition. Each run is one fenced transaction under o that also
// requires the replaced range records unchanged (merges keep the bytes). It returns how many
// range records were replaced.
func (c *Committer) Merge(ctx context.Context, o owner.Ownership, pkey string) (merged int, err error) {
	if o.Partition != pkey {
		return 0, fmt.Errorf("diskless: %s: %w", pkey, ErrNotOwned)
	}
	for tries := 0; tries < maxTries; {
		st, err := c.readLog(ctx, pkey)
		if err != nil {
			return merged, err
		}
		c.backlog.setMerge(pkey, c.mergeable(st))
		i, j := c.pickRun(st)
		if j-i < 2 {
			return merged, nil
		}
		n, err := c.mergeRun(ctx, o, st, i, j)
		if err != nil {
			return merged, err
		}
		if n == 0 {
			tries++ // the records changed under us: read again
		}
		merged += n
	}
	return merged, fmt.Errorf("diskless: %s: merge: %w", pkey, ErrConflict)
}

// maxRun is the most ranges one merge replaces: its transaction compares
// the ownership (2), each range record and each of their objects' records
// (at most 2 per range) and the merged object's record (1).
func (c *Committer) maxRun() int { return (c.txnBudget() - 3) / 2 }

// pickRun returns the first run st.ranges[i:j] worth merging: adjacent
// ranges at or above start, each small, together bounded.
func (c *Committer) pickRun(st logState) (i, j int) {
	rs := st.ranges
	for i = 0; i < len(rs); i++ {
		if rs[i].End <= st.start || rs[i].Len >= c.opts.MergeBelow {
			continue
		}
		total := rs[i].Len
		for j = i + 1; j < len(rs) && j-i < c.maxRun(); j++ {
			r := rs[j]
			if r.Base != rs[j-1].End || r.Len >= c.opts.MergeBelow || total+r.Len > c.opts.MergeMax {
				break
			}
			total += r.Len
		}
		if j-i >= 2 {
			return i, j
		}
	}
	return 0, 0
}

// mergeRun merges st.ranges[i:j]: it writes their bytes, checked, into
// one object and publishes it in place of their records. n = 0 and no
// error: the records changed meanwhile, nothing was published. The
// object is deleted again unless it was published or the outcome is
// unknown (then Collect decides).
func (c *Committer) mergeRun(ctx context.Context, o owner.Ownership, st logState, i, j int) (n int, err error) {
	rs, revs := st.ranges[i:j], st.revs[i:j]
	m, putAt, err := c.writeMerged(ctx, rs)
	if err != nil {
		return 0, err
	}
	if c.afterMergeWrite != nil {
		c.afterMergeWrite()
	}
	n, keep, err := c.publishMerged(ctx, o, m, putAt, rs, revs)
	if !keep {
		c.bucket.Delete(ctx, m.Object)
	}
	return n, err
}

// writeMerged reads the bytes of rs, checked, and writes them as one new
// object; the merged range, and when its write began.
func (c *Committer) writeMerged(ctx context.Context, rs []Range) (Range, time.Time, error) {
	var data []byte
	for _, r := range rs {
		b, err := c.ReadRange(ctx, r)
		if err != nil {
			return Range{}, time.Time{}, err
		}
		data = append(data, b...)
	}
	pkey := rs[0].PKey
	name := c.uniqueName(mergedDir + pkey + "/")
	m := Range{PKey: pkey, Base: rs[0].Base, End: rs[len(rs)-1].End, Object: name, Len: int64(len(data)), SHA256: sha256.Sum256(data),
		Pieces: c.pieces(rs, data)}
	for _, r := range rs {
		m.MaxTime = max(m.MaxTime, r.MaxTime)
	}
	putAt := c.opts.Now()
	if err := c.bucket.WriteAll(ctx, name, data, &blob.WriterOptions{ContentType: "application/octet-stream"}); err != nil {
		return Range{}, time.Time{}, fmt.Errorf("diskless: %s: merge: write %s: %w", pkey, name, err)
	}
	return m, putAt, nil
}

// publishMerged publishes m in place of rs (read at revs) in one fenced
// transaction: m's record over the first range's key, the others
// deleted, the merged objects' counts dropped and m's object recorded.
// keep says whether m's object must stay: published, or the outcome
// unknown.
func (c *Committer) publishMerged(ctx context.Context, o owner.Ownership, m Range, putAt time.Time, rs []Range, revs []int64) (n int, keep bool, err error) {
	pkey := m.PKey
	delta := make(map[string]int64)
	var objects []string
	for _, r := range rs {
		if _, ok := delta[r.Object]; !ok {
			objects = append(objects, r.Object)
		}
		delta[r.Object]--
	}
	// Reading the bytes and writing the object took a while: read the
	// records again, and the objects' counts at that same revision
	// (readObjects), so the counts dropped below are those of ranges
	// still published, never of ranges a new owner merged or trimmed
	// meanwhile.
	now, err := c.readLog(ctx, pkey)
	if err != nil || !sameRanges(now, rs, revs) {
		return 0, false, err
	}
	ost, err := c.readObjects(ctx, objects, now.rev)
	if errors.Is(err, ErrStale) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	cmps, then, err := c.refChanges(ost, delta)
	if err != nil {
		return 0, false, err
	}
	if c.opts.Now().Sub(putAt) >= c.opts.OrphanAge {
		return 0, false, fmt.Errorf("%w: %s is older than %v", ErrObjectGone, m.Object, c.opts.OrphanAge)
	}
	mk := c.objKey(m.Object)
	cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(mk), "=", 0))
	then = append(then, clientv3.OpPut(mk, encodeObj(objRecord{Refs: 1})), clientv3.OpPut(c.rangeKey(pkey, m.Base), encodeRange(m)))
	for k, r := range rs {
		rk := c.rangeKey(pkey, r.Base)
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(rk), "=", revs[k]))
		if k > 0 { // the first record's key is the merged one's: overwritten
			then = append(then, clientv3.OpDelete(rk))
		}
	}
	if c.beforeMergeTxn != nil {
		c.beforeMergeTxn()
	}
	rev, lost, _, err := c.fencedTxn(ctx, []owner.Ownership{o}, cmps, then, nil)
	switch {
	case err != nil: // unknown: the object may be published; Collect decides
		return 0, true, fmt.Errorf("diskless: %s: merge, outcome unknown: %w", pkey, err)
	case len(lost) > 0:
		return 0, false, fenced(pkey)
	case rev == 0:
		return 0, false, nil
	}
	return len(rs), true, nil
}

// sameRanges reports whether st still publishes the range records rs,
// each at its mod revision of revs: none merged, trimmed or rewritten.
func sameRanges(st logState, rs []Range, revs []int64) bool {
	at := make(map[int64]int64, len(st.ranges))
	for k, r := range st.ranges {
		at[r.Base] = st.revs[k]
	}
	for k, r := range rs {
		if rev, ok := at[r.Base]; !ok || rev != revs[k] {
			return false
		}
	}
	return true
}

// pieces cuts a merged range's bytes, data (the bytes of rs, checked, in
// order), into pieces of at most PieceBytes (merged ranges in pieces): runs of the replaced
// ranges, or of their own pieces, each piece whole batches with its own
// SHA-256. None when it would be one piece.
func (c *Committer) pieces(rs []Range, data []byte) []Piece {
	var units []Piece // positions in data
	at := int64(0)
	for _, r := range rs {
		for _, p := range r.Parts() {
			units = append(units, Piece{Base: p.Base, End: p.End, Pos: at + p.Pos - r.Pos, Len: p.Len, MaxTime: p.MaxTime})
		}
		at += r.Len
	}
	var out []Piece
	for i := 0; i < len(units); {
		p := units[i]
		j := i + 1
		for ; j < len(units) && p.Len+units[j].Len <= c.opts.PieceBytes; j++ {
			p.End, p.Len, p.MaxTime = units[j].End, p.Len+units[j].Len, max(p.MaxTime, units[j].MaxTime)
		}
		p.SHA256 = sha256.Sum256(data[p.Pos : p.Pos+p.Len])
		out = append(out, p)
		i = j
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

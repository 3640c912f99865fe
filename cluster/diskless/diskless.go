package diskless

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kgateway/kgateway/cluster/owner"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"gocloud.dev/blob"
)

// Errors. Each is wrapped with the partition or object it concerns.
var (
	// ErrCorrupt: a range's bytes do not match its record (checked range reads).
	ErrCorrupt = errors.New("diskless: corrupt range")
	// ErrEndMismatch: a commit's first offset is not the partition's
	// published end (ranges tiling the log); nothing of the partition was published.
	ErrEndMismatch = errors.New("diskless: batches do not start at the published end")
	// ErrNotOwned: Commit was given batches of a partition without its
	// ownership.
	ErrNotOwned = errors.New("diskless: no ownership given for the partition")
	// ErrInvalid: batches that are not contiguous record batches.
	ErrInvalid = errors.New("diskless: invalid batches")
	// ErrObjectGone: the commit's object was collected before it was
	// published (reference-counted collection); nothing of it was published.
	ErrObjectGone = errors.New("diskless: object collected before publication")
	// ErrConflict: the records changed under a merge or a trim too often.
	ErrConflict = errors.New("diskless: concurrent changes, try again")
	// ErrOutOfRange: a start beyond the partition's end.
	ErrOutOfRange = errors.New("diskless: offset out of range")
	// ErrStale: a range's record changed (merged, trimmed) since Log
	// listed it; Pin took no pin. The reader lists again (pin revalidation).
	ErrStale = errors.New("diskless: range changed since listed")
	// ErrPredecessor: the commit begun before this one did not publish
	// the partition, so this one does not either (in-order publication).
	ErrPredecessor = errors.New("diskless: the previous commit of the partition was not published")
)

// Batch is one commit's bytes of a partition: one Kafka record batch (or
// several back to back) with its base offset stamped, covering the
// offsets [Base, Base+Records).
type Batch struct {
	PKey    string
	Base    int64
	Records int32
	MaxTime int64
	Data    []byte
}

// Range is a published range of a partition: the offsets [Base, End), whose
// batches are the bytes [Pos, Pos+Len) of Object.
type Range struct {
	PKey      string
	Base, End int64
	Object    string
	Pos, Len  int64
	SHA256    [32]byte
	MaxTime   int64
	// Rev is the range record's mod revision when Log listed it: Pin
	// revalidates against it (pin revalidation). 0 on a Range not listed by Log.
	Rev int64
	// Record is the Base of the range record it was listed from: Base
	// itself for a whole range, the whole range's for one of its Parts.
	// Pin revalidates that record (pin revalidation).
	Record int64
	// Pieces cut a merged range, or a commit's range longer than
	// Options.PieceBytes, at batch boundaries into parts of about
	// Options.PieceBytes at most, each with its own SHA-256, so that a
	// read fetches only the parts it needs (merged ranges in pieces,
	// commit ranges in pieces). None: one piece (short ranges, and
	// records written before pieces).
	Pieces []Piece
}

// Piece is a part of a merged range: the offsets [Base, End) are the
// batches in bytes [Pos, Pos+Len) of the range's object.
type Piece struct {
	Base, End int64
	Pos, Len  int64
	SHA256    [32]byte
	MaxTime   int64
}

// Parts is r as the ranges a reader may fetch and check one by one
// (merged ranges in pieces): one per piece, of r's object and record, or r itself.
func (r Range) Parts() []Range {
	if len(r.Pieces) == 0 {
		return []Range{r}
	}
	out := make([]Range, len(r.Pieces))
	for i, p := range r.Pieces {
		out[i] = Range{PKey: r.PKey, Base: p.Base, End: p.End, Object: r.Object, Pos: p.Pos, Len: p.Len,
			SHA256: p.SHA256, MaxTime: p.MaxTime, Rev: r.Rev, Record: r.Record}
	}
	return out
}

// Options tune a Committer; the zero value is the defaults.
type Options struct {
	// MaxTxnOps is etcd's --max-txn-ops (128 by default): the most
	// comparisons or operations of one transaction. At least 10 (2
	// partitions per commit transaction, 2 ranges per merge).
	MaxTxnOps int
	// OrphanAge is how old an object with no record must be before
	// Collect deletes it (reference-counted collection); 0: one hour. It must exceed the longest
	// Commit or Merge (a writer gives up publishing an object older than
	// this) plus the clock skew between nodes and the object store.
	OrphanAge time.Duration
	// MergeBelow: ranges shorter than this (bytes) are merged; 0: 1 MiB.
	MergeBelow int64
	// MergeMax bounds a merged object (bytes); 0: 64 MiB.
	MergeMax int64
	// PieceBytes bounds the pieces a merged range is cut into (merged
	// ranges in pieces), unless one replaced range alone is larger, and
	// those of a commit's range longer than it (commit ranges in
	// pieces), unless one batch alone is larger; 0: 1 MiB.
	PieceBytes int64
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// Observer, when set, is told of every group commit's timings
	// (metrics).
	Observer Observer
}

// Observer is told what a Committer's work costs; package server wires
// the metrics to it. Its methods run on the commit path: they must not
// block.
type Observer interface {
	// ObserveCommit: one group commit (acknowledgement after PUT and commit) of bytes took put for its
	// object's PUT and txn for its etcd transactions (all of them);
	// fenced of its partitions were refused for a lost ownership (fenced writers publish nothing).
	ObserveCommit(put, txn time.Duration, bytes, fenced int)
}

// Committer publishes group commits of the partitions this node owns.
type Committer struct {
	cli    etcdClient // counted (requests.go)
	own    *owner.Manager
	bucket objectStore // counted
	counts counters
	prefix string
	node   string
	opts   Options

	// pipe orders the commits in flight (in-order publication): last is the one begun
	// last.
	pipe struct {
		sync.Mutex
		last *Flight
	}

	// afterPut, when set (tests), runs once a commit's PUT returned,
	// before it waits for its turn.
	afterPut func(name string)
	// beforeChunk, when set (tests), runs before a commit's i-th
	// transaction (i = 0: between the object's PUT and the first).
	beforeChunk func(i int)
	// backlog is what the last passes of Merge and Collect left undone
	// (Backlog).
	backlog backlog

	// floor is this node's reader floor (floored reads).
	floor floor
	// afterFloorRegister, when set (tests), runs once a floored read is
	// registered, before it reads the objects.
	afterFloorRegister func()

	// afterMergeWrite, when set (tests), runs once a merge wrote its
	// object, before it reads the object records.
	afterMergeWrite func()
	// beforeRemoveCounts, when set (tests), runs once SetStart or a
	// topic's deletion listed the ranges it removes, before it reads
	// their objects' counts.
	beforeRemoveCounts func()
	// beforeMergeTxn, when set (tests), runs before a merge's transaction.
	beforeMergeTxn func()
}

// New returns a Committer for node with records under prefix in cli,
// objects in bucket, fenced by own.
func New(cli *clientv3.Client, own *owner.Manager, bucket *blob.Bucket, prefix, node string, opts Options) *Committer {
	switch {
	case opts.MaxTxnOps <= 0:
		opts.MaxTxnOps = 128
	case opts.MaxTxnOps < 10:
		opts.MaxTxnOps = 10
	}
	if opts.OrphanAge <= 0 {
		opts.OrphanAge = time.Hour
	}
	if opts.MergeBelow <= 0 {
		opts.MergeBelow = 1 << 20
	}
	if opts.MergeMax <= 0 {
		opts.MergeMax = 64 << 20
	}
	if opts.PieceBytes <= 0 {
		opts.PieceBytes = 1 << 20
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &Committer{own: own, prefix: prefix, node: node, opts: opts}
	c.cli, c.bucket = etcdClient{cli, &c.counts}, objectStore{bucket, &c.counts}
	return c
}

// Keys.

func (c *Committer) logPrefix(pkey string) string { return c.prefix + "log/" + pkey + "/" }
func (c *Committer) startKey(pkey string) string  { return c.logPrefix(pkey) + "start" }
func (c *Committer) endKey(pkey string) string    { return c.logPrefix(pkey) + "end" }
func (c *Committer) rangesPrefix(pkey string) string {
	return c.logPrefix(pkey) + "r/"
}
func (c *Committer) rangeKey(pkey string, base int64) string {
	return fmt.Sprintf("%s%020d", c.rangesPrefix(pkey), base)
}
func (c *Committer) objPrefix() string           { return c.prefix + "obj/" }
func (c *Committer) objKey(object string) string { return c.objPrefix() + object }

// Object name prefixes in the bucket.
const (
	commitsDir = "commits/"
	mergedDir  = "merged/"
)

// uniqueName is a fresh object name under dir: time first (listings sort
// by age), then randomness, so no name is ever written twice.
func (c *Committer) uniqueName(dir string) string {
	return fmt.Sprintf("%s%016x-%s", dir, c.opts.Now().UnixNano(), rand.Text()[:13])
}

// rangeRecord is a range key's value.
type rangeRecord struct {
	End     int64  `json:"end"`
	Object  string `json:"obj"`
	Pos     int64  `json:"pos"`
	Len     int64  `json:"len"`
	SHA256  string `json:"sha256"`
	MaxTime int64  `json:"maxTime"`
	// Pieces of a merged range or a long commit range (merged ranges in
	// pieces, commit ranges in pieces): base, end, position, length,
	// SHA-256 and max timestamp of each, at most about 150 bytes a piece.
	Pieces []pieceRecord `json:"pieces,omitempty"`
}

type pieceRecord struct {
	Base    int64  `json:"b"`
	End     int64  `json:"e"`
	Pos     int64  `json:"p"`
	Len     int64  `json:"l"`
	SHA256  string `json:"s"`
	MaxTime int64  `json:"t"`
}

func encodeRange(r Range) string {
	rec := rangeRecord{End: r.End, Object: r.Object, Pos: r.Pos, Len: r.Len,
		SHA256: hex.EncodeToString(r.SHA256[:]), MaxTime: r.MaxTime}
	for _, p := range r.Pieces {
		rec.Pieces = append(rec.Pieces, pieceRecord{Base: p.Base, End: p.End, Pos: p.Pos, Len: p.Len,
			SHA256: hex.EncodeToString(p.SHA256[:]), MaxTime: p.MaxTime})
	}
	b, _ := json.Marshal(rec)
	return string(b)
}

func decodeRange(pkey, key string, val []byte) (Range, error) {
	i := strings.LastIndexByte(key, '/')
	base, err := strconv.ParseInt(key[i+1:], 10, 64)
	if err != nil {
		return Range{}, fmt.Errorf("diskless: range key %q: %w", key, err)
	}
	var rec rangeRecord
	if err := json.Unmarshal(val, &rec); err != nil {
		return Range{}, fmt.Errorf("diskless: range %q: %w", key, err)
	}
	r := Range{PKey: pkey, Base: base, End: rec.End, Object: rec.Object, Pos: rec.Pos, Len: rec.Len, MaxTime: rec.MaxTime, Record: base}
	if r.SHA256, err = decodeSum(rec.SHA256); err != nil {
		return Range{}, fmt.Errorf("diskless: range %q: %w", key, err)
	}
	next, pos := base, r.Pos
	for _, p := range rec.Pieces {
		sum, err := decodeSum(p.SHA256)
		if err != nil {
			return Range{}, fmt.Errorf("diskless: range %q: piece at %d: %w", key, p.Base, err)
		}
		if p.Base != next || p.End <= p.Base || p.Pos != pos || p.Len <= 0 {
			return Range{}, fmt.Errorf("diskless: range %q: piece [%d, %d) at byte %d does not follow [.., %d) at %d", key, p.Base, p.End, p.Pos, next, pos)
		}
		r.Pieces = append(r.Pieces, Piece{Base: p.Base, End: p.End, Pos: p.Pos, Len: p.Len, SHA256: sum, MaxTime: p.MaxTime})
		next, pos = p.End, p.Pos+p.Len
	}
	if len(r.Pieces) > 0 && (next != r.End || pos != r.Pos+r.Len) {
		return Range{}, fmt.Errorf("diskless: range %q: pieces end at %d, byte %d; the range at %d, byte %d", key, next, pos, r.End, r.Pos+r.Len)
	}
	return r, nil
}

func decodeSum(h string) ([32]byte, error) {
	var sum [32]byte
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != len(sum) {
		return sum, fmt.Errorf("bad sha256 %q", h)
	}
	copy(sum[:], b)
	return sum, nil
}

// objRecord is an object reference record's value: how many range
// records name the object, or, for an orphan being collected, the time
// (unix ns) it was condemned: a tombstone that stops its writer from
// publishing it late.
type objRecord struct {
	Refs int64 `json:"refs"`
	Dead int64 `json:"dead,omitempty"`
}

func encodeObj(r objRecord) string {
	b, _ := json.Marshal(r)
	return string(b)
}

// objState is an object record as read: rev 0 when there is none.
type objState struct {
	objRecord
	rev int64
}

func decodeObj(key string, val []byte, rev int64) (objState, error) {
	var r objRecord
	if err := json.Unmarshal(val, &r); err != nil {
		return objState{}, fmt.Errorf("diskless: object record %q: %w", key, err)
	}
	return objState{objRecord: r, rev: rev}, nil
}

func decimal(v int64) string { return strconv.FormatInt(v, 10) }

// txnBudget is how many comparisons or operations one transaction may
// hold here: MaxTxnOps, less the two comparisons of the nested
// transaction that diagnoses a lost ownership (fencedTxn) which etcd
// counts against its parent.
func (c *Committer) txnBudget() int { return c.opts.MaxTxnOps - 2 }

// readObjects reads the records of objects as they were at revision rev,
// the revision the caller's range records were read at (logState.rev), in
// transactions of at most MaxTxnOps gets. Reading them at that one
// revision is what keeps every count consistent with the ranges read: a
// range record that names an object at rev is counted in the object's
// record at rev (reference-counted collection), so a count read this way is never below the
// references the caller is about to drop. Counts read later could be: a
// new owner that merged or trimmed the same ranges meanwhile (a session
// lost, the partition moved) has already taken their references, and the
// caller would drop them a second time. The caller's transaction requires
// every record unchanged since rev, so a view this old fails there and is
// read again. A revision compacted away is ErrStale: read the log again.
func (c *Committer) readObjects(ctx context.Context, objects []string, rev int64) (map[string]objState, error) {
	out := make(map[string]objState, len(objects))
	for len(objects) > 0 {
		n := min(len(objects), c.opts.MaxTxnOps)
		var ops []clientv3.Op
		for _, o := range objects[:n] {
			ops = append(ops, clientv3.OpGet(c.objKey(o), clientv3.WithRev(rev)))
		}
		resp, err := c.cli.Txn(ctx).Then(ops...).Commit()
		if errors.Is(err, rpctypes.ErrCompacted) {
			return nil, fmt.Errorf("diskless: object records at revision %d: %w", rev, ErrStale)
		}
		if err != nil {
			return nil, fmt.Errorf("diskless: read object records: %w", err)
		}
		for i, o := range objects[:n] {
			kvs := resp.Responses[i].GetResponseRange().Kvs
			if len(kvs) == 0 {
				out[o] = objState{}
				continue
			}
			st, err := decodeObj(o, kvs[0].Value, kvs[0].ModRevision)
			if err != nil {
				return nil, err
			}
			out[o] = st
		}
		objects = objects[n:]
	}
	return out, nil
}

// refChanges are the comparisons and puts that apply delta references to
// objects whose records are st: each record unchanged since read, then
// its new count. A record missing or condemned while ranges name it is
// an inconsistency: refused.
func (c *Committer) refChanges(st map[string]objState, delta map[string]int64) ([]clientv3.Cmp, []clientv3.Op, error) {
	var cmps []clientv3.Cmp
	var ops []clientv3.Op
	for o, d := range delta {
		s := st[o]
		if s.rev == 0 || s.Dead != 0 || s.Refs+d < 0 {
			return nil, nil, fmt.Errorf("diskless: object %s: reference record %+v cannot take %+d", o, s, d)
		}
		k := c.objKey(o)
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(k), "=", s.rev))
		ops = append(ops, clientv3.OpPut(k, encodeObj(objRecord{Refs: s.Refs + d})))
	}
	return cmps, ops, nil
}

// fencedTxn runs then if every ownership of owns holds (the fenced transaction) and every
// comparison of cmps holds, and returns the transaction's revision (> 0).
// When it fails (rev 0), lost names the partitions
// whose ownership is gone, and diag holds the responses of the diag
// operations (run in the Else), to tell which comparison failed. err is
// an outcome unknown (no acknowledgement without a fenced commit).
func (c *Committer) fencedTxn(ctx context.Context, owns []owner.Ownership, cmps []clientv3.Cmp, then, diag []clientv3.Op) (rev int64, lost []string, diagResp []*pb.ResponseOp, err error) {
	var guard []clientv3.Cmp
	var els []clientv3.Op
	for _, o := range owns {
		g := c.own.Guard(o)
		guard = append(guard, g...)
		els = append(els, clientv3.OpTxn(g, nil, nil))
	}
	els = append(els, diag...)
	resp, err := c.cli.Txn(ctx).If(append(guard, cmps...)...).Then(then...).Else(els...).Commit()
	if err != nil {
		return 0, nil, nil, err
	}
	if resp.Succeeded {
		return resp.Header.Revision, nil, nil, nil
	}
	for i, o := range owns {
		if !resp.Responses[i].GetResponseTxn().Succeeded {
			lost = append(lost, o.Partition)
		}
	}
	return 0, lost, resp.Responses[len(owns):], nil
}

// fenced is the error of a partition whose ownership is lost (the fenced transaction, no acknowledgement without a fenced commit).
func fenced(pkey string) error {
	return fmt.Errorf("diskless: %s: %w", pkey, &owner.FencedError{Lost: []string{pkey}})
}

// getValue is the value of a get's only key, and whether there is one.
func getValue(r *pb.ResponseOp) ([]byte, int64, bool) {
	kvs := r.GetResponseRange().Kvs
	if len(kvs) == 0 {
		return nil, 0, false
	}
	return kvs[0].Value, kvs[0].ModRevision, true
}

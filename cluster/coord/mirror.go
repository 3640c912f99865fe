package coord

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/kgateway/kgateway/cluster/owner"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrDiverged: etcd holds a write the local store was told had failed
// (unknown outcomes resolved first). The mirror refuses every later write; the node must restore.
var ErrDiverged = errors.New("coord: mirror diverged from the local store")

// Options bound the mirror's etcd transactions. The zero value is etcd's
// defaults.
type Options struct {
	// MaxTxnOps is etcd's max-txn-ops. Default 128.
	MaxTxnOps int
	// MaxTxnBytes bounds the data of one transaction, under etcd's
	// max-request-bytes (1.5 MiB by default). Default 1 MiB.
	MaxTxnBytes int
	// Timeout bounds each etcd request. Default 10s.
	Timeout time.Duration
}

func (o *Options) setDefaults() {
	if o.MaxTxnOps <= 0 {
		o.MaxTxnOps = 128
	}
	if o.MaxTxnBytes <= 0 {
		o.MaxTxnBytes = 1 << 20
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
}

// mirror writes the store's batches to etcd for one coordinator
// ownership. Calls are serialized (the store makes one at a time too,
// each with a group of its writes as one batch, O8).
type mirror struct {
	cli    *clientv3.Client
	m      *owner.Manager
	o      owner.Ownership
	prefix string
	opts   Options

	mu sync.Mutex
	// settled: no pending batch or orphan chunk is left (whole mirrored batches, no history in etcd) and
	// lastRev is known.
	settled bool
	// lastRev is P kvlast's mod revision after this mirror's last commit
	// (unknown outcomes resolved first).
	lastRev int64
	// inDoubt is the id of a commit whose outcome is unknown (unknown outcomes resolved first).
	inDoubt string
	// broken is permanent: fenced (no acknowledgement without a fenced commit) or diverged (unknown outcomes resolved first).
	broken error
}

// NewMirror returns an offsets.Options.Mirror that writes every batch to
// etcd under prefix, guarded by ownership o of the coordinator (the coordinator mirror's rules).
func NewMirror(cli *clientv3.Client, m *owner.Manager, o owner.Ownership, prefix string, opts Options) func(*pebble.Batch) error {
	opts.setDefaults()
	mr := &mirror{cli: cli, m: m, o: o, prefix: prefix, opts: opts}
	return mr.write
}

func (mr *mirror) lastKey() string    { return mr.prefix + "kvlast" }
func (mr *mirror) pendingKey() string { return mr.prefix + "kvpending" }
func (mr *mirror) chunkDir() string   { return mr.prefix + "kvbatch/" }

func (mr *mirror) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), mr.opts.Timeout)
}

func (mr *mirror) write(b *pebble.Batch) error {
	mr.mu.Lock()
	defer mr.mu.Unlock()
	if mr.broken != nil {
		return mr.broken
	}
	repr := b.Repr()
	ops, err := netOps(repr)
	if err != nil {
		return err
	}
	for _, o := range ops {
		if o.size() > mr.opts.MaxTxnBytes {
			return fmt.Errorf("coord: key %q: %d bytes exceed a transaction (%d)", o.key, o.size(), mr.opts.MaxTxnBytes)
		}
	}
	if err := mr.ready(); err != nil {
		return mr.fail(err)
	}
	id := newID()
	if mr.fits(ops) {
		eops := make([]clientv3.Op, len(ops))
		for i, o := range ops {
			eops[i] = etcdOp(mr.prefix, o)
		}
		return mr.fail(mr.commit(id, eops))
	}
	return mr.fail(mr.spill(id, repr, ops))
}

// fail records a fenced error as permanent (no acknowledgement without a fenced commit) and returns err.
func (mr *mirror) fail(err error) error {
	if errors.Is(err, owner.ErrFenced) || errors.Is(err, ErrDiverged) {
		mr.broken = err
	}
	return err
}

// ready resolves an unknown outcome (unknown outcomes resolved first) and folds what an earlier
// mirror left (whole mirrored batches, no history in etcd) before anything new is written.
// The unknown outcome first: resolve relies on lastRev as of before it.
func (mr *mirror) ready() error {
	if mr.inDoubt != "" {
		applied, err := mr.resolve(mr.inDoubt)
		if err != nil {
			return err
		}
		mr.inDoubt = ""
		if applied {
			return ErrDiverged
		}
	}
	if !mr.settled {
		return mr.settle()
	}
	return nil
}

func (mr *mirror) fits(ops []op) bool {
	if len(ops)+1 > mr.opts.MaxTxnOps { // +1: kvlast
		return false
	}
	n := 0
	for _, o := range ops {
		n += o.size()
	}
	return n <= mr.opts.MaxTxnBytes
}

// commit writes ops and kvlast = id in one transaction guarded by the
// ownership and by kvlast's revision (the fenced store mirror, unknown outcomes resolved first). An unknown outcome is
// resolved at once if etcd answers, else left in doubt for the next write.
func (mr *mirror) commit(id string, ops []clientv3.Op) error {
	ctx, cancel := mr.ctx()
	defer cancel()
	resp, err := mr.cli.Txn(ctx).
		If(mr.guard()...).
		Then(append(ops, clientv3.OpPut(mr.lastKey(), id))...).
		Else(clientv3.OpGet(mr.lastKey())).
		Commit()
	if err == nil {
		if resp.Succeeded {
			mr.lastRev = resp.Header.Revision
			return nil
		}
		return mr.fenced()
	}
	applied, rerr := mr.resolve(id)
	switch {
	case rerr != nil:
		mr.inDoubt = id
	case applied:
		return nil
	}
	return fmt.Errorf("coord: mirror: %w", err)
}

// guard is the ownership (the fenced transaction) and kvlast unchanged since this mirror's
// last commit (unknown outcomes resolved first).
func (mr *mirror) guard() []clientv3.Cmp {
	return append(mr.m.Guard(mr.o), clientv3.Compare(clientv3.ModRevision(mr.lastKey()), "=", mr.lastRev))
}

func (mr *mirror) fenced() error {
	return &owner.FencedError{Lost: []string{mr.o.Partition}}
}

// resolve decides commit id's unknown outcome (unknown outcomes resolved first): it voids kvlast if
// it is unchanged (then id can never apply: its guard fails), or finds id
// there (applied).
func (mr *mirror) resolve(id string) (applied bool, err error) {
	ctx, cancel := mr.ctx()
	defer cancel()
	void := "void " + id
	resp, err := mr.cli.Txn(ctx).
		If(mr.guard()...).
		Then(clientv3.OpPut(mr.lastKey(), void)).
		Else(clientv3.OpGet(mr.lastKey())).
		Commit()
	if err != nil {
		return false, fmt.Errorf("coord: resolve %s: %w", id, err)
	}
	if resp.Succeeded {
		mr.lastRev = resp.Header.Revision
		return false, nil
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 1 && (string(kvs[0].Value) == id || string(kvs[0].Value) == void) {
		mr.lastRev = kvs[0].ModRevision
		return string(kvs[0].Value) == id, nil
	}
	return false, mr.fenced()
}

// settle learns kvlast's revision, folds a pending batch an earlier
// mirror committed, and deletes its chunks and any orphan chunks (whole mirrored batches, no history in etcd).
func (mr *mirror) settle() error {
	ctx, cancel := mr.ctx()
	defer cancel()
	resp, err := mr.cli.Txn(ctx).Then(clientv3.OpGet(mr.lastKey()), clientv3.OpGet(mr.pendingKey())).Commit()
	if err != nil {
		return fmt.Errorf("coord: mirror: %w", err)
	}
	last, pending := resp.Responses[0].GetResponseRange().Kvs, resp.Responses[1].GetResponseRange().Kvs
	if len(last) == 1 {
		mr.lastRev = last[0].ModRevision
	} else {
		mr.lastRev = 0
	}
	if len(pending) == 1 {
		id, n, err := parsePending(string(pending[0].Value))
		if err != nil {
			return err
		}
		repr, err := readChunks(ctx, mr.cli, mr.prefix, id, n, resp.Header.Revision)
		if err != nil {
			return err
		}
		ops, err := netOps(repr)
		if err != nil {
			return err
		}
		if err := mr.fold(ops); err != nil {
			return err
		}
	}
	return mr.finish()
}

// spill writes a batch too large for one transaction (whole mirrored batches): its chunks,
// then the commit point, then the fold. After the commit point the write
// has happened: a failing fold is finished by the next write's settle.
func (mr *mirror) spill(id string, repr []byte, ops []op) error {
	mr.settled = false // chunks written below are orphans until finish
	chunk := mr.opts.MaxTxnBytes - 1024
	n := 0
	for off := 0; off < len(repr); off += chunk {
		piece := repr[off:min(off+chunk, len(repr))]
		if err := mr.fencedTxn(clientv3.OpPut(chunkKey(mr.prefix, id, n), string(piece))); err != nil {
			return err
		}
		n++
	}
	if err := mr.commit(id, []clientv3.Op{clientv3.OpPut(mr.pendingKey(), id+" "+strconv.Itoa(n))}); err != nil {
		return err
	}
	if err := mr.fold(ops); err == nil {
		_ = mr.finish() // else the next write's settle finishes
	}
	return nil
}

// fold writes ops to kv/ in as many guarded transactions as the bounds
// need. Each is idempotent: a fold cut short is done again whole.
func (mr *mirror) fold(ops []op) error {
	var txn []clientv3.Op
	size := 0
	for _, o := range ops {
		if len(txn) > 0 && (len(txn)+1 > mr.opts.MaxTxnOps || size+o.size() > mr.opts.MaxTxnBytes) {
			if err := mr.fencedTxn(txn...); err != nil {
				return err
			}
			txn, size = nil, 0
		}
		txn = append(txn, etcdOp(mr.prefix, o))
		size += o.size()
	}
	if len(txn) == 0 {
		return nil
	}
	return mr.fencedTxn(txn...)
}

// finish deletes the pending record and every chunk (no history in etcd).
func (mr *mirror) finish() error {
	dir := mr.chunkDir()
	err := mr.fencedTxn(clientv3.OpDelete(mr.pendingKey()), clientv3.OpDelete(dir, clientv3.WithRange(clientv3.GetPrefixRangeEnd(dir))))
	if err == nil {
		mr.settled = true
	}
	return err
}

func (mr *mirror) fencedTxn(ops ...clientv3.Op) error {
	ctx, cancel := mr.ctx()
	defer cancel()
	_, err := mr.m.Fenced(ctx, []owner.Ownership{mr.o}, ops...)
	return err
}

func chunkKey(prefix, id string, i int) string {
	return fmt.Sprintf("%skvbatch/%s/%08d", prefix, id, i)
}

func parsePending(v string) (id string, n int, err error) {
	id, count, ok := strings.Cut(v, " ")
	if ok {
		n, err = strconv.Atoi(count)
	}
	if !ok || err != nil || n < 0 {
		return "", 0, fmt.Errorf("coord: pending record %q", v)
	}
	return id, n, nil
}

// readChunks reads batch id's n chunks at revision rev and joins them.
func readChunks(ctx context.Context, cli *clientv3.Client, prefix, id string, n int, rev int64) ([]byte, error) {
	var repr []byte
	for i := 0; i < n; i++ {
		resp, err := cli.Get(ctx, chunkKey(prefix, id, i), clientv3.WithRev(rev))
		if err != nil {
			return nil, fmt.Errorf("coord: batch %s: %w", id, err)
		}
		if len(resp.Kvs) != 1 {
			return nil, fmt.Errorf("coord: batch %s: chunk %d of %d missing", id, i, n)
		}
		repr = append(repr, resp.Kvs[0].Value...)
	}
	return repr, nil
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Package authstore keeps the security stores of a cluster in etcd
// (credentials and ACLs shared in etcd): the SCRAM credentials and the ACLs are one document each,
// one etcd key each ("<prefix>auth/scram", "<prefix>auth/acls"), in the
// format of the single-node files. A Doc is auth.Shared over one key:
// changes are compare-and-swap transactions on the key's mod revision,
// retried on conflict, and every node keeps its copy current from a
// watch, reloading the key when the watch ends (compaction, no leader).
package authstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgateway/kgateway/auth"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// DefaultMaxSize bounds a document: etcd refuses requests over 1.5 MiB
// (--max-request-bytes' default); the rest is room for the transaction.
const DefaultMaxSize = 1 << 20

// ScramKey and ACLKey are the documents' keys under a cluster's prefix.
func ScramKey(prefix string) string { return prefix + "auth/scram" }
func ACLKey(prefix string) string   { return prefix + "auth/acls" }

// TokenKey is the delegation tokens' key (kafka/token), kept like the
// SCRAM credentials.
func TokenKey(prefix string) string { return prefix + "auth/tokens" }

// QuotaKey is the client quota configuration's key (kafka/quota), kept
// like the security stores.
func QuotaKey(prefix string) string { return prefix + "auth/quotas" }

// Options configures a Doc.
type Options struct {
	// MaxSize bounds the document (default DefaultMaxSize).
	MaxSize int
	// Timeout bounds one Update, every attempt included (default 30 s).
	Timeout time.Duration
	// RetryInterval is the pause between reloads while etcd fails
	// (default 500 ms).
	RetryInterval time.Duration
	Logger        *zap.Logger
}

// Doc is one document in etcd, followed by a watch: auth.Shared.
type Doc struct {
	cli  *clientv3.Client
	key  string
	opts Options
	log  *zap.Logger

	cur  atomic.Pointer[state]
	mu   sync.Mutex // orders replacing cur: a copy never goes back
	stop context.CancelFunc
	done chan struct{}
}

// state is one version of the document: its value (nil: no key) and the
// etcd revision it is current at (its mod revision, or a deletion's).
type state struct {
	val []byte
	rev int64
}

var _ auth.Shared = (*Doc)(nil)

// Open reads key and follows it until Close; ctx bounds the first read.
// The client stays the caller's.
func Open(ctx context.Context, cli *clientv3.Client, key string, opts Options) (*Doc, error) {
	if opts.MaxSize <= 0 {
		opts.MaxSize = DefaultMaxSize
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.RetryInterval <= 0 {
		opts.RetryInterval = 500 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	d := &Doc{cli: cli, key: key, opts: opts, log: opts.Logger, done: make(chan struct{})}
	d.cur.Store(&state{})
	rev, err := d.load(ctx)
	if err != nil {
		return nil, err
	}
	wctx, stop := context.WithCancel(context.Background())
	d.stop = stop
	go d.run(wctx, rev)
	return d, nil
}

// Close stops following the key.
func (d *Doc) Close() error {
	d.stop()
	<-d.done
	return nil
}

// Load returns the latest document this node knows and the revision it
// is current at.
func (d *Doc) Load() ([]byte, int64) {
	s := d.cur.Load()
	return s.val, s.rev
}

// set makes s the current state unless a later one is already known.
func (d *Doc) set(s *state) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s.rev > d.cur.Load().rev {
		d.cur.Store(s)
	}
}

// ErrConflict is an Update that lost every compare-and-swap within its
// timeout.
var ErrConflict = errors.New("authstore: concurrent updates")

// Update replaces the document by fn's result in a transaction that
// requires the key's mod revision unchanged since fn read it; on
// conflict fn runs again on the newer document (credentials and ACLs shared in etcd).
func (d *Doc) Update(fn func(cur []byte) ([]byte, error)) error {
	ctx, cancel := context.WithTimeout(context.Background(), d.opts.Timeout)
	defer cancel()
	resp, err := d.cli.Get(ctx, d.key)
	if err != nil {
		return fmt.Errorf("authstore: read %s: %w", d.key, err)
	}
	for {
		cur, modRev := current(resp.Kvs)
		next, err := fn(cur)
		if err != nil {
			return err
		}
		if cur != nil && bytes.Equal(next, cur) {
			// Nothing changes (a creation of what exists, a deletion
			// that selects nothing): no write, and this node's copy is
			// at least the one fn saw.
			d.set(&state{val: cur, rev: modRev})
			return nil
		}
		if len(next) > d.opts.MaxSize {
			return fmt.Errorf("%w: %d bytes, at most %d in etcd (%s)", auth.ErrSharedTooLarge, len(next), d.opts.MaxSize, d.key)
		}
		tx, err := d.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(d.key), "=", modRev)).
			Then(clientv3.OpPut(d.key, string(next))).
			Else(clientv3.OpGet(d.key)).
			Commit()
		if err != nil {
			return fmt.Errorf("authstore: write %s: %w", d.key, err)
		}
		if tx.Succeeded {
			d.set(&state{val: next, rev: tx.Header.Revision})
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %s", ErrConflict, d.key)
		}
		resp = (*clientv3.GetResponse)(tx.Responses[0].GetResponseRange())
	}
}

// current is a Get's value (nil: no key) and mod revision (0: none).
func current(kvs []*mvccpb.KeyValue) ([]byte, int64) {
	if len(kvs) == 0 {
		return nil, 0
	}
	v := kvs[0].Value
	if v == nil {
		v = []byte{}
	}
	return v, kvs[0].ModRevision
}

// load reads the key and makes it current; it returns the revision the
// read is at, from which a watch continues.
func (d *Doc) load(ctx context.Context) (int64, error) {
	resp, err := d.cli.Get(ctx, d.key)
	if err != nil {
		return 0, fmt.Errorf("authstore: read %s: %w", d.key, err)
	}
	val, modRev := current(resp.Kvs)
	if modRev == 0 {
		// No key: current as of the read. A deletion is never done by
		// kgateway, but one by hand must still reach every node.
		modRev = resp.Header.Revision
	}
	d.set(&state{val: val, rev: modRev})
	return resp.Header.Revision, nil
}

// run follows the key from revision rev until ctx ends; a watch that
// ends is replaced by a reload and a new watch.
func (d *Doc) run(ctx context.Context, rev int64) {
	defer close(d.done)
	for {
		err := d.follow(ctx, rev)
		if ctx.Err() != nil {
			return
		}
		d.log.Warn("auth-watch-ended", zap.String("key", d.key), zap.Error(err))
		for {
			lctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
			rev, err = d.load(lctx)
			cancel()
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return
			}
			d.log.Warn("auth-reload-failed", zap.String("key", d.key), zap.Error(err))
			t := time.NewTimer(d.opts.RetryInterval)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}
}

// follow applies the key's changes after rev until the watch ends.
func (d *Doc) follow(ctx context.Context, rev int64) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wch := d.cli.Watch(clientv3.WithRequireLeader(wctx), d.key, clientv3.WithRev(rev+1))
	for resp := range wch {
		if err := resp.Err(); err != nil {
			return err
		}
		for _, ev := range resp.Events {
			switch ev.Type {
			case clientv3.EventTypePut:
				v := ev.Kv.Value
				if v == nil {
					v = []byte{}
				}
				d.set(&state{val: v, rev: ev.Kv.ModRevision})
			case clientv3.EventTypeDelete:
				d.set(&state{rev: ev.Kv.ModRevision})
			}
		}
	}
	return errors.New("watch closed")
}

package etcdmeta

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/tier"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Options configures an EtcdMeta.
type Options struct {
	// Prefix is put before every key: one per cluster, e.g.
	// "/kgateway/<cluster id>/tier/".
	Prefix string
	// Timeout bounds each call (default 10s).
	Timeout time.Duration
	// PinLeaseTTL is the TTL of the lease pins are attached to, in
	// seconds (default 30): how long a dead node's pins outlive it.
	PinLeaseTTL int64
}

// EtcdMeta is tier.Meta in etcd.
type EtcdMeta struct {
	c    *clientv3.Client
	opts Options

	mu     sync.Mutex // guards lease and closed
	lease  *pinLease  // nil until the first pin, or after it ended
	closed bool
}

var _ tier.Meta = (*EtcdMeta)(nil)

// New keeps object metadata in etcd through c under opts.Prefix. The
// client stays the caller's; Close releases only this handle's pins.
func New(c *clientv3.Client, opts Options) *EtcdMeta {
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.PinLeaseTTL <= 0 {
		opts.PinLeaseTTL = 30
	}
	return &EtcdMeta{c: c, opts: opts}
}

func (m *EtcdMeta) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), m.opts.Timeout)
}

func (m *EtcdMeta) objKey(log storage.LogID, led storage.LedgerID) string {
	return fmt.Sprintf("%so/%016x/%016x", m.opts.Prefix, uint64(log), uint64(led))
}

func (m *EtcdMeta) Get(log storage.LogID, led storage.LedgerID) (tier.Object, error) {
	ctx, cancel := m.ctx()
	defer cancel()
	resp, err := m.c.Get(ctx, m.objKey(log, led))
	if err != nil {
		return tier.Object{}, fmt.Errorf("etcdmeta: get %v %v: %w", log, led, err)
	}
	if len(resp.Kvs) == 0 {
		return tier.Object{}, fmt.Errorf("%w: %v %v", tier.ErrNoObject, log, led)
	}
	return decode(resp.Kvs[0].Value, resp.Kvs[0].ModRevision)
}

func decode(v []byte, rev int64) (tier.Object, error) {
	o, err := tier.DecodeObject(v)
	o.Version = uint64(rev)
	return o, err
}

func (m *EtcdMeta) List() ([]tier.Object, error) {
	var out []tier.Object
	err := m.scan(m.opts.Prefix+"o/", func(v []byte, rev int64) error {
		o, err := decode(v, rev)
		out = append(out, o)
		return err
	})
	return out, err
}

// Put stores o if its key's mod revision is o.Version (B1).
func (m *EtcdMeta) Put(o tier.Object) (tier.Object, error) {
	key := m.objKey(o.Log, o.Ledger)
	cmp := clientv3.Compare(clientv3.ModRevision(key), "=", int64(o.Version))
	if o.Version == 0 {
		cmp = clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
	}
	stored := o
	stored.Version = 0 // the version is the key's revision, not a field
	ctx, cancel := m.ctx()
	defer cancel()
	resp, err := m.c.Txn(ctx).If(cmp).Then(clientv3.OpPut(key, string(tier.EncodeObject(stored)))).Commit()
	if err != nil {
		return tier.Object{}, fmt.Errorf("etcdmeta: put %v %v: %w", o.Log, o.Ledger, err)
	}
	if !resp.Succeeded {
		return tier.Object{}, fmt.Errorf("%w: %v %v not at version %d", tier.ErrConflict, o.Log, o.Ledger, o.Version)
	}
	o.Version = uint64(resp.Header.Revision)
	return o, nil
}

// Delete removes the record if its key's mod revision is version (B1).
func (m *EtcdMeta) Delete(log storage.LogID, led storage.LedgerID, version uint64) error {
	key := m.objKey(log, led)
	ctx, cancel := m.ctx()
	defer cancel()
	resp, err := m.c.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", int64(version))).
		Then(clientv3.OpDelete(key)).
		Else(clientv3.OpGet(key, clientv3.WithCountOnly())).
		Commit()
	if err != nil {
		return fmt.Errorf("etcdmeta: delete %v %v: %w", log, led, err)
	}
	missing := fmt.Errorf("%w: %v %v", tier.ErrNoObject, log, led)
	if resp.Succeeded {
		// Version 0 matches a missing key: nothing was deleted.
		if resp.Responses[0].GetResponseDeleteRange().Deleted == 0 {
			return missing
		}
		return nil
	}
	if resp.Responses[0].GetResponseRange().Count == 0 {
		return missing
	}
	return fmt.Errorf("%w: %v %v not at version %d", tier.ErrConflict, log, led, version)
}

// scanPage bounds one range request of scan.
const scanPage = 512

// scan calls fn for every key under prefix, in key order, at one revision
// (a consistent snapshot however many pages it takes).
func (m *EtcdMeta) scan(prefix string, fn func(v []byte, modRev int64) error) error {
	end := clientv3.GetPrefixRangeEnd(prefix)
	from, rev := prefix, int64(0)
	for {
		ctx, cancel := m.ctx()
		resp, err := m.c.Get(ctx, from, clientv3.WithRange(end), clientv3.WithLimit(scanPage), clientv3.WithRev(rev))
		cancel()
		if err != nil {
			return fmt.Errorf("etcdmeta: scan %q: %w", prefix, err)
		}
		rev = resp.Header.Revision
		for _, kv := range resp.Kvs {
			if err := fn(kv.Value, kv.ModRevision); err != nil {
				return err
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

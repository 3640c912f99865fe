package diskless

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Reader floors (floored reads): a node reads published ranges without
// writing a pin record per read. It keeps ONE record per session,
// <prefix>floor/<node>/<lease>, under that lease, whose value is a store
// revision V (20 digits): "every read of this node in flight revalidated
// its ranges at a revision L >= V, after this record was created". Collect deletes an
// object whose reference count fell to 0 at revision Z only if every
// floor record it reads, after the object's record, is at least Z.
//
// Why it keeps the object read: a floored read revalidates its ranges'
// records at L (a linearizable read, no write), so each object it reads
// was referenced at L and its count, if it ever fell to 0, fell at some
// Z > L >= V (a count never rises from 0). The node's record was created
// at a revision W <= L (the same read finds it under the node's lease)
// and its value only grows, never past L while the read is in flight. Collect reads the floors at G >= Z: if the record
// existed at G, Collect reads a value <= L < Z and keeps the object; if it
// was created after G, then L >= W > G >= Z, a contradiction. A floor
// only grows and a new one is created after G, so what Collect read at G
// still holds when it deletes. A node that dies leaves its floor only
// until its lease expires, as a pin.
//
// The cost: one record write when the node's session first reads, one
// per AdvanceFloor that moves the floor (a node calls it every few
// seconds), and one read-only transaction per read, where a pin costs
// two synced writes per read (the pins and their removal). The price: a
// floor holds back the collection of every object unreferenced since its
// value, not only the objects read, until the reads in flight end and
// the next AdvanceFloor; a read that cannot be floored (no record yet
// under the lease, the floor moved past its revalidation twice) falls
// back to pins.

// floorDir is where, under the prefix, the nodes' floor records live.
const floorDir = "floor/"

// floorKey is the node's floor record under lease: one per session, so
// that two incarnations of a node never share one.
func (c *Committer) floorKey(lease clientv3.LeaseID) string {
	return fmt.Sprintf("%s%s%s/%x", c.prefix, floorDir, c.node, int64(lease))
}

// floor is this node's reader floor as the node knows it.
type floor struct {
	mu sync.Mutex
	// lease is the lease the record was created under; 0: none.
	lease clientv3.LeaseID
	// created is the revision that created the record under lease.
	created int64
	// value is the highest value written or being written: a read
	// registers only at a revision at least this and created.
	value int64
	// reads are the revalidation revisions of the reads in flight.
	reads map[*int64]struct{}
	// advancing serializes AdvanceFloor and record creation.
	advancing sync.Mutex
}

// ReadFloored reads rs (ReadRange, checked range reads) as ReadPinned
// does, but under the node's floor (floored reads) instead of a pin
// record per object: the ranges are revalidated in a read-only
// transaction (ErrStale when a record changed since Log listed it), the
// read is registered at that transaction's revision, and the objects
// are read. Where the floor cannot cover the read it falls back to
// ReadPinned.
func (c *Committer) ReadFloored(ctx context.Context, lease clientv3.LeaseID, rs ...Range) ([][]byte, error) {
	if err := c.ensureFloor(ctx, lease); err != nil {
		return c.ReadPinned(ctx, lease, rs...)
	}
	var at *int64
	for try := 0; try < 2 && at == nil; try++ {
		rev, err := c.revalidate(ctx, lease, rs)
		if errors.Is(err, errNoFloor) {
			c.dropFloor(lease)
			break
		}
		if err != nil {
			return nil, err
		}
		at = c.register(lease, rev)
	}
	if at == nil {
		return c.ReadPinned(ctx, lease, rs...)
	}
	defer c.unregister(at)
	if c.afterFloorRegister != nil {
		c.afterFloorRegister()
	}
	return c.readRanges(ctx, rs)
}

// ensureFloor creates the node's floor record under lease if the node
// holds none under it: its value is a revision read before the write,
// and reads register only at or after the write's own revision.
func (c *Committer) ensureFloor(ctx context.Context, lease clientv3.LeaseID) error {
	f := &c.floor
	f.mu.Lock()
	ok := f.lease == lease && lease != 0
	f.mu.Unlock()
	if ok {
		return nil
	}
	f.advancing.Lock()
	defer f.advancing.Unlock()
	f.mu.Lock()
	ok = f.lease == lease && lease != 0
	f.mu.Unlock()
	switch {
	case ok:
		return nil
	case lease == 0:
		return errors.New("diskless: floor: no lease")
	}
	cur, err := c.cli.Get(ctx, c.floorKey(lease))
	if err != nil {
		return fmt.Errorf("diskless: floor: %w", err)
	}
	v := cur.Header.Revision
	resp, err := c.cli.Txn(ctx).Then(clientv3.OpPut(c.floorKey(lease), revString(v), clientv3.WithLease(lease))).Commit()
	if err != nil {
		return fmt.Errorf("diskless: floor: %w", err)
	}
	f.mu.Lock()
	f.lease, f.created, f.value = lease, resp.Header.Revision, v
	if f.reads == nil {
		f.reads = map[*int64]struct{}{}
	}
	f.mu.Unlock()
	return nil
}

// errNoFloor: the node's floor record under the lease it reads with is
// gone (the lease ended).
var errNoFloor = errors.New("diskless: no floor under the lease")

// revalidate checks, in read-only transactions (linearizable reads, no
// write), that each range's record is the one Log listed (pin
// revalidation) and that the node's floor record is under lease at the
// same revision (else errNoFloor), and returns the lowest revision they
// were read at.
func (c *Committer) revalidate(ctx context.Context, lease clientv3.LeaseID, rs []Range) (int64, error) {
	low := int64(0)
	for len(rs) > 0 {
		n := min(len(rs), c.opts.MaxTxnOps-1)
		gets := []clientv3.Op{clientv3.OpGet(c.floorKey(lease))}
		for _, r := range rs[:n] {
			if r.Rev == 0 {
				return 0, fmt.Errorf("diskless: %s [%d, %d): read of a range Log did not list", r.PKey, r.Base, r.End)
			}
			gets = append(gets, clientv3.OpGet(c.rangeKey(r.PKey, r.Record), clientv3.WithKeysOnly()))
		}
		c.counts.etcdReads.Add(1)
		resp, err := c.cli.Client.Txn(ctx).Then(gets...).Commit()
		if err != nil {
			return 0, fmt.Errorf("diskless: revalidate: %w", err)
		}
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) == 0 || clientv3.LeaseID(kvs[0].Lease) != lease {
			return 0, errNoFloor
		}
		for i, r := range rs[:n] {
			kvs := resp.Responses[1+i].GetResponseRange().Kvs
			if len(kvs) == 0 || kvs[0].ModRevision != r.Rev {
				return 0, fmt.Errorf("%w: %s: range [%d, %d)", ErrStale, r.PKey, r.Base, r.End)
			}
		}
		if low == 0 || resp.Header.Revision < low {
			low = resp.Header.Revision
		}
		rs = rs[n:]
	}
	return low, nil
}

// register records a read revalidated at rev under the floor of lease,
// or returns nil when the floor does not cover it: another lease, or a
// revision below the record's creation or below a value written.
func (c *Committer) register(lease clientv3.LeaseID, rev int64) *int64 {
	f := &c.floor
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lease != lease || rev < f.created || rev < f.value {
		return nil
	}
	at := new(int64)
	*at = rev
	f.reads[at] = struct{}{}
	return at
}

// dropFloor forgets the floor under lease: the record is gone, the next
// floored read creates one.
func (c *Committer) dropFloor(lease clientv3.LeaseID) {
	c.floor.mu.Lock()
	if c.floor.lease == lease {
		c.floor.lease = 0
	}
	c.floor.mu.Unlock()
}

func (c *Committer) unregister(at *int64) {
	c.floor.mu.Lock()
	delete(c.floor.reads, at)
	c.floor.mu.Unlock()
}

// AdvanceFloor moves the node's floor under lease up to the lowest
// revision of its reads in flight, or to the store's current revision
// when none is: one record write when it moves, none otherwise or when
// the node holds no floor under lease. Collection waits for it: an
// object unreferenced since the floor's value is not deleted.
func (c *Committer) AdvanceFloor(ctx context.Context, lease clientv3.LeaseID) error {
	f := &c.floor
	f.advancing.Lock()
	defer f.advancing.Unlock()
	f.mu.Lock()
	held := f.lease == lease && lease != 0
	f.mu.Unlock()
	if !held {
		return nil
	}
	cur, err := c.cli.Get(ctx, c.floorKey(lease), clientv3.WithKeysOnly())
	if err != nil {
		return fmt.Errorf("diskless: floor: %w", err)
	}
	f.mu.Lock()
	target := cur.Header.Revision
	for at := range f.reads {
		target = min(target, *at)
	}
	if f.lease != lease || target <= f.value {
		f.mu.Unlock()
		return nil
	}
	// From now on a read registers only at target or above, whether or
	// not the write below lands.
	f.value = target
	f.mu.Unlock()
	if len(cur.Kvs) == 0 {
		// The record went with its lease: nothing to move.
		return nil
	}
	_, err = c.cli.Txn(ctx).If(clientv3.Compare(clientv3.LeaseValue(c.floorKey(lease)), "=", lease)).
		Then(clientv3.OpPut(c.floorKey(lease), revString(target), clientv3.WithLease(lease))).Commit()
	if err != nil {
		return fmt.Errorf("diskless: floor: %w", err)
	}
	return nil
}

// floors reads every node's floor (floored reads) and returns the lowest, and whether
// there is any. An unreadable one counts as 0: it holds everything back.
func (c *Committer) floors(ctx context.Context) (lowest int64, any bool, err error) {
	resp, err := c.cli.Get(ctx, c.prefix+floorDir, clientv3.WithPrefix())
	if err != nil {
		return 0, false, fmt.Errorf("diskless: collect: floors: %w", err)
	}
	for i, kv := range resp.Kvs {
		v, err := strconv.ParseInt(string(kv.Value), 10, 64)
		if err != nil {
			v = 0
		}
		if i == 0 || v < lowest {
			lowest = v
		}
	}
	return lowest, len(resp.Kvs) > 0, nil
}

// revString is a revision as a floor record holds it: 20 digits.
func revString(rev int64) string { return fmt.Sprintf("%020d", rev) }

// readRanges reads rs, several objects at a time, in rs's order; any
// error fails the whole read.
func (c *Committer) readRanges(ctx context.Context, rs []Range) ([][]byte, error) {
	out := make([][]byte, len(rs))
	errs := make([]error, len(rs))
	sem := make(chan struct{}, readersPerPin)
	var wg sync.WaitGroup
	for i, r := range rs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = c.ReadRange(ctx, r)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

package diskless

import (
	"context"
	"crypto/rand"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Reader pins (pinned objects kept, pin revalidation): a reader of a published range puts a pin record
// on the range's object, attached to a lease of its own (a node's session
// lease), and only then checks that the range record it listed is
// unchanged. Collect deletes an object's record only in a transaction
// that requires no pin on it.

// pinPrefix is the prefix of object's pin records. NUL cannot be in an
// object name, so no object's prefix is another's.
func (c *Committer) pinPrefix(object string) string { return c.prefix + "pin/" + object + "\x00" }

// noPin is the comparison that holds when object has no pin (pinned objects kept): a
// comparison over a key range holds for every key in it, and for a
// range with no key it compares a missing key, whose create revision is
// 0.
func (c *Committer) noPin(object string) clientv3.Cmp {
	p := c.pinPrefix(object)
	return clientv3.Compare(clientv3.CreateRevision(p), "=", 0).WithPrefix()
}

// Pin pins the objects of rs under lease (pinned objects kept) and revalidates rs (pin revalidation),
// in one transaction per MaxTxnOps ranges: each range must be one Log
// listed, its record unchanged since, or nothing of the transaction is
// written. It returns the function that removes the pins. A range whose
// record changed (a Merge replaced it, a trim removed it) is ErrStale,
// with no pin left: list again. While the pins hold, Collect deletes
// none of the objects, whatever happens to the ranges; a pinner that
// dies leaves its pins until its lease expires.
func (c *Committer) Pin(ctx context.Context, lease clientv3.LeaseID, rs ...Range) (unpin func(context.Context) error, err error) {
	var keys []string
	unpin = func(ctx context.Context) error {
		for len(keys) > 0 {
			n := min(len(keys), c.opts.MaxTxnOps)
			var ops []clientv3.Op
			for _, k := range keys[:n] {
				ops = append(ops, clientv3.OpDelete(k))
			}
			if _, err := c.cli.Txn(ctx).Then(ops...).Commit(); err != nil {
				return fmt.Errorf("diskless: unpin: %w", err)
			}
			keys = keys[n:]
		}
		return nil
	}
	for len(rs) > 0 {
		n := min(len(rs), c.opts.MaxTxnOps)
		cmps, puts, err := c.pinOps(lease, rs[:n], &keys)
		if err == nil {
			err = c.pinTxn(ctx, cmps, puts, rs[:n])
		}
		if err != nil {
			// An outcome unknown may have written the pins: remove them.
			return nil, joinUnpin(err, unpin(ctx))
		}
		rs = rs[n:]
	}
	return unpin, nil
}

// pinOps are the comparisons that revalidate rs and the puts of one pin
// per object they name, whose keys are added to keys.
func (c *Committer) pinOps(lease clientv3.LeaseID, rs []Range, keys *[]string) ([]clientv3.Cmp, []clientv3.Op, error) {
	var cmps []clientv3.Cmp
	var puts []clientv3.Op
	seen := map[string]bool{}
	for _, r := range rs {
		if r.Rev == 0 {
			return nil, nil, fmt.Errorf("diskless: %s [%d, %d): pin of a range Log did not list", r.PKey, r.Base, r.End)
		}
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(c.rangeKey(r.PKey, r.Record)), "=", r.Rev))
		if !seen[r.Object] {
			seen[r.Object] = true
			k := c.pinPrefix(r.Object) + rand.Text()
			*keys = append(*keys, k)
			puts = append(puts, clientv3.OpPut(k, r.PKey, clientv3.WithLease(lease)))
		}
	}
	return cmps, puts, nil
}

// pinTxn writes the pins if every range is unchanged, in one
// transaction: the pins and the records read are of one revision. If a
// Collect deleted an object's record before it, the object had no
// reference then and never has one again (reference-counted collection): a range naming it
// changed, and nothing is written. If after, it saw the pin (pinned objects kept).
func (c *Committer) pinTxn(ctx context.Context, cmps []clientv3.Cmp, puts []clientv3.Op, rs []Range) error {
	resp, err := c.cli.Txn(ctx).If(cmps...).Then(puts...).Commit()
	if err != nil {
		return fmt.Errorf("diskless: pin: %w", err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("%w: %s: a range of [%d, %d)", ErrStale, rs[0].PKey, rs[0].Base, rs[len(rs)-1].End)
	}
	return nil
}

func joinUnpin(err, unpinErr error) error {
	if unpinErr != nil {
		return fmt.Errorf("%w (and %v)", err, unpinErr)
	}
	return err
}

// readersPerPin bounds the object reads of one ReadPinned at once.
const readersPerPin = 8

// ReadPinned reads rs (ReadRange, checked range reads) under pins taken with Pin (pinned objects kept,
// pin revalidation), removed before it returns, several objects at a time. The bytes
// come back in rs's order; any error fails the whole read.
func (c *Committer) ReadPinned(ctx context.Context, lease clientv3.LeaseID, rs ...Range) ([][]byte, error) {
	unpin, err := c.Pin(ctx, lease, rs...)
	if err != nil {
		return nil, err
	}
	// The pins go with the lease if this fails: the read is done either
	// way.
	defer func() { _ = unpin(context.WithoutCancel(ctx)) }()
	return c.readRanges(ctx, rs)
}

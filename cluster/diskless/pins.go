package diskless

import (
	"context"
	"crypto/rand"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Reader pins (U7, U8): a reader of a published range puts a pin record
// on the range's object, attached to a lease of its own (a node's session
// lease), and only then checks that the range record it listed is
// unchanged. Collect deletes an object's record only in a transaction
// that requires no pin on it.

// pinPrefix is the prefix of object's pin records. NUL cannot be in an
// object name, so no object's prefix is another's.
func (c *Committer) pinPrefix(object string) string { return c.prefix + "pin/" + object + "\x00" }

// noPin is the comparison that holds when object has no pin (U7): a
// comparison over a key range holds for every key in it, and for a
// range with no key it compares a missing key, whose create revision is
// 0.
func (c *Committer) noPin(object string) clientv3.Cmp {
	p := c.pinPrefix(object)
	return clientv3.Compare(clientv3.CreateRevision(p), "=", 0).WithPrefix()
}

// Pin pins r's object under lease (U7), then revalidates r (U8): r must
// be a range Log listed, its record still unchanged. It returns the
// function that removes the pin. A range whose record changed since (a
// Merge replaced it, a trim removed it) is ErrStale, with no pin left:
// list again. While the pin holds, Collect does not delete the object,
// whatever happens to the ranges; a pinner that dies leaves its pin
// until its lease expires.
func (c *Committer) Pin(ctx context.Context, lease clientv3.LeaseID, r Range) (unpin func(context.Context) error, err error) {
	if r.Rev == 0 {
		return nil, fmt.Errorf("diskless: %s [%d, %d): pin of a range Log did not list", r.PKey, r.Base, r.End)
	}
	key := c.pinPrefix(r.Object) + rand.Text()
	if _, err := c.cli.Put(ctx, key, r.PKey, clientv3.WithLease(lease)); err != nil {
		return nil, fmt.Errorf("diskless: pin %s: %w", r.Object, err)
	}
	unpin = func(ctx context.Context) error {
		if _, err := c.cli.Delete(ctx, key); err != nil {
			return fmt.Errorf("diskless: unpin %s: %w", r.Object, err)
		}
		return nil
	}
	// The pin is durable before the record is read again: if the record
	// is unchanged now, the object was referenced after the pin existed,
	// so no Collect can have deleted its record (a count never rises from
	// 0, U5) and none will while the pin holds.
	resp, err := c.cli.Get(ctx, c.rangeKey(r.PKey, r.Base))
	if err == nil && (len(resp.Kvs) == 0 || resp.Kvs[0].ModRevision != r.Rev) {
		err = fmt.Errorf("%w: %s [%d, %d) in %s", ErrStale, r.PKey, r.Base, r.End, r.Object)
	}
	if err != nil {
		return nil, fmt.Errorf("diskless: revalidate: %w", joinUnpin(err, unpin(ctx)))
	}
	return unpin, nil
}

func joinUnpin(err, unpinErr error) error {
	if unpinErr != nil {
		return fmt.Errorf("%w (and %v)", err, unpinErr)
	}
	return err
}

// ReadPinned reads r (ReadRange, U6) under a pin taken with Pin (U7,
// U8), removed before it returns.
func (c *Committer) ReadPinned(ctx context.Context, lease clientv3.LeaseID, r Range) ([]byte, error) {
	unpin, err := c.Pin(ctx, lease, r)
	if err != nil {
		return nil, err
	}
	data, err := c.ReadRange(ctx, r)
	// The bytes are read and checked: a pin that fails to go goes with
	// its lease.
	_ = unpin(context.WithoutCancel(ctx))
	return data, err
}

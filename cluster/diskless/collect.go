package diskless

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// Collect deletes the objects no range references (reference-counted collection): those whose
// record counts no reference (the record goes first, in a transaction
// that requires it unchanged, then the object), and orphans, objects with
// no record older than Options.OrphanAge (a writer died between its PUT
// and its transaction): a tombstone record is created first, in a
// transaction that requires no record, so the writer can never publish
// the object afterwards; tombstones go after another OrphanAge. It
// returns how many objects it deleted.
func (c *Committer) Collect(ctx context.Context) (deleted int, err error) {
	now := c.opts.Now()
	resp, err := c.cli.Get(ctx, c.objPrefix(), clientv3.WithPrefix())
	if err != nil {
		return 0, fmt.Errorf("diskless: collect: %w", err)
	}
	left := 0
	defer func() {
		c.backlog.mu.Lock()
		c.backlog.collect = left
		c.backlog.mu.Unlock()
	}()
	// Read after the records (floored reads): every floor made later
	// covers only reads that see these records' counts.
	lowest, floored, err := c.floors(ctx)
	if err != nil {
		return 0, err
	}
	known := make(map[string]bool, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		name := strings.TrimPrefix(string(kv.Key), c.objPrefix())
		known[name] = true
		st, err := decodeObj(string(kv.Key), kv.Value, kv.ModRevision)
		if err != nil {
			return deleted, err
		}
		switch {
		case st.Dead != 0:
			if now.Sub(time.Unix(0, st.Dead)) < c.opts.OrphanAge {
				left++
				continue
			}
			// The object went with the tombstone's creation, or a crash
			// left it: make sure, then drop the tombstone.
			if err := c.deleteObject(ctx, name); err != nil {
				return deleted, err
			}
			if _, err := c.deleteRecord(ctx, name, st.rev); err != nil {
				return deleted, err
			}
		case st.Refs == 0:
			if floored && lowest < st.rev {
				// A node may be reading it: its floor is below the
				// revision the count fell to 0 at (floored reads).
				left++
				continue
			}
			ok, err := c.deleteRecord(ctx, name, st.rev)
			if err != nil {
				return deleted, err
			}
			if !ok {
				left++
				continue // pinned (pinned objects kept), or changed meanwhile
			}
			if err := c.deleteObject(ctx, name); err != nil {
				return deleted, err // an orphan now: a later Collect takes it
			}
			deleted++
		}
	}
	for _, dir := range []string{commitsDir, mergedDir, stateDir} {
		n, err := c.collectOrphans(ctx, dir, known, now)
		deleted += n
		if err != nil {
			return deleted, err
		}
	}
	return deleted, nil
}

// collectOrphans deletes the objects under dir that have no record and
// are older than OrphanAge.
func (c *Committer) collectOrphans(ctx context.Context, dir string, known map[string]bool, now time.Time) (deleted int, err error) {
	it := c.bucket.List(&blob.ListOptions{Prefix: dir})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			return deleted, nil
		}
		if gcerrors.Code(err) == gcerrors.NotFound {
			// Something listed vanished meanwhile (a commit's temporary
			// file, renamed into place): orphans wait for the next pass.
			return deleted, nil
		}
		if err != nil {
			return deleted, fmt.Errorf("diskless: collect: list %s: %w", dir, err)
		}
		if known[obj.Key] || now.Sub(obj.ModTime) < c.opts.OrphanAge {
			continue
		}
		k := c.objKey(obj.Key)
		resp, err := c.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(k), "=", 0)).
			Then(clientv3.OpPut(k, encodeObj(objRecord{Dead: now.UnixNano()}))).
			Commit()
		if err != nil {
			return deleted, fmt.Errorf("diskless: collect: condemn %s: %w", obj.Key, err)
		}
		if !resp.Succeeded {
			continue // published since the records were read
		}
		if err := c.deleteObject(ctx, obj.Key); err != nil {
			return deleted, err
		}
		deleted++
	}
}

// deleteRecord deletes an object's record if its mod revision is rev
// and no reader pins the object (pinned objects kept).
func (c *Committer) deleteRecord(ctx context.Context, name string, rev int64) (bool, error) {
	k := c.objKey(name)
	resp, err := c.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(k), "=", rev), c.noPin(name)).Then(clientv3.OpDelete(k)).Commit()
	if err != nil {
		return false, fmt.Errorf("diskless: collect: record of %s: %w", name, err)
	}
	return resp.Succeeded, nil
}

func (c *Committer) deleteObject(ctx context.Context, name string) error {
	if err := c.bucket.Delete(ctx, name); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return fmt.Errorf("diskless: collect: delete %s: %w", name, err)
	}
	return nil
}

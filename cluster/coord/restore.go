package coord

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// restorePage is how many keys Restore reads per etcd request.
const restorePage = 1000

// Restore creates a pebble store at dir holding exactly the keys mirrored
// under prefix, as of one etcd revision (restore at one revision); offsets.Open opens it. dir
// must be absent or empty. The store is built in dir + ".restore" and
// renamed into place once complete, so dir never holds half of it.
func Restore(ctx context.Context, cli *clientv3.Client, prefix, dir string) error {
	if err := checkEmpty(dir); err != nil {
		return err
	}
	tmp := dir + ".restore"
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("coord: restore: %w", err)
	}
	db, err := pebble.Open(tmp, &pebble.Options{Logger: quiet{}})
	if err != nil {
		return fmt.Errorf("coord: restore: %w", err)
	}
	err = restoreInto(ctx, cli, prefix, db)
	if err == nil {
		err = db.Flush()
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("coord: restore: %w", err)
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("coord: restore: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("coord: restore: %w", err)
	}
	return syncDir(filepath.Dir(dir))
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("coord: restore: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("coord: restore: %w", err)
	}
	return nil
}

func checkEmpty(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("coord: restore: %w", err)
	}
	if len(ents) > 0 {
		return fmt.Errorf("coord: restore: %s is not empty", dir)
	}
	return nil
}

// restoreInto copies kv/ into db, then applies a pending batch over it
// (whole mirrored batches), all read at the revision of the first read.
func restoreInto(ctx context.Context, cli *clientv3.Client, prefix string, db *pebble.DB) error {
	resp, err := cli.Get(ctx, prefix+"kvpending")
	if err != nil {
		return err
	}
	rev := resp.Header.Revision
	if err := copyKV(ctx, cli, prefix, db, rev); err != nil {
		return err
	}
	if len(resp.Kvs) == 0 {
		return nil
	}
	id, n, err := parsePending(string(resp.Kvs[0].Value))
	if err != nil {
		return err
	}
	repr, err := readChunks(ctx, cli, prefix, id, n, rev)
	if err != nil {
		return err
	}
	b := db.NewBatch()
	defer b.Close()
	if err := b.SetRepr(repr); err != nil {
		return fmt.Errorf("batch %s: %w", id, err)
	}
	return db.Apply(b, pebble.NoSync)
}

// copyKV copies every kv/ key at rev into db, a page at a time.
func copyKV(ctx context.Context, cli *clientv3.Client, prefix string, db *pebble.DB, rev int64) error {
	dir := prefix + "kv/"
	from, end := dir, clientv3.GetPrefixRangeEnd(dir)
	for {
		resp, err := cli.Get(ctx, from, clientv3.WithRange(end), clientv3.WithRev(rev), clientv3.WithLimit(restorePage))
		if err != nil {
			return err
		}
		b := db.NewBatch()
		for _, kv := range resp.Kvs {
			k, err := hex.DecodeString(strings.TrimPrefix(string(kv.Key), dir))
			if err == nil {
				err = b.Set(k, kv.Value, nil)
			}
			if err != nil {
				b.Close()
				return fmt.Errorf("key %q: %w", kv.Key, err)
			}
		}
		err = db.Apply(b, pebble.NoSync)
		b.Close()
		if err != nil {
			return err
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// quiet drops pebble's routine messages.
type quiet struct{}

func (quiet) Infof(string, ...any)  {}
func (quiet) Errorf(string, ...any) {}
func (quiet) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}

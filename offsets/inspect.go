package offsets

import (
	"fmt"
	"io"
	"os"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"go.uber.org/zap"
)

// OpenReadOnly opens the offset store in dir for inspection (`kgateway
// inspect`): pebble read-only, without its directory lock, so it works
// beside a running server (a read-only open writes nothing). Groups and
// GroupOffsets work on it; every write fails. It sees the state as of the
// open: commits are synced (O1), so every acknowledged commit is there.
func OpenReadOnly(dir string) (*Store, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("offsets: open %s: %w", dir, err)
	}
	opts := Options{Logger: zap.NewNop()}
	opts.setDefaults()
	var err error
	for range 5 { // a concurrent compaction can delete a file mid-open
		var db *pebble.DB
		db, err = pebble.Open(dir, &pebble.Options{FS: noLockFS{vfs.Default}, ReadOnly: true,
			Logger: pebbleLogger{opts.Logger.Sugar()}})
		if err == nil {
			return &Store{db: db, opts: opts}, nil
		}
	}
	return nil, fmt.Errorf("offsets: open %s read-only: %w", dir, err)
}

// noLockFS skips pebble's directory lock (held by the running server).
type noLockFS struct{ vfs.FS }

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

func (noLockFS) Lock(string) (io.Closer, error) { return nopCloser{}, nil }

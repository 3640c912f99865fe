package token

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"

	"github.com/kgateway/kgateway/auth"
)

// StoreFile is the tokens' file in a data directory.
const StoreFile = "delegation-tokens.json"

// Doc is where the tokens are kept: one document, which a cluster's nodes
// share (cluster/authstore's Doc over one etcd key) or one process keeps
// in a file (OpenFile). Load is the latest version this process knows
// and must not wait on the network; Update replaces it by fn's result
// atomically, calling fn again on a conflict.
type Doc interface {
	Load() (doc []byte, version int64)
	Update(fn func(cur []byte) ([]byte, error)) error
}

// fileDoc is a Doc kept in a file that only this process writes: every
// update is written (temporary file, fsync, rename, fsync of the
// directory) before it is visible.
type fileDoc struct {
	dir string

	mu      sync.Mutex
	val     []byte
	version int64
}

// OpenFile returns the document of dir's StoreFile (none yet: empty).
func OpenFile(dir string) (Doc, error) {
	b, err := os.ReadFile(filepath.Join(dir, StoreFile))
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	return &fileDoc{dir: dir, val: b, version: 1}, nil
}

func (d *fileDoc) Load() ([]byte, int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.val, d.version
}

func (d *fileDoc) Update(fn func(cur []byte) ([]byte, error)) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	next, err := fn(d.val)
	if err != nil || bytes.Equal(next, d.val) {
		return err
	}
	if err := auth.WriteFileAtomic(d.dir, StoreFile, next); err != nil {
		return err
	}
	d.val = next
	d.version++
	return nil
}

// Package offsetstest gives tests above offsets/ a crashable file system
// for the offsets store's pebble, so they can check what survives a crash
// (O1, the durable classic membership) without importing pebble themselves.
package offsetstest

import (
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/kgateway/kgateway/offsets"
)

// Crashable is an in-memory file system that knows what has been synced.
type Crashable struct{ fs *vfs.MemFS }

// NewCrashable returns an empty crashable file system.
func NewCrashable() *Crashable { return &Crashable{fs: vfs.NewCrashableMem()} }

// Options returns opts with the store's pebble on c.
func (c *Crashable) Options(opts offsets.Options) offsets.Options {
	opts.PebbleFS = c.fs
	return opts
}

// Crash returns the image a machine crash would leave now: only what was
// synced. c itself goes on unchanged.
func (c *Crashable) Crash() *Crashable {
	return &Crashable{fs: c.fs.CrashClone(vfs.CrashCloneCfg{})}
}

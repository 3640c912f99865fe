// Package vfscount wraps a pebble file system and counts every call that
// changes it: a file created, opened for writing, reused, linked,
// removed or renamed, and every write, sync or preallocation of a file
// opened through it. Tests use it to show that a path writes nothing (a
// cursorless read creates no cursor and writes nothing) or that it
// writes where it should.
package vfscount

import (
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// FS is fs with every mutating call counted in N.
type FS struct {
	vfs.FS
	N *atomic.Int64
}

// New wraps fs, counting into n.
func New(fs vfs.FS, n *atomic.Int64) FS { return FS{FS: fs, N: n} }

func (c FS) Create(name string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	c.N.Add(1)
	return c.wrap(c.FS.Create(name, cat))
}

// OpenReadWrite counts an open for writing, of an existing file or not.
func (c FS) OpenReadWrite(name string, cat vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	c.N.Add(1)
	return c.wrap(c.FS.OpenReadWrite(name, cat, opts...))
}

func (c FS) ReuseForWrite(oldname, newname string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	c.N.Add(1)
	return c.wrap(c.FS.ReuseForWrite(oldname, newname, cat))
}

func (c FS) Link(oldname, newname string) error {
	c.N.Add(1)
	return c.FS.Link(oldname, newname)
}

func (c FS) Remove(name string) error {
	c.N.Add(1)
	return c.FS.Remove(name)
}

func (c FS) RemoveAll(name string) error {
	c.N.Add(1)
	return c.FS.RemoveAll(name)
}

func (c FS) Rename(oldname, newname string) error {
	c.N.Add(1)
	return c.FS.Rename(oldname, newname)
}

func (c FS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return file{File: f, n: c.N}, nil
}

// file counts the writes, syncs and preallocations of one file.
type file struct {
	vfs.File
	n *atomic.Int64
}

func (f file) Write(p []byte) (int, error) {
	f.n.Add(1)
	return f.File.Write(p)
}

func (f file) WriteAt(p []byte, off int64) (int, error) {
	f.n.Add(1)
	return f.File.WriteAt(p, off)
}

func (f file) Sync() error {
	f.n.Add(1)
	return f.File.Sync()
}

func (f file) SyncData() error {
	f.n.Add(1)
	return f.File.SyncData()
}

func (f file) SyncTo(length int64) (bool, error) {
	f.n.Add(1)
	return f.File.SyncTo(length)
}

func (f file) Preallocate(off, n int64) error {
	f.n.Add(1)
	return f.File.Preallocate(off, n)
}

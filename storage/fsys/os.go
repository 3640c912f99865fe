package fsys

import (
	"os"
	"sort"
	"syscall"
)

// osFS is the FS over the operating system's files.
type osFS struct{}

// OS returns the FS over the operating system's files (the store's
// default).
func OS() FS { return osFS{} }

func (osFS) OpenFile(name string, flag int, perm uint32) (File, error) {
	f, err := os.OpenFile(name, flag, os.FileMode(perm))
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) Remove(name string) error { return os.Remove(name) }

func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

func (osFS) MkdirAll(name string, perm uint32) error { return os.MkdirAll(name, os.FileMode(perm)) }

func (osFS) ReadDir(name string) ([]string, error) {
	ents, err := os.ReadDir(name)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names, nil
}

// SyncDir makes created and removed directory entries durable.
func (osFS) SyncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

type osFile struct{ f *os.File }

func (o osFile) WriteAt(p []byte, off int64) (int, error) { return o.f.WriteAt(p, off) }
func (o osFile) ReadAt(p []byte, off int64) (int, error)  { return o.f.ReadAt(p, off) }
func (o osFile) Truncate(size int64) error                { return o.f.Truncate(size) }
func (o osFile) Close() error                             { return o.f.Close() }

// Sync is fdatasync: the segment's size changes are data for it, so
// fdatasync covers appends (and avoids the mtime metadata write).
func (o osFile) Sync() error {
	for {
		err := syscall.Fdatasync(int(o.f.Fd()))
		if err != syscall.EINTR {
			if err != nil {
				return &os.PathError{Op: "fdatasync", Path: o.f.Name(), Err: err}
			}
			return nil
		}
	}
}

func (o osFile) Size() (int64, error) {
	st, err := o.f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// OSFile is the operating system's file under f, nil when f is not one
// (a MemFS file in tests). Zero-copy reads (storage Lease) send its bytes
// to a socket with sendfile; its offset is never used or moved (the reads
// pass explicit offsets), so sharing it is safe.
func OSFile(f File) *os.File {
	if o, ok := f.(osFile); ok {
		return o.f
	}
	return nil
}

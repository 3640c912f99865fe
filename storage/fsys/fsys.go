// Package fsys is the file layer under the store's segment files: the FS
// and File interfaces storage writes through, the operating system's
// implementation (OS), and the optional Stepper hook. Test file systems
// that simulate crashes and inject faults live in storage/vfstest, outside
// the production API (as pebble keeps vfs/errorfs apart from vfs).
package fsys

// FS is the file layer under segment files. Tests replace it to inject
// faults (lose unsynced writes, tear a write, fail a sync, ENOSPC).
type FS interface {
	OpenFile(name string, flag int, perm uint32) (File, error)
	Remove(name string) error
	// MkdirAll creates a directory and its missing parents. A created
	// directory's entry is durable only once its parent is synced
	// (MkdirAllSync does both).
	MkdirAll(name string, perm uint32) error
	ReadDir(name string) ([]string, error)
	// SyncDir makes the directory's entries (files and directories created,
	// removed or renamed in it) durable.
	SyncDir(name string) error
	// Rename gives a file a new name in the same directory, replacing any
	// file of that name. Like a creation or a removal, it is durable once
	// the directory is synced.
	Rename(oldname, newname string) error
}

// File is one open segment file.
type File interface {
	WriteAt(p []byte, off int64) (int, error)
	ReadAt(p []byte, off int64) (int, error)
	Sync() error // fdatasync where the OS has it
	Truncate(size int64) error
	Size() (int64, error)
	Close() error
}

// VectorWriter is an optional interface of a File: WriteAtv writes bufs
// one after another from off, as one WriteAt of their concatenation
// would (n is how many bytes of it were written; an error when fewer
// than all), in one system call where it can (pwritev(2)). The store
// writes an entry's frame header and payload with it: one call, and one
// pass through the file system's write path, instead of two.
type VectorWriter interface {
	WriteAtv(bufs [][]byte, off int64) (n int, err error)
}

// Allocator is an optional interface of a File: Allocate gives the file
// disk blocks for [off, off+n) without changing its size
// (fallocate(2) with FALLOC_FL_KEEP_SIZE), so that later writes there
// find their blocks allocated instead of reserving them one by one; the
// bytes past the size stay unreadable. A Truncate to the size frees the
// blocks allocated past it. Where the file system cannot, it fails
// (EOPNOTSUPP) and the writes allocate as they would have.
type Allocator interface {
	Allocate(off, n int64) error
}

// Step names a point of the store's group commit (storage doc.go "Group
// commit"), in the order a group passes them.
type Step uint8

const (
	// StepWritten: the group's frames are written (page cache only); none
	// of its files is synced yet.
	StepWritten Step = iota + 1
	// StepSynced: its files are fdatasync'd; its index batch is not
	// committed yet.
	StepSynced
	// StepIndexed: its index batch is committed; its durable ends are not
	// published and no waiter is woken.
	StepIndexed
	// StepPublished: its durable ends are published and its waiters woken.
	StepPublished
)

func (s Step) String() string {
	switch s {
	case StepWritten:
		return "written"
	case StepSynced:
		return "synced"
	case StepIndexed:
		return "indexed"
	case StepPublished:
		return "published"
	}
	return "step?"
}

// Stepper is an optional interface of an FS: the store's committer calls
// Step at each point of every group commit and continues when it returns.
// Crash tests use it to stop the machine at a chosen step (vfstest); the
// OS file system does not implement it, and it must not fail or write.
type Stepper interface {
	Step(Step)
}

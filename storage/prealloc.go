package storage

import (
	"errors"
	"syscall"

	"github.com/kgateway/kgateway/storage/fsys"
)

// Blocks allocated ahead of the writes. A write past the end of a file
// makes ext4 reserve a block for each 4 KiB page it dirties (delayed
// allocation) and a write into blocks the file already has does not:
// that reservation was a tenth of the produce path's CPU
// (BENCHMARKS.md, "Produce path: frames back before the fsync"). So
// before a write reaches past what is allocated, the open ledger's file
// is given the blocks of the write and of a stretch after it with
// fallocate(FALLOC_FL_KEEP_SIZE), in one call.
//
// Its size does not change: recovery reads a file up to its size
// (recover.go) and the index says where entries are, so blocks past the
// size hold nothing anybody reads, before a crash or after. The stretch
// is bounded, and grows with the ledger (its size, at least
// allocAheadMin, at most allocAheadMax): a thousand partitions that each
// write a little reserve little, never a segment's worth each.
//
// The blocks past the size are freed when the ledger stops being the
// open one (Roll) and when the store closes, by a truncate to its size:
// a sealed file never grows again, and its allocated tail would be disk
// held for nothing until the file is trimmed. The truncate is not
// synced: a crash before it lands leaves the tail allocated, wasted disk
// but no byte anybody reads, until the file is removed (or, for the open
// ledger, until its next Roll).
//
// A failed allocation never fails the write: without the blocks the
// write allocates as it always did, and fails for lack of space (I7)
// only if it really finds none. An allocation refused for lack of space
// is taken as a full disk's warning, as a refused write is
// (Store.outOfSpace: spares are dropped, no more allocating ahead until
// the store is reopened); one refused for another reason (no fallocate
// here) turns allocating ahead off.
const (
	allocAheadMin = 256 << 10
	allocAheadMax = 4 << 20
)

// allocAhead allocates the open ledger's blocks for a frame of n payload
// bytes at its end and a stretch after it, unless they already are.
// Needs appendMu.
func (s *Store) allocAhead(l *logState, n int) {
	end := l.w.pos + frameHeaderLen + int64(n)
	if end <= l.w.alloc || s.lowSpace.Load() || s.noAlloc.Load() {
		return
	}
	a, ok := l.w.file.(fsys.Allocator)
	if !ok {
		return
	}
	from := max(l.w.alloc, l.w.pos)
	to := end + min(max(l.w.pos, allocAheadMin), allocAheadMax)
	if err := a.Allocate(from, to-from); err != nil {
		if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
			s.outOfSpace()
		} else {
			s.noAlloc.Store(true)
		}
		return
	}
	l.w.alloc = to
}

// startAlloc sets how far the open ledger's new file has its blocks:
// none for a new file; a reused one (I8) up to its size (a spare is a
// trimmed ledger's file, written throughout), so that nothing is
// allocated, and no allocation needs a journal commit at the next
// fdatasync, while the writes go over the spare's own blocks. Needs
// appendMu.
func (l *logState) startAlloc() {
	l.w.alloc = 0
	if !l.w.reused {
		return
	}
	if size, err := l.w.file.Size(); err == nil {
		l.w.alloc = size
	}
}

// freeAllocated frees the blocks allocated past the open ledger's last
// entry by cutting its file there (with the torn tail a full disk may
// have left, I7). It is not synced (see above), and a failure to cut
// costs disk, not data: it is ignored. Needs appendMu (or the store
// closed).
func (l *logState) freeAllocated() {
	if l.w.file == nil || l.w.alloc <= l.w.pos {
		return
	}
	_ = l.w.file.Truncate(l.w.pos)
	l.w.alloc = 0
}

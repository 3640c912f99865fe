package storage

import (
	"errors"
	"fmt"
	"math"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/kgateway/kgateway/storage/fsys"
)

// Append writes payload as one entry of records records at the log's next
// offset and returns once the entry is durable (D1). It is Write + Wait.
func (s *Store) Append(id LogID, records int, payload []byte, opts AppendOptions) (EntryHeader, error) {
	p, err := s.Write(id, records, payload, opts)
	if err != nil {
		return EntryHeader{}, err
	}
	if err := p.Wait(); err != nil {
		return EntryHeader{}, err
	}
	return p.hdr, nil
}

// Write assigns the entry its offset and writes its bytes, without waiting
// for durability. Offsets are dense and in Write order (D3). The caller must
// not report the entry as acknowledged before Wait returns nil. The store
// does not retain payload after Write returns, unless opts.Retain or, until
// the entry is answered, when it hands it to Options.Replicator (I10) or
// may journal it (Options.JournalBytes, I15): then Pending.HoldsPayload
// says so, and the caller must not modify payload before Wait returns.
func (s *Store) Write(id LogID, records int, payload []byte, opts AppendOptions) (*Pending, error) {
	if records <= 0 || records > math.MaxInt32 || len(payload) > maxPayload {
		return nil, fmt.Errorf("%w: %d records, %d bytes", ErrInvalid, records, len(payload))
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.closeMu.RUnlock()
	l, err := s.getLog(id)
	if err != nil {
		return nil, err
	}
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	l.mu.Lock()
	err = l.checkWritableLocked()
	l.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if l.w.file == nil {
		if err := s.materializeLocked(l); err != nil {
			return nil, err
		}
	}
	base := l.w.next
	maxTime := opts.MaxTime
	if opts.Stamp != nil {
		maxTime = opts.Stamp(payload, base)
	}
	step := s.c.burstStep(l, len(payload))
	s.allocAhead(l, len(payload))
	if err := l.writeFrame(&l.w.hdr, base, int32(records), maxTime, payload, suffixCRC{opts.SuffixFrom, opts.SuffixCRC}, step); err != nil {
		if errors.Is(err, ErrNoSpace) {
			s.outOfSpace()
		}
		return nil, err
	}
	p := &Pending{
		hdr: EntryHeader{
			Offset: base, Records: int32(records), MaxTime: maxTime, Size: int32(len(payload)),
			Cum: l.w.cum + int64(len(payload)), Ledger: l.w.ledger, Entry: l.w.entry, Pos: l.w.pos,
		},
		log: l, file: l.w.file, noReplicate: opts.NoReplicate, done: make(chan struct{}),
	}
	frame := l.w.hdr
	if s.opts.Replicator != nil && !opts.NoReplicate {
		p.payload, p.holds = payload, true // for Replicate (I10), until p is answered
	} else if s.j != nil {
		// For the journal (I15), until p is answered; let go in enqueue
		// when p goes to the bulk lane, whose groups are not journaled.
		p.payload, p.frame, p.holds = payload, frame, true
	}
	if !l.w.hasMax || maxTime > l.w.runMax {
		l.w.runMax, l.w.hasMax = maxTime, true
		if timeKeyDue(l.w.keyed, l.w.keyAt, base) {
			l.w.keyed, l.w.keyAt = true, base
			p.timeKey, p.runMax = true, maxTime
		}
	}
	l.w.next += Offset(records)
	l.w.entry++
	l.w.pos += frameHeaderLen + int64(len(payload))
	l.w.cum += int64(len(payload))
	l.w.last = p
	if opts.Retain {
		s.tail.add(l, p.hdr, payload, opts.Backing) // C1: served only once durable
	} else if s.tail.limit > 0 {
		// The cache would no longer reach the newest entry (C2).
		s.tail.drop(l)
	}
	s.c.enqueue(p)
	return p, nil
}

// writeFrame writes one framed entry at the end of the open ledger, its
// header as encoded into hdr. A
// failed write fails the log (the file may hold part of the frame now),
// except for a full disk (I7). With step > 0 the payload is written step
// bytes at a time, and the file synced after each step but the last,
// before the next is written (doc.go "Burst steps"); a failed sync fails
// the log. Needs appendMu.
func (l *logState) writeFrame(hdr *[frameHeaderLen]byte, off Offset, records int32, maxTime int64, payload []byte, known suffixCRC, step int) error {
	if l.w.dirty {
		if err := l.w.file.Truncate(l.w.pos); err != nil {
			return l.writeFailed(err)
		}
		l.w.dirty, l.w.alloc = false, 0 // the cut freed the blocks ahead
	}
	encodeFrameHeader(hdr[:], off, records, maxTime, payload, known)
	if vw, ok := l.w.file.(fsys.VectorWriter); ok && (step == 0 || len(payload) <= step) {
		// Header and payload in one call (one pass through the file
		// system's write path). A failure is handled as below: nothing
		// past pos counts until the frame is whole (I4, I7).
		// The log's own vector (appendMu), emptied after: no allocation
		// per entry, and no payload kept past the write.
		l.w.iov = [2][]byte{hdr[:], payload}
		_, err := vw.WriteAtv(l.w.iov[:], l.w.pos)
		l.w.iov = [2][]byte{}
		if err != nil {
			return l.writeFailed(err)
		}
		return nil
	}
	_, err := l.w.file.WriteAt(hdr[:], l.w.pos)
	for done := 0; err == nil && done < len(payload); {
		n := len(payload) - done
		if step > 0 && n > step {
			n = step
		}
		_, err = l.w.file.WriteAt(payload[done:done+n], l.w.pos+frameHeaderLen+int64(done))
		if done += n; err == nil && done < len(payload) && step > 0 {
			if serr := l.w.file.Sync(); serr != nil {
				l.fail(serr)
				return fmt.Errorf("%w: %v: sync of a burst step: %w", ErrFailed, l.id, serr)
			}
		}
	}
	if err != nil {
		return l.writeFailed(err)
	}
	return nil
}

// writeFailed handles a failed write (or truncate) of the open ledger.
//
// I7: a write refused for lack of space (ENOSPC, EDQUOT) happened before
// any sync of its bytes, and write(2) reports exactly what it copied, so
// nothing is in doubt: the file is cut back to the last whole frame (pos;
// everything before it is untouched and its pending syncs proceed), the
// entry's offset is not used, and the log stays writable. If the cut
// itself fails for lack of space, the log is marked dirty and the cut is
// retried before the next write; until it succeeds every write is refused
// the same way. A crash meanwhile leaves at most a torn tail, which
// recovery truncates (I4). Any other write error fails the log.
func (l *logState) writeFailed(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		l.w.dirty = true
		if terr := l.w.file.Truncate(l.w.pos); terr == nil {
			l.w.dirty, l.w.alloc = false, 0 // and freed the blocks ahead
		} else if !errors.Is(terr, syscall.ENOSPC) && !errors.Is(terr, syscall.EDQUOT) {
			l.fail(terr)
			return fmt.Errorf("%w: %v: truncate after a full disk: %w", ErrFailed, l.id, terr)
		}
		return fmt.Errorf("%w: %v: write: %w", ErrNoSpace, l.id, err)
	}
	l.fail(err)
	return fmt.Errorf("%w: %v: write: %w", ErrFailed, l.id, err)
}

// Roll seals the log's open ledger and opens a new, empty one.
//
// I3 (doc.go): before the new ledger can receive an entry, the sealed
// ledger's final entry count and size are durable (a synced pebble batch,
// which also syncs every earlier NoSync index commit), so after a crash only
// the newest ledger can have an unindexed tail.
func (s *Store) Roll(id LogID) (LedgerID, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.closeMu.RUnlock()
	l, err := s.getLog(id)
	if err != nil {
		return 0, err
	}
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	if err := l.checkAlive(); err != nil {
		return 0, err
	}
	if err := l.drain(); err != nil {
		return 0, err
	}
	// I8: a reused file is cut to the sealed size, durably, before the
	// record saying it is sealed.
	if err := l.cutReused(); err != nil {
		return 0, err
	}
	// The sealed ledger's file never grows again: its blocks allocated
	// ahead are freed (prealloc.go).
	l.freeAllocated()
	s.ledgerMu.Lock()
	defer s.ledgerMu.Unlock()
	led := s.nextLedger
	f, reused, err := s.openLedgerFile(l, led, false)
	if err != nil {
		return 0, err
	}
	l.mu.Lock()
	sealed := l.openLedgerLocked().meta
	l.mu.Unlock()
	sealed.Sealed, sealed.Entries, sealed.Bytes = true, int64(l.w.entry), l.w.pos
	fresh := ledgerMeta{FirstOffset: l.w.next, FirstCum: l.w.cum, Created: time.Now().UnixNano()}
	b := s.db.NewBatch()
	_ = b.Set(ledgerKey(id, l.w.ledger), sealed.encode(), nil)
	_ = b.Set(ledgerKey(id, led), fresh.encode(), nil)
	_ = b.Set(keyNextLedger, appendU64(nil, uint64(led+1)), nil)
	if err := b.Commit(pebble.Sync); err != nil {
		_ = f.Close()
		return 0, fmt.Errorf("storage: roll %v: %w", id, err)
	}
	s.nextLedger++
	l.mu.Lock()
	*l.openLedgerLocked() = ledgerRec{id: l.w.ledger, meta: sealed}
	l.mu.ledgers = append(l.mu.ledgers, ledgerRec{id: led, meta: fresh})
	l.mu.files[led] = &ledgerFile{name: s.segPath(id, led), file: f}
	l.mu.Unlock()
	// A dirty tail (I7) stays past the sealed ledger's recorded size,
	// where nothing reads: sealed ledgers are read through the index only.
	l.w.ledger, l.w.file, l.w.entry, l.w.pos, l.w.dirty = led, f, 0, 0, false
	l.w.reused = reused
	l.startAlloc()
	return led, nil
}

// materializeLocked creates the open ledger's file on the log's first
// Write (CreateLogs leaves a new log's first ledger without one, so that
// creating many partitions creates no files). I1: the file exists before
// any entry is written to it, and its directory entry is durable before
// any index record names an entry of it or any entry of it is
// acknowledged: without a Replicator the group commit that takes the
// first entry syncs the directory (openLedgerFile's lazy), so that the
// first writes to a thousand new partitions cost one directory sync, not
// a thousand. Needs appendMu.
func (s *Store) materializeLocked(l *logState) error {
	f, reused, err := s.openLedgerFile(l, l.w.ledger, s.opts.Replicator == nil)
	if err != nil {
		return err
	}
	l.w.reused = reused
	l.mu.Lock()
	defer l.mu.Unlock()
	if lf := l.mu.files[l.w.ledger]; lf != nil {
		if lf.file != nil {
			_ = lf.file.Close() // a read-only handle opened meanwhile
		}
		lf.file = f
	}
	l.w.file = f
	l.startAlloc()
	return nil
}

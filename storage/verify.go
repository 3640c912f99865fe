package storage

// Verify: every stored entry's CRC and the index's consistency, read-only
// (see inspect.go for the running-store caveats).

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Problem is one inconsistency found by Verify, named precisely enough to
// find it on disk.
type Problem struct {
	Log    LogID
	Ledger LedgerID
	Entry  EntryID
	Offset Offset
	Pos    int64 // file position of the frame; -1 when not about a frame
	File   string
	Err    error
}

func (p Problem) String() string {
	if p.Pos < 0 {
		return fmt.Sprintf("%v %v: %v", p.Log, p.Ledger, p.Err)
	}
	return fmt.Sprintf("%v %v %v %v file %s pos %d: %v", p.Log, p.Ledger, p.Entry, p.Offset, p.File, p.Pos, p.Err)
}

// VerifyReport is what Verify checked and found.
type VerifyReport struct {
	Logs, Ledgers, Entries int64
	Bytes                  int64 // frame bytes read and checked
	Problems               []Problem
	// Notes are findings that are not corruption: an unindexed tail of the
	// open ledger (recovery re-indexes or truncates it; on a running
	// store it is written-but-unsynced data), orphan files.
	Notes []string
}

// ErrVerify is returned by Verify when it found problems.
var ErrVerify = errors.New("storage: verify found corruption")

// Verify reads every indexed entry of every log and checks: its frame's
// CRC32C; that the frame holds the offset, record count and size the index
// says; that offsets are dense (each entry starts where the previous one
// ended), except for the gaps a rewritten ledger may leave; that each ledger's entries are numbered 0, 1, ... at contiguous
// file positions from 0, starting at the ledger's first offset; that the
// position index maps back to the entry; and that a sealed ledger's
// recorded entry count and size match its entries and its file. progress
// (if not nil) is called with the bytes checked so far and the total.
func (r *ReadOnly) Verify(progress func(done, total int64)) (VerifyReport, error) {
	var rep VerifyReport
	logs, err := r.Logs()
	if err != nil {
		return rep, err
	}
	known := make(map[string]bool)
	var total int64
	for _, l := range logs {
		for _, led := range l.Ledgers {
			name := SegmentFileName(l.ID, led.ID)
			known[name] = true
			if st, err := os.Stat(r.SegmentPath(l.ID, led.ID)); err == nil {
				total += st.Size()
			}
		}
	}
	v := &verifier{r: r, rep: &rep, total: total, progress: progress}
	for _, l := range logs {
		if err := v.log(l); err != nil {
			return rep, err
		}
	}
	orphans, err := r.orphanSegments(known)
	if err != nil {
		return rep, err
	}
	for _, o := range orphans {
		rep.Notes = append(rep.Notes, fmt.Sprintf("orphan segment file %s (no ledger names it; Open removes it)", o))
	}
	spares, err := SpareFiles(r.dir)
	if err != nil {
		return rep, err
	}
	for _, sp := range spares {
		rep.Notes = append(rep.Notes, fmt.Sprintf("spare file %s (a trimmed ledger's file, kept for its log's next ledger to be written over: I8)", sp))
	}
	if progress != nil && v.reported != rep.Bytes {
		progress(rep.Bytes, total)
	}
	if len(rep.Problems) > 0 {
		return rep, fmt.Errorf("%w: %d problems", ErrVerify, len(rep.Problems))
	}
	return rep, nil
}

type verifier struct {
	r        *ReadOnly
	rep      *VerifyReport
	total    int64
	progress func(done, total int64)
	reported int64 // bytes at the last progress call
}

// ledgerCheck is the running state of one ledger's entries.
type ledgerCheck struct {
	info    LedgerInfo
	file    *os.File
	size    int64
	entries int64
	pos     int64 // where the next frame must start
}

func (v *verifier) log(l LogInfo) error {
	v.rep.Logs++
	leds := make(map[LedgerID]*ledgerCheck, len(l.Ledgers))
	for _, li := range l.Ledgers {
		v.rep.Ledgers++
		lc := &ledgerCheck{info: li}
		if li.Offloaded {
			// Its entries are in the object store (doc.go "Offloaded
			// ledgers"); the tier's verify checks them there.
		} else if f, err := os.Open(v.r.SegmentPath(l.ID, li.ID)); errors.Is(err, fs.ErrNotExist) && li.Entries == 0 {
			// I1: a ledger no entry was written to may have no file yet
			// (a new log's file is created by its first Write).
		} else if err != nil {
			v.problem(Problem{Log: l.ID, Ledger: li.ID, Pos: -1, Err: fmt.Errorf("ledger file: %w", err)})
		} else {
			lc.file = f
			defer f.Close()
			if st, err := f.Stat(); err == nil {
				lc.size = st.Size()
			}
		}
		leds[li.ID] = lc
	}
	var prev *EntryHeader
	err := v.r.scanIndexed(l.ID, 0, func(h EntryHeader) (bool, error) {
		v.entry(l.ID, leds, prev, h)
		prev = &h
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("storage: scan index of %v: %w", l.ID, err)
	}
	for i, li := range l.Ledgers {
		v.ledgerEnd(l.ID, leds[li.ID], i == len(l.Ledgers)-1)
	}
	return nil
}

func (v *verifier) problem(p Problem) { v.rep.Problems = append(v.rep.Problems, p) }

func (v *verifier) entry(id LogID, leds map[LedgerID]*ledgerCheck, prev *EntryHeader, h EntryHeader) {
	v.rep.Entries++
	at := Problem{Log: id, Ledger: h.Ledger, Entry: h.Entry, Offset: h.Offset, Pos: h.Pos,
		File: SegmentFileName(id, h.Ledger)}
	bad := func(err error) { at.Err = err; v.problem(at) }
	lc := leds[h.Ledger]
	// A rewritten ledger (generation above 0, doc.go "Generations") may
	// leave gaps, inside it and before or after it; never an overlap.
	gaps := lc != nil && lc.info.Gen > 0 || prev != nil && leds[prev.Ledger] != nil && leds[prev.Ledger].info.Gen > 0
	if prev != nil && (h.Offset < prev.End() || h.Offset > prev.End() && !gaps) {
		bad(fmt.Errorf("offset gap or overlap: the previous entry ends at %v", prev.End()))
	}
	if lc == nil {
		bad(errors.New("the index names a ledger the log does not have"))
		return
	}
	if h.Entry != EntryID(lc.entries) || h.Pos != lc.pos {
		bad(fmt.Errorf("expected %v at pos %d (entries must be numbered and laid out contiguously)", EntryID(lc.entries), lc.pos))
	}
	if h.Entry == 0 && (h.Offset < lc.info.FirstOffset || h.Offset > lc.info.FirstOffset && lc.info.Gen == 0) {
		bad(fmt.Errorf("first entry of the ledger, but the ledger starts at %v", lc.info.FirstOffset))
	}
	lc.entries++
	lc.pos = h.Pos + frameHeaderLen + int64(h.Size)
	if lc.file != nil {
		if _, err := readCheckedEntry(lc.file, id, h); err != nil {
			bad(errors.Unwrap(err)) // entryErr's prefix repeats what Problem names
		}
	}
	before := v.rep.Bytes
	v.rep.Bytes += frameHeaderLen + int64(h.Size)
	// Progress every 64 MiB or every 10%, whichever comes first.
	const every = 64 << 20
	tenth := max(v.total/10, 1)
	crossed := before/every != v.rep.Bytes/every || before/tenth != v.rep.Bytes/tenth
	if v.progress != nil && crossed {
		v.reported = v.rep.Bytes
		v.progress(v.rep.Bytes, v.total)
	}
}

// ledgerEnd checks a ledger's totals against its record and its file, and
// reports an open ledger's unindexed tail.
func (v *verifier) ledgerEnd(id LogID, lc *ledgerCheck, open bool) {
	li := lc.info
	p := Problem{Log: id, Ledger: li.ID, Pos: -1}
	if li.Sealed && (lc.entries != li.Entries || lc.pos != li.Bytes) {
		p.Err = fmt.Errorf("sealed with %d entries / %d bytes, the index holds %d / %d", li.Entries, li.Bytes, lc.entries, lc.pos)
		v.problem(p)
	}
	if lc.file == nil || lc.size == lc.pos {
		return
	}
	if lc.size < lc.pos {
		p.Err = fmt.Errorf("file is %d bytes, the index names %d", lc.size, lc.pos)
		v.problem(p)
		return
	}
	if !open {
		p.Err = fmt.Errorf("%d bytes after the last entry of a sealed ledger", lc.size-lc.pos)
		v.problem(p)
		return
	}
	// The open ledger's tail: whole CRC-valid frames continuing the
	// sequence (Tail) are checked entries; anything after them is torn.
	tail, err := v.r.Tail(id)
	if err != nil {
		p.Err = fmt.Errorf("tail: %w", err)
		v.problem(p)
		return
	}
	end := lc.pos
	for _, h := range tail {
		v.rep.Entries++
		v.rep.Bytes += frameHeaderLen + int64(h.Size)
		end = h.Pos + frameHeaderLen + int64(h.Size)
	}
	if len(tail) > 0 {
		v.rep.Notes = append(v.rep.Notes, fmt.Sprintf(
			"%v %v: %d entries (%d bytes) past the last indexed entry, CRC-checked: not yet visible in the index "+
				"(a running server's latest commits, or a crash's tail that Open re-indexes: I4)", id, li.ID, len(tail), end-lc.pos))
	}
	if end < lc.size {
		v.rep.Notes = append(v.rep.Notes, fmt.Sprintf(
			"%v %v: %d torn bytes at pos %d (a write in progress, a crash's torn tail that Open truncates: I4, "+
				"or a reused file's older frames, cut when the ledger is sealed: I8)",
			id, li.ID, lc.size-end, end))
	}
}

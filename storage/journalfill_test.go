package storage

import (
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgateway/kgateway/storage/vfstest"
)

// TestJournalFillsAhead: the filler fills a fresh store's journal files
// only a bounded distance ahead of where the journal writes
// (journalfill.go). Open fills the first chunk of file 0 and nothing of
// file 1; while the first pass writes, file 0 is filled at most
// journalFillAhead and a chunk past its next record, and file 1 not at
// all until the pass nears its end. Groups are journaled meanwhile; the
// files reach their size once the journal has gone through both, and a
// crash then loses nothing acknowledged.
func TestJournalFillsAhead(t *testing.T) {
	defer func(n, c, a int64) { journalFileBytes, journalFillChunk, journalFillAhead = n, c, a }(
		journalFileBytes, journalFillChunk, journalFillAhead)
	journalFileBytes, journalFillChunk, journalFillAhead = 64<<10, 1<<10, 4<<10
	const maxRecord = 1 << 10 // a round's record here: 4 small frames
	m := vfstest.NewMachine(0)
	c := new(journalCounts)
	s, err := Open("/data", Options{FS: m.Files, PebbleFS: m.Index, JournalBytes: 1 << 20,
		OnCommit: func(st CommitStats) {
			if st.Journaled {
				c.groups.Add(1)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	size := func(i int) int64 { return m.Files.SyncedSize(filepath.Join("/data/segments", journalNames[i])) }
	if a, b := size(0), size(1); a != journalFillChunk || b != 0 {
		t.Fatalf("after Open the journal files are %d and %d bytes, want %d and 0", a, b, journalFillChunk)
	}
	logs := []LogID{1, 2, 3, 4}
	if err := s.CreateLogs(logs...); err != nil {
		t.Fatal(err)
	}
	acked := map[LogID]map[Offset][]byte{}
	for r := 0; s.j.cur == 0 && s.j.off+maxRecord+journalFillAhead+journalFillChunk < journalFileBytes; r++ {
		writeRounds(t, s, logs, 1, "first pass", acked)
		waitFillerIdle(t, s)
		bound := s.j.off + maxRecord + journalFillAhead + journalFillChunk
		if a, b := size(0), size(1); a > bound || b != 0 {
			t.Fatalf("round %d, journal at %d: files filled to %d and %d, want at most %d and 0", r, s.j.off, a, b, bound)
		}
	}
	if c.groups.Load() == 0 {
		t.Fatal("nothing journaled in the first pass")
	}
	for r := 0; ; r++ {
		select {
		case <-s.j.fillDone:
		default:
			if r == 5000 {
				t.Fatalf("the journal files were not filled after %d more rounds: %d and %d bytes", r, size(0), size(1))
			}
			writeRounds(t, s, logs, 1, "later passes", acked)
			continue
		}
		break
	}
	if a, b := size(0), size(1); a != journalFileBytes || b != journalFileBytes {
		t.Fatalf("the filler finished with files of %d and %d bytes, want %d", a, b, journalFileBytes)
	}
	checkAckedAfterCrash(t, m, s, Options{JournalBytes: 1 << 20}, acked)
}

// waitFillerIdle waits until the filler has filled both journal files up
// to what the committer asked for.
func waitFillerIdle(t *testing.T, s *Store) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for i := range journalNames {
		for s.j.filled[i].Load() < s.j.target[i].Load() {
			if time.Now().After(deadline) {
				t.Fatalf("the filler did not reach its target of %s within a minute", journalNames[i])
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// TestJournalWaitsForFiller: a group whose record lies past what the
// filler has filled waits for the filler and is journaled, instead of
// being committed without the journal (an fdatasync per file). Here the
// filler is asked only for each record itself (no fill ahead, chunks
// smaller than a record), so every group of two files or more finds the
// filler behind; through the first pass each of them is journaled, and a
// crash then loses nothing acknowledged.
func TestJournalWaitsForFiller(t *testing.T) {
	defer func(n, c, a int64) { journalFileBytes, journalFillChunk, journalFillAhead = n, c, a }(
		journalFileBytes, journalFillChunk, journalFillAhead)
	journalFileBytes, journalFillChunk, journalFillAhead = 64<<10, 256, 0
	const maxRecord = 2 << 10 // a round's record here: 8 small frames
	m := vfstest.NewMachine(0)
	var c multiCounts
	s, err := Open("/data", Options{FS: m.Files, PebbleFS: m.Index, JournalBytes: 1 << 20, OnCommit: c.onCommit})
	if err != nil {
		t.Fatal(err)
	}
	logs := []LogID{1, 2, 3, 4, 5, 6, 7, 8}
	if err := s.CreateLogs(logs...); err != nil {
		t.Fatal(err)
	}
	acked := map[LogID]map[Offset][]byte{}
	for s.j.cur == 0 && s.j.off+maxRecord < journalFileBytes {
		writeRounds(t, s, logs, 1, "first pass", acked)
	}
	if n, j := c.multi.Load(), c.journaled.Load(); n == 0 || j != n {
		t.Fatalf("first pass: %d of %d groups of two files or more journaled, want all", j, n)
	}
	checkAckedAfterCrash(t, m, s, Options{JournalBytes: 1 << 20}, acked)
}

// multiCounts counts a store's group commits over two files or more
// (multi) and those of them journaled (Options.OnCommit).
type multiCounts struct{ multi, journaled atomic.Int64 }

func (c *multiCounts) onCommit(st CommitStats) {
	if st.Files >= 2 {
		c.multi.Add(1)
	}
	if st.Journaled {
		c.journaled.Add(1)
	}
}

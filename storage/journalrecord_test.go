package storage

import (
	"bytes"
	"hash/crc32"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/kgateway/kgateway/storage/fsys"
	"github.com/kgateway/kgateway/storage/vfstest"
)

// TestJournalRecordOfLargeFrames: a journaled group's record holds every
// frame as written, whether the frame is copied into the record's buffer
// (small) or written from the entry with its CRC taken from its frame
// header (large; journalrecord.go), with the frame CRC computed over the
// payload or derived from a known suffix CRC (AppendOptions.SuffixCRC):
// the record's CRC is that of its bytes, so Open takes the pass, and a
// crash that keeps nothing unsynced of the segment files loses no
// acknowledged entry.
func TestJournalRecordOfLargeFrames(t *testing.T) {
	m := vfstest.NewMachine(0)
	var largeJournaled atomic.Int64
	opts := Options{JournalBytes: 1 << 20}
	s, err := Open("/data", Options{FS: m.Files, PebbleFS: m.Index, JournalBytes: opts.JournalBytes,
		OnCommit: func(st CommitStats) {
			if st.Journaled && st.Bytes > int64(st.Entries)*journalInlineMax {
				largeJournaled.Add(1)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	waitJournalFilled(t, s)
	logs := []LogID{1, 2, 3, 4, 5, 6}
	if err := s.CreateLogs(logs...); err != nil {
		t.Fatal(err)
	}
	// Per log: small, at the inline bound, just past it, large, and large
	// with the CRC of its suffix given as a batch's would be.
	sizes := []int{100, journalInlineMax, journalInlineMax + 1, 40 << 10, 200 << 10}
	acked := map[LogID]map[Offset][]byte{}
	for round := 0; round < 3 || largeJournaled.Load() == 0; round++ {
		if round == 100 {
			t.Fatal("no group of large entries was journaled")
		}
		var ps []*Pending
		var payloads [][]byte
		for i, id := range logs {
			size := sizes[(i+round)%len(sizes)]
			p := make([]byte, size)
			for k := range p {
				p[k] = byte(k*7 + i + round)
			}
			var o AppendOptions
			if size > 64<<10 {
				o = AppendOptions{SuffixFrom: 21, SuffixCRC: crc32.Checksum(p[21:], castagnoli)}
			}
			pd, err := s.Write(id, 1, p, o)
			if err != nil {
				t.Fatal(err)
			}
			ps, payloads = append(ps, pd), append(payloads, p)
		}
		if err := waitAcked(ps, payloads, acked); err != nil {
			t.Fatal(err)
		}
	}
	checkJournalFrames(t, m, s)
	checkAckedAfterCrash(t, m, s, opts, acked)
}

// checkJournalFrames reads the current pass and checks that each of its
// frames is byte for byte the frame in its segment file.
func checkJournalFrames(t *testing.T, m *vfstest.Machine, s *Store) {
	t.Helper()
	data, err := readJournalFile(s.j.files[s.j.cur])
	if err != nil {
		t.Fatal(err)
	}
	epoch, frames := readJournalPass(data)
	if epoch == 0 || len(frames) == 0 {
		t.Fatal("the journal's pass has no whole record")
	}
	large := 0
	for _, fr := range frames {
		name := filepath.Join(s.segDir, SegmentFileName(fr.log, fr.ledger))
		f, err := m.Files.OpenFile(name, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(fr.frame))
		_, err = f.ReadAt(got, fr.pos)
		_ = f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, fr.frame) {
			t.Fatalf("%v at %d: the journal's frame differs from the file's", fr.log, fr.pos)
		}
		if len(fr.frame) > frameHeaderLen+journalInlineMax {
			large++
		}
	}
	if large == 0 {
		t.Fatal("no large frame in the journal's pass")
	}
}

// TestWriteRecordManyPieces: a record of more buffers than one vector
// write takes (IOV_MAX) is written whole, in order, on a real file.
func TestWriteRecordManyPieces(t *testing.T) {
	f, err := fsys.OS().OpenFile(filepath.Join(t.TempDir(), "j"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var bufs [][]byte
	var want []byte
	for i := range 3000 {
		b := bytes.Repeat([]byte{byte(i), byte(i >> 8)}, 1+i%7)
		bufs, want = append(bufs, b), append(want, b...)
	}
	if err := writeRecord(f, bufs, 5); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(want))
	if _, err := f.ReadAt(got, 5); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the record's bytes differ from its buffers'")
	}
}

// TestJournalWideGroups: a group over journalWideFiles files or more is
// journaled while its entries average up to journalWideFactor times
// JournalBytes a file; a group of fewer files only up to JournalBytes.
func TestJournalWideGroups(t *testing.T) {
	m := vfstest.NewMachine(0)
	const bound = 16 << 10
	size := bound * journalWideFactor * 3 / 4 // over bound, under the wide one
	var wide, narrowJournaled atomic.Int64
	s, err := Open("/data", Options{FS: m.Files, PebbleFS: m.Index, JournalBytes: bound,
		OnCommit: func(st CommitStats) {
			switch {
			case st.Journaled && st.Files >= journalWideFiles:
				wide.Add(1)
			case st.Journaled:
				narrowJournaled.Add(1)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	waitJournalFilled(t, s)
	logs := make([]LogID, journalWideFiles)
	for i := range logs {
		logs[i] = LogID(i + 1)
	}
	if err := s.CreateLogs(logs...); err != nil {
		t.Fatal(err)
	}
	round := func(ids []LogID) {
		var ps []*Pending
		for _, id := range ids {
			p, err := s.Write(id, 1, make([]byte, size), AppendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, p)
		}
		for _, p := range ps {
			if err := p.Wait(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for r := 0; wide.Load() == 0; r++ {
		if r == 100 {
			t.Fatalf("no group of %d files averaging %d bytes was journaled", journalWideFiles, size)
		}
		round(logs)
	}
	narrowJournaled.Store(0)
	for range 10 {
		round(logs[:journalWideFiles/2])
	}
	if n := narrowJournaled.Load(); n != 0 {
		t.Fatalf("%d groups of at most %d files averaging %d bytes were journaled, over the bound %d", n, journalWideFiles/2, size, bound)
	}
}

package storage

import (
	"bytes"
	"sync"
	"testing"

	"github.com/kgateway/kgateway/storage/vfstest"
)

// TestBulkEntriesNotHeldNorJournaled: with a journal, an entry in the main
// lane keeps its payload until answered (Pending.HoldsPayload: the
// journal may copy it at commit, I15); an entry in the bulk lane does not,
// so its caller may reuse the bytes as soon as Write returned, and so a
// bulk lane's group is never journaled, even one whose entries are small
// enough per file to be (its files are synced). A crash afterwards keeps
// every acknowledged entry of both lanes.
func TestBulkEntriesNotHeldNorJournaled(t *testing.T) {
	m := vfstest.NewMachine(0)
	var mu sync.Mutex
	journaled, multiFile, bulkLane := 0, 0, 0
	opts := Options{FS: m.Files, PebbleFS: m.Index, JournalBytes: 1 << 20, BulkEntryBytes: 1024,
		OnCommit: func(st CommitStats) {
			mu.Lock()
			defer mu.Unlock()
			if st.Journaled {
				journaled++
				if st.Lane() != "journal" {
					t.Errorf("a journaled group's lane is %q", st.Lane())
				}
			}
			if st.Bulk {
				bulkLane++
				if st.Lane() != "bulk" {
					t.Errorf("a bulk lane group's lane is %q", st.Lane())
				}
			}
			if st.Files >= 2 {
				multiFile++
			}
		}}
	s, err := Open("/data", opts)
	if err != nil {
		t.Fatal(err)
	}
	waitJournalFilled(t, s)
	small, bulk := []LogID{1, 2, 3, 4}, []LogID{5, 6, 7, 8}
	for _, id := range append(append([]LogID(nil), small...), bulk...) {
		if err := s.CreateLog(id); err != nil {
			t.Fatal(err)
		}
	}
	acked := map[LogID]map[Offset][]byte{}
	// round writes one entry of n bytes to each log, then waits for them.
	round := func(logs []LogID, n int, tag byte) []*Pending {
		var ps []*Pending
		var payloads [][]byte
		for _, id := range logs {
			b := bytes.Repeat([]byte{tag, byte(id)}, n/2)
			p, err := s.Write(id, 1, b, AppendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ps, payloads = append(ps, p), append(payloads, b)
		}
		for i, p := range ps {
			if err := p.Wait(); err != nil {
				t.Fatal(err)
			}
			if acked[logs[i]] == nil {
				acked[logs[i]] = map[Offset][]byte{}
			}
			acked[logs[i]][p.Header().Offset] = payloads[i]
		}
		return ps
	}
	for r := 0; ; r++ {
		if r == 200 {
			t.Fatal("no main lane group commit was journaled")
		}
		for _, p := range round(small, 100, byte(r)) {
			if p.bulk || !p.HoldsPayload() {
				t.Fatalf("a main lane entry: bulk %v, holds its payload %v", p.bulk, p.HoldsPayload())
			}
		}
		mu.Lock()
		done := journaled > 0
		if bulkLane > 0 {
			t.Fatalf("%d main lane group commits counted in the bulk lane", bulkLane)
		}
		journaled, multiFile = 0, 0
		mu.Unlock()
		if done {
			break
		}
	}
	for r := 0; ; r++ {
		if r == 200 {
			t.Fatal("no bulk lane group commit took two files")
		}
		for _, p := range round(bulk, 4096, byte(r)) {
			if !p.bulk || p.HoldsPayload() {
				t.Fatalf("a bulk lane entry: bulk %v, holds its payload %v", p.bulk, p.HoldsPayload())
			}
		}
		mu.Lock()
		j, multi, b := journaled, multiFile, bulkLane
		mu.Unlock()
		if j > 0 {
			t.Fatalf("%d bulk lane group commits journaled", j)
		}
		if multi > 0 {
			if b == 0 {
				t.Fatal("no group commit counted in the bulk lane")
			}
			break
		}
	}
	img := m.Crash(vfstest.FilesFirst, vfstest.SyncedOnly)
	_ = s.Close()
	s2, err := Open("/data", Options{FS: img.Files, PebbleFS: img.Index})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	checkAcked(t, s2, acked)
}

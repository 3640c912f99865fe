package storage

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/kgateway/kgateway/storage/vfstest"
)

// TestCrashAtCommitSteps stops the machine at every point of a group
// commit (after the segment writes, while an fdatasync is held, after the
// fdatasyncs, after the index commit, after publish), takes the crash
// image there in both clone orders and with every kind of survival of the
// unsynced writes (none, all, index furthest ahead of the files, random),
// reopens it and checks D2/D3 (checkRecovered). At each point it also
// checks, on the live store, that the index names no byte that is not
// durable (I2) and that no waiter of the stopped group is woken before
// publish (D1). Deterministic: every combination, every run.
func TestCrashAtCommitSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	keeps := map[string]vfstest.Keep{
		"synced-only": vfstest.SyncedOnly,
		"index-ahead": vfstest.IndexAhead(rng),
		"everything":  vfstest.Everything(rng),
		"random":      vfstest.RandomKeep(rng),
	}
	for _, point := range vfstest.Points {
		for _, order := range vfstest.Orders {
			for name, keep := range keeps {
				t.Run(fmt.Sprintf("%v/%v/%s", point, order, name), func(t *testing.T) {
					crashAtStep(t, point, order, keep)
				})
			}
		}
	}
}

func crashAtStep(t *testing.T, point vfstest.Point, order vfstest.Order, keep vfstest.Keep) {
	m := vfstest.NewMachine(0)
	s := newStore(t, "/data", Options{FS: m.Files, PebbleFS: m.Index})
	models := map[LogID]*crashModel{}
	for _, id := range []LogID{1, 2} {
		if err := s.CreateLog(id); err != nil {
			t.Fatal(err)
		}
		models[id] = &crashModel{written: map[Offset][]byte{}, acked: map[Offset]bool{}}
	}
	appendAcked := func(id LogID, n int) {
		for i := range n {
			p := payloadFor(Offset(100*int(id)+i), 10+i)
			h := mustAppend(t, s, id, 1+i%2, p, 0)
			models[id].written[h.Offset], models[id].acked[h.Offset] = p, true
		}
	}
	appendAcked(1, 3)
	appendAcked(2, 2)
	if _, err := s.Roll(1); err != nil { // a sealed ledger before the open one
		t.Fatal(err)
	}
	appendAcked(1, 2)

	var mu sync.Mutex // guards group, models, img and crashed against the hook
	var group []*Pending
	var img vfstest.Image
	crashed := false
	// fired is closed when the hook has run: after publish the waiters
	// wake before the committer reaches the step, so Wait returning says
	// nothing about the hook.
	fired := make(chan struct{})
	m.At(point, 1, func() {
		defer close(fired)
		mu.Lock()
		defer mu.Unlock()
		checkIndexDurable(t, s, m.Files)
		for _, pd := range group {
			select {
			case <-pd.done:
				if point != vfstest.AfterPublish {
					t.Errorf("%v: entry %v acknowledged before publish", point, pd.hdr.Offset)
				}
				models[pd.log.id].acked[pd.hdr.Offset] = true
			default:
			}
		}
		img, crashed = m.Crash(order, keep), true
	})
	for i := range 4 {
		id := LogID(1 + i%2)
		p := payloadFor(Offset(1000+i), 20+i)
		pd, err := s.Write(id, 1, p, AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		models[id].written[pd.hdr.Offset] = p
		group = append(group, pd)
		mu.Unlock()
	}
	for _, pd := range group {
		if err := pd.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-fired:
	case <-time.After(time.Minute):
	}
	m.Disarm()
	_ = s.Close()
	mu.Lock()
	defer mu.Unlock()
	if !crashed {
		t.Fatalf("the commit never reached %v", point)
	}
	s2, err := Open("/data", Options{FS: img.Files, PebbleFS: img.Index})
	if err != nil {
		t.Fatalf("%v %v: reopen: %v\n%v", point, order, err, img.Files)
	}
	defer s2.Close()
	for id, model := range models {
		checkRecovered(t, 0, s2, id, model)
	}
}

// checkIndexDurable checks I2 on a live store: every entry the index
// names (NoSync commits included, published or not) lies within the
// synced bytes of its ledger file.
func checkIndexDurable(t *testing.T, s *Store, fs *vfstest.MemFS) {
	t.Helper()
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixIndex}, UpperBound: []byte{prefixIndex + 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		h, err := decodeIndex(it.Key(), it.Value())
		if err != nil {
			t.Fatal(err)
		}
		id := LogID(binary.BigEndian.Uint64(it.Key()[1:9]))
		name := filepath.Join(s.segDir, SegmentFileName(id, h.Ledger))
		if end, synced := h.Pos+frameHeaderLen+int64(h.Size), fs.SyncedSize(name); end > synced && !journaledFrame(t, s, fs, id, h) {
			t.Errorf("I2: the index names %v %v at [%d, %d) of %s, synced to %d", id, h.Offset, h.Pos, end, name, synced)
		}
	}
}

// journaledFrame says whether the journal's synced bytes hold h's frame
// (I15): then the index may name it before its file is synced.
func journaledFrame(t *testing.T, s *Store, fs *vfstest.MemFS, id LogID, h EntryHeader) bool {
	t.Helper()
	for _, name := range journalNames {
		_, frames := readJournalPass(fs.SyncedData(filepath.Join(s.segDir, name)))
		for _, fr := range frames {
			if fr.log == id && fr.ledger == h.Ledger && fr.pos == h.Pos && len(fr.frame) == frameHeaderLen+int(h.Size) {
				return true
			}
		}
	}
	return false
}

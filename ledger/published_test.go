package ledger

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"testing"

	"github.com/kgateway/kgateway/storage"
)

// pubBatch is a record batch header (magic 2) spanning [base, base+n),
// padded to size bytes.
func pubBatch(base Offset, n int32, size int) []byte {
	b := make([]byte, max(size, batchHeaderLen))
	binary.BigEndian.PutUint64(b, uint64(base))
	binary.BigEndian.PutUint32(b[batchLengthOff:], uint32(len(b)-12))
	b[16] = 2
	binary.BigEndian.PutUint32(b[lastOffsetDeltaOff:], uint32(n-1))
	binary.BigEndian.PutUint64(b[maxTimestampOff:], uint64(1000+base))
	return b
}

// memPublished is a published log in memory: ranges of batches. The
// real one (cluster/node over cluster/diskless) is tested in server.
type memPublished struct {
	start  Offset
	ranges []PublishedRange
	data   map[Offset][]byte // by range base

	mu      sync.Mutex
	reads   int
	stale   int  // the next this many Reads are stale
	corrupt bool // Reads return bytes that do not tile their range
}

func newMemPublished(start Offset, spans ...[]int32) *memPublished {
	p := &memPublished{start: start, data: map[Offset][]byte{}}
	next := Offset(0)
	for _, batches := range spans {
		r := PublishedRange{Base: next, Object: "o", Version: 1}
		var data []byte
		for _, n := range batches {
			data = append(data, pubBatch(next, n, 100)...)
			next += Offset(n)
		}
		r.End, r.Len, r.MaxTime = next, int64(len(data)), int64(1000+next-Offset(batches[len(batches)-1]))
		p.ranges = append(p.ranges, r)
		p.data[r.Base] = data
	}
	return p
}

func (p *memPublished) Start() (Offset, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.start, true
}

func (p *memPublished) Trim(_ context.Context, start Offset) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.start = max(p.start, start)
	return nil
}

func (p *memPublished) Candidates(_ context.Context, from, to Offset) ([]PublishedRange, error) {
	var out []PublishedRange
	for _, r := range p.ranges {
		if r.End > from && r.Base < to {
			out = append(out, r)
		}
	}
	return out, nil
}

func (p *memPublished) Read(_ context.Context, rs []PublishedRange) ([][]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reads++
	if p.stale > 0 {
		p.stale--
		return nil, ErrStale
	}
	var out [][]byte
	for _, r := range rs {
		if p.corrupt {
			out = append(out, pubBatch(r.Base+1, int32(r.End-r.Base), 100))
		} else {
			out = append(out, p.data[r.Base])
		}
	}
	return out, nil
}

// cacheOf opens a managed ledger on a log created at start, holding
// local entries of one record each up to end, over pub.
func cacheOf(t *testing.T, e *env, start, end Offset, pub Published) *Managed {
	t.Helper()
	const log LogID = 42
	if err := e.store.CreateLogAt(log, start); err != nil {
		t.Fatal(err)
	}
	m, err := Open(e.store, log, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	for o := start; o < end; o++ {
		if _, err := m.Append(1, pubBatch(o, 1, 80), storage.AppendOptions{MaxTime: 1}); err != nil {
			t.Fatal(err)
		}
	}
	m.SetPublished(pub)
	return m
}

func offsetsOf(es []Entry) []Offset {
	var out []Offset
	for _, e := range es {
		out = append(out, e.Offset)
	}
	return out
}

// TestReadBelowTheCache (R20, R21): a log over a published copy starts
// at the published start; a read below the local start reads the
// published batches that hold it, one entry each, up to the local start
// and within R9's limits; a read at the local start reads the local log.
func TestReadBelowTheCache(t *testing.T) {
	e := newEnv(t, Config{})
	pub := newMemPublished(2, []int32{2, 2}, []int32{3, 3}) // [0,4) [4,10)
	m := cacheOf(t, e, 10, 12, pub)
	sn, err := m.Snapshot()
	if err != nil || sn.Start != 2 || sn.End != 12 {
		t.Fatalf("snapshot %+v, %v; want [2, 12)", sn, err)
	}
	sn, es, err := m.ReadEntries(Committed, 3, NoLimit, 100, 1<<20, nil)
	if err != nil || sn.Start != 2 || sn.End != 12 {
		t.Fatalf("read from 3: %+v, %v", sn, err)
	}
	if got := offsetsOf(es); len(got) != 3 || got[0] != 2 || got[2] != 7 {
		t.Fatalf("read from 3 got entries at %v, want 2, 4, 7: the batch holding 3 on, up to the local start", got)
	}
	if es[1].Records != 3 || es[2].End() != 10 || len(es[0].Payload) != 100 || es[0].MaxTime != 1002 {
		t.Fatalf("entries %+v do not describe their batches", es)
	}
	if _, es, _ = m.ReadEntries(Committed, 4, NoLimit, 100, 0, nil); len(es) != 1 { // R9: the first whole
		t.Fatalf("maxBytes 0: %d entries, want 1", len(es))
	}
	if sn, es, _ = m.ReadEntries(Committed, 0, NoLimit, 3, 1<<20, nil); sn.Start != 2 || len(es) != 0 {
		t.Fatalf("read below the published start: %+v %v, want start 2 and nothing (R3; the log start check is the caller's)", sn, offsetsOf(es))
	}
	if _, es, _ = m.ReadEntries(Committed, 2, NoLimit, 2, 1<<20, nil); len(es) != 2 {
		t.Fatalf("maxEntries 2: %d entries", len(es))
	}
	if _, es, err = m.ReadEntries(Committed, 10, NoLimit, 100, 1<<20, nil); err != nil || len(es) != 2 || es[0].Offset != 10 {
		t.Fatalf("read at the local start: %v, %v", offsetsOf(es), err)
	}
}

// TestReadBelowTheCacheStaleAndCorrupt (R21): a range that changed
// between listing and pin makes the read start again; bytes that do not
// tile their range fail the read, and nothing is served.
func TestReadBelowTheCacheStaleAndCorrupt(t *testing.T) {
	e := newEnv(t, Config{})
	pub := newMemPublished(0, []int32{1, 1})
	m := cacheOf(t, e, 2, 3, pub)
	pub.stale = 2
	_, es, err := m.ReadEntries(Committed, 0, NoLimit, 100, 1<<20, nil)
	if err != nil || len(es) != 2 || pub.reads != 3 {
		t.Fatalf("after two stale reads: %v, %v, %d reads; want 2 entries in the third", offsetsOf(es), err, pub.reads)
	}
	pub.corrupt = true
	if _, es, err = m.ReadEntries(Committed, 0, NoLimit, 100, 1<<20, nil); !errors.Is(err, storage.ErrCorrupt) || len(es) != 0 {
		t.Fatalf("corrupt range: %v, %v; want ErrCorrupt and nothing", offsetsOf(es), err)
	}
	pub.corrupt, pub.ranges = false, nil // a published log that lost its ranges
	if _, es, err = m.ReadEntries(Committed, 0, NoLimit, 100, 1<<20, nil); !errors.Is(err, ErrStale) || len(es) != 0 {
		t.Fatalf("no range listed: %v, %v; want ErrStale, never an empty read", offsetsOf(es), err)
	}
}

// TestSeekTimeBelowTheCache (R22): a time lookup finds the first
// published batch below the local log that reaches the time, reading only
// the range that holds it; none there leaves it to the local index.
func TestSeekTimeBelowTheCache(t *testing.T) {
	e := newEnv(t, Config{})
	pub := newMemPublished(0, []int32{2, 2}, []int32{3, 3}) // batch max times 1000, 1002 | 1004, 1007
	m := cacheOf(t, e, 10, 12, pub)
	for _, c := range []struct {
		ts    int64
		want  Offset
		ok    bool
		reads int
	}{{0, 0, true, 1}, {1003, 4, true, 1}, {1005, 7, true, 1}, {1008, 0, false, 0}} {
		pub.reads = 0
		off, ok, err := m.SeekPublishedTime(c.ts)
		if err != nil || ok != c.ok || off != c.want || pub.reads != c.reads {
			t.Errorf("seek %d: %v %v %v after %d range reads; want %v %v after %d", c.ts, off, ok, err, pub.reads, c.want, c.ok, c.reads)
		}
	}
}

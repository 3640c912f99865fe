package storage

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// gateSyncFS holds every segment-file Sync while its gate is closed.
type gateSyncFS struct {
	FS
	mu      sync.Mutex
	gate    chan struct{}
	entered chan struct{}
}

func (g *gateSyncFS) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gate = make(chan struct{})
}

func (g *gateSyncFS) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gate != nil {
		close(g.gate)
		g.gate = nil
	}
}

func (g *gateSyncFS) OpenFile(name string, flag int, perm uint32) (File, error) {
	f, err := g.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return gatedFile{File: f, g: g}, nil
}

type gatedFile struct {
	File
	g *gateSyncFS
}

func (f gatedFile) Sync() error {
	f.g.mu.Lock()
	gate := f.g.gate
	f.g.mu.Unlock()
	if gate != nil {
		select {
		case f.g.entered <- struct{}{}:
		default:
		}
		<-gate
	}
	return f.File.Sync()
}

// TestReadsStopAtDurableEnd: D5 in storage itself, not only in the layers
// above that bound their reads by the high watermark. While an entry is
// written (and in the tail cache) but its fdatasync is held, every read
// that starts below it stops before it; once synced it is served.
func TestReadsStopAtDurableEnd(t *testing.T) {
	g := &gateSyncFS{FS: OSFS(), entered: make(chan struct{}, 1)}
	s := newStore(t, t.TempDir(), Options{FS: g})
	defer s.Close()
	defer g.release() // runs first: a failing test must not hang in Close
	_ = s.CreateLog(1)
	// Retain: both entries are in the tail cache (C1), which answers reads
	// of the newest entries by itself (C2) and must stop at the end too.
	a, err := s.Append(1, 2, []byte("durable"), AppendOptions{MaxTime: 1, Retain: true})
	if err != nil {
		t.Fatal(err)
	}
	g.hold()
	p, err := s.Write(1, 3, []byte("pending"), AppendOptions{MaxTime: 2, Retain: true})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the group commit never synced")
	}
	only := func(what string, es []Entry, err error) {
		t.Helper()
		if err != nil || len(es) != 1 || es[0].EntryHeader != a {
			t.Fatalf("%s while the second entry is unsynced: %d entries %v", what, len(es), err)
		}
	}
	es, err := s.ReadEntries(1, 0, 0, 0)
	only("ReadEntries", es, err)
	es, err = s.ReadEntries(1, 1, 100, 1<<20)
	only("ReadEntries from inside the entry", es, err)
	hdrs, err := s.IndexRange(1, 0, 10)
	if err != nil || len(hdrs) != 1 || hdrs[0] != a {
		t.Fatalf("IndexRange: %+v %v", hdrs, err)
	}
	es, err = s.ReadIndexed(1, hdrs)
	only("ReadIndexed", es, err)
	if h, err := s.LastOffset(1); err != nil || h != a {
		t.Fatalf("LastOffset %+v %v", h, err)
	}
	if _, err := s.Floor(1, a.End()); !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("Floor at the pending entry: %v, want ErrOutOfRange", err)
	}
	if info, _ := s.Info(1); info.End != a.End() {
		t.Fatalf("End %d while the second entry is unsynced, want %d", info.End, a.End())
	}
	g.release()
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if es, err := s.ReadEntries(1, 0, 0, 0); err != nil || len(es) != 2 || string(es[1].Payload) != "pending" {
		t.Fatalf("after the sync: %d entries %v", len(es), err)
	}
}

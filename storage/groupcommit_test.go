package storage

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/kgateway/kgateway/storage/vfstest"
)

// gateFS counts Syncs and can hold them until released, to observe group
// commit deterministically.
type gateFS struct {
	FS
	syncs   atomic.Int64
	entered chan struct{} // a Sync started
	gate    chan struct{} // a Sync may finish
}

func (g *gateFS) OpenFile(name string, flag int, perm uint32) (File, error) {
	f, err := g.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &gateFile{File: f, g: g}, nil
}

type gateFile struct {
	File
	g *gateFS
}

func (f *gateFile) Sync() error {
	f.g.syncs.Add(1)
	if f.g.gate != nil {
		f.g.entered <- struct{}{}
		<-f.g.gate
	}
	return f.File.Sync()
}

// TestGroupCommitSharesSync: writes queued while a sync is in progress are
// covered by one fdatasync and acknowledged together, and nothing is
// visible (D5) or acknowledged (D1) before its sync finished.
func TestGroupCommitSharesSync(t *testing.T) {
	g := &gateFS{FS: vfstest.NewMemFS()}
	s := newStore(t, "/d", Options{FS: g, PebbleFS: vfs.NewMem()})
	defer s.Close()
	_ = s.CreateLog(1)
	g.entered, g.gate = make(chan struct{}), make(chan struct{})
	base := g.syncs.Load()
	first, err := s.Write(1, 1, []byte("first"), AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	<-g.entered // the committer is inside the first group's sync
	var rest []*Pending
	for i := 0; i < 10; i++ {
		p, err := s.Write(1, 1, []byte("queued"), AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rest = append(rest, p)
	}
	if info, _ := s.Info(1); info.End != 0 {
		t.Fatalf("unsynced entries visible: end %v", info.End)
	}
	select {
	case <-first.done:
		t.Fatal("acknowledged before its sync finished")
	default:
	}
	g.gate <- struct{}{} // finish group 1
	if err := first.Wait(); err != nil {
		t.Fatal(err)
	}
	<-g.entered // group 2 syncs once for all ten
	g.gate <- struct{}{}
	for _, p := range rest {
		if err := p.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	if n := g.syncs.Load() - base; n != 2 {
		t.Fatalf("%d syncs for 11 writes in two groups", n)
	}
	if info, _ := s.Info(1); info.End != 11 {
		t.Fatalf("end %v", info.End)
	}
	g.gate, g.entered = nil, nil
}

// OnCommit sees every group commit: together they account for every
// entry and byte appended, and each synced at least the one file.
func TestOnCommitStats(t *testing.T) {
	var mu sync.Mutex
	var all CommitStats
	s := newStore(t, t.TempDir(), Options{OnCommit: func(st CommitStats) {
		mu.Lock()
		defer mu.Unlock()
		if st.Files < 1 || st.Entries < 1 || st.Sync < 0 {
			t.Errorf("commit stats %+v", st)
		}
		all.Entries += st.Entries
		all.Bytes += st.Bytes
	}})
	defer s.Close()
	if err := s.CreateLog(1); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		mustAppend(t, s, 1, 1, payloadFor(Offset(i), 100+i), 0)
	}
	mu.Lock()
	defer mu.Unlock()
	if all.Entries != 10 || all.Bytes != 10*100+45 {
		t.Fatalf("commits covered %d entries, %d bytes; want 10, %d", all.Entries, all.Bytes, 10*100+45)
	}
}

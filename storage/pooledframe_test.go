package storage

import (
	"bytes"
	"sync"
	"testing"

	"github.com/kgateway/kgateway/bufpool"
)

// pooledFrame writes one entry whose payload is a whole pooled buffer
// (a single-partition Produce frame), filled with payloadFor(off), and
// lets the writer's hold go once the write is answered, as the Kafka
// Produce handler does.
func pooledFrame(t *testing.T, s *Store, id LogID, off Offset, size int) (*bufpool.Shared, []byte) {
	t.Helper()
	buf := bufpool.Get(size)
	copy(buf, payloadFor(off, size))
	frame := bufpool.New(buf)
	p, err := s.Write(id, 1, buf, AppendOptions{Retain: true, Backing: NewPooledBacking(frame)})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	frame.Release()
	return frame, buf
}

// Pooled frames: a frame goes back to the pool only after its last
// holder. A leased read served from the cache (a fetch response the
// connection's writer is still writing) keeps its frame while the entry
// is evicted and later frames are taken from the pool, written and
// evicted in turn; a read without a lease keeps its frame from the pool
// for good; the cache's own hold goes with the entry. Run with -race: a
// frame returned early is taken by a later write while the "writer"
// goroutine still reads it, which is a data race and a changed payload.
func TestPooledFrameHeldUntilLastHolder(t *testing.T) {
	const size = 96 << 10
	s := newStore(t, t.TempDir(), Options{TailCacheBytes: 3 * (size + frameHeaderLen)})
	defer s.Close()
	if err := s.CreateLog(1); err != nil {
		t.Fatal(err)
	}
	leased, _ := pooledFrame(t, s, 1, 0, size)
	unleased, _ := pooledFrame(t, s, 1, 1, size)
	if n := leased.Holders(); n != 1 {
		t.Fatalf("a written, cached frame has %d holders, want 1 (the cache)", n)
	}
	hdrs, err := s.IndexRange(1, 0, 2)
	if err != nil || len(hdrs) != 2 {
		t.Fatalf("index: %d %v", len(hdrs), err)
	}
	lease := NewLease(false)
	got, err := s.ReadIndexedLeased(1, hdrs[:1], lease)
	if err != nil || len(got) != 1 {
		t.Fatalf("leased read: %d %v", len(got), err)
	}
	if n := leased.Holders(); n != 2 {
		// Errorf: the writer below shows what an early reuse does.
		t.Errorf("a frame served to a lease has %d holders, want 2 (cache, lease)", n)
	}
	if _, err := s.ReadIndexed(1, hdrs[1:]); err != nil {
		t.Fatal(err)
	}

	// The response writer reads the leased payload, over and over, while
	// the entry is evicted and later frames come from the pool.
	want := payloadFor(0, size)
	stop, bad := make(chan struct{}), make(chan int, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			if !bytes.Equal(got[0].Payload, want) {
				bad <- i
				return
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	for off := Offset(2); off < 12; off++ {
		pooledFrame(t, s, 1, off, size)
	}
	close(stop)
	wg.Wait()
	select {
	case i := <-bad:
		t.Fatalf("the leased payload changed under the writer (read %d): its frame was reused", i)
	default:
	}
	if tail := s.mustTail(t, 1); tail[0].hdr.Offset <= 1 {
		t.Fatalf("the first entries are still cached (from %v)", tail[0].hdr.Offset)
	}
	if n := leased.Holders(); n != 1 {
		t.Fatalf("an evicted frame under an unreleased lease has %d holders, want 1 (the lease)", n)
	}
	if n := unleased.Holders(); n != 1 {
		t.Fatalf("an evicted frame read without a lease has %d holders, want 1 (kept for good)", n)
	}
	if !bytes.Equal(got[0].Payload, want) {
		t.Fatal("the leased payload changed: its frame was reused")
	}
	lease.Release()
	if n := leased.Holders(); n != 0 {
		t.Fatalf("after the lease's release the frame has %d holders, want 0 (back in the pool)", n)
	}
}

// Pooled frames: without a tail cache the writer is the only holder, and
// a frame is free once its write is answered.
func TestPooledFrameUncached(t *testing.T) {
	s := newStore(t, t.TempDir(), Options{TailCacheBytes: -1})
	defer s.Close()
	if err := s.CreateLog(1); err != nil {
		t.Fatal(err)
	}
	frame, _ := pooledFrame(t, s, 1, 0, 80<<10)
	if n := frame.Holders(); n != 0 {
		t.Fatalf("an uncached frame has %d holders once its write is answered, want 0", n)
	}
}

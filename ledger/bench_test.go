package ledger

import (
	"testing"

	"github.com/kgateway/kgateway/storage"
)

// BenchmarkReadEntries reads 256 entries of 4 KiB spanning four ledgers,
// warm (tail cache and page cache) and cold (store reopened, so index and
// files are read again). Reports payload MB/s.
func BenchmarkReadEntries(b *testing.B) {
	const entries, size = 1024, 4 << 10
	e := newEnv(b, Config{SegmentBytes: 256 * (frameOverhead + size)})
	payload := make([]byte, size)
	var pending []*storage.Pending
	for i := 0; i < entries; i++ {
		p, err := e.m.Write(1, payload, storage.AppendOptions{})
		if err != nil {
			b.Fatal(err)
		}
		pending = append(pending, p)
	}
	for _, p := range pending {
		if err := p.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	run := func(b *testing.B) {
		b.SetBytes(256 * size)
		for i := 0; b.Loop(); i++ {
			from := Offset(128 + 256*(i%2)) // the middle of ledger 1 or 2
			_, es, err := e.m.ReadEntries(Committed, from, NoLimit, 256, 1<<30, nil)
			if err != nil || len(es) != 256 {
				b.Fatalf("read %d entries: %v", len(es), err)
			}
		}
	}
	b.Run("warm", run)
	e.reopen()
	b.Run("after-reopen", run)
}

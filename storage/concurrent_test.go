package storage

import (
	"bytes"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// TestConcurrentReadsAppendsTrims races appenders, readers, rolls and hard
// trims on one log under -race. Readers must only see whole, dense entries
// below the End they observed (D5), or ErrTrimmed.
func TestConcurrentReadsAppendsTrims(t *testing.T) {
	s := newStore(t, t.TempDir(), Options{})
	defer s.Close()
	const id = LogID(1)
	_ = s.CreateLog(id)
	var stop atomic.Bool
	var wg sync.WaitGroup
	fail := func(format string, args ...any) {
		t.Errorf(format, args...)
		stop.Store(true)
	}
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 150 && !stop.Load(); i++ {
				stamp := func(p []byte, base Offset) int64 {
					copy(p, payloadFor(base, len(p)))
					return int64(base)
				}
				if _, err := s.Append(id, 2, make([]byte, 200), AppendOptions{Stamp: stamp}); err != nil {
					fail("append: %v", err)
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // roll and trim
		defer wg.Done()
		for i := 0; i < 30 && !stop.Load(); i++ {
			if _, err := s.Roll(id); err != nil {
				fail("roll: %v", err)
			}
			info, _ := s.Info(id)
			if err := s.HardTrim(id, info.End/2); err != nil {
				fail("hard trim: %v", err)
			}
		}
	}()
	var readers sync.WaitGroup
	var reads atomic.Int64
	for r := 0; r < 2; r++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for !stop.Load() {
				info, err := s.Info(id)
				if err != nil {
					fail("info: %v", err)
					return
				}
				es, err := s.ReadEntries(id, info.Start, 0, 8<<10)
				if errors.Is(err, ErrTrimmed) {
					continue
				}
				if err != nil {
					fail("read: %v", err)
					return
				}
				reads.Add(1)
				for i, e := range es {
					if i > 0 && e.Offset != es[i-1].End() {
						fail("gap at %v", e.Offset)
					}
					if !bytes.Equal(e.Payload, payloadFor(e.Offset, 200)) {
						fail("entry %v has wrong bytes", e.Offset)
					}
				}
				if len(es) > 0 {
					if after, _ := s.Info(id); es[len(es)-1].End() > after.End {
						fail("read past the durable end")
					}
				}
			}
		}()
	}
	wg.Wait()
	stop.Store(true)
	readers.Wait()
	if reads.Load() == 0 {
		t.Fatal("no read succeeded")
	}
	info, _ := s.Info(id)
	if info.End != 3*150*2 {
		t.Fatalf("end %v", info.End)
	}
}

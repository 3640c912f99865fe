package node

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/diskless"
)

// TestRebuildReadsAhead: a rebuild reads its ranges rebuildReads at a
// time (the first window's reads each wait until that many run at once:
// one read after the other never gets there), hands them on in offset
// order although those reads complete in reverse, never has more than
// rebuildReads read and not yet handed on, and stops at the first error.
func TestRebuildReadsAhead(t *testing.T) {
	const n = 3*rebuildReads + 5
	rs := make([]diskless.Range, n)
	for i := range rs {
		rs[i] = diskless.Range{Base: int64(i), End: int64(i + 1)}
	}
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	inflight, launched, consumed := 0, 0, 0
	finished := map[int]bool{}
	var problems []string
	stop := make(chan struct{})
	defer close(stop)
	go func() { // wakes the waits below so they see their deadline
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
				cond.Broadcast()
			}
		}
	}()
	read := func(ctx context.Context, r diskless.Range) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		i := int(r.Base)
		inflight++
		launched++
		if launched-consumed > rebuildReads {
			problems = append(problems, fmt.Sprintf("read of %d starts with %d ranges read ahead", i, launched-consumed-1))
		}
		cond.Broadcast()
		defer func() {
			inflight--
			finished[i] = true
			cond.Broadcast()
		}()
		if i >= rebuildReads {
			return []byte{byte(i)}, nil
		}
		deadline := time.Now().Add(5 * time.Second)
		// None of the window's reads returns before all of them started:
		// they run at once.
		for launched < rebuildReads && time.Now().Before(deadline) {
			cond.Wait()
		}
		if launched < rebuildReads {
			return nil, fmt.Errorf("read of %d: only %d reads at once, want %d", i, inflight, rebuildReads)
		}
		for i < rebuildReads-1 && !finished[i+1] { // the window completes in reverse
			cond.Wait()
		}
		return []byte{byte(i)}, nil
	}
	var got []int
	err := readInOrder(context.Background(), rs, read, func(r diskless.Range, data []byte) error {
		mu.Lock()
		consumed++
		mu.Unlock()
		if int64(data[0]) != r.Base {
			return fmt.Errorf("range %d handed on with the bytes of %d", r.Base, data[0])
		}
		got = append(got, int(r.Base))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range got {
		if b != i {
			t.Fatalf("handed on in the order %v", got)
		}
	}
	if len(got) != n || len(problems) > 0 {
		t.Fatalf("%d of %d ranges handed on; %v", len(got), n, problems)
	}

	boom := errors.New("object gone")
	calls := 0
	err = readInOrder(context.Background(), rs, func(ctx context.Context, r diskless.Range) ([]byte, error) {
		if r.Base == 3 {
			return nil, boom
		}
		return []byte{byte(r.Base)}, nil
	}, func(diskless.Range, []byte) error {
		calls++
		return nil
	})
	if !errors.Is(err, boom) || calls != 3 {
		t.Fatalf("a failed read of range 3: %v after %d ranges handed on, want it after 3", err, calls)
	}
}

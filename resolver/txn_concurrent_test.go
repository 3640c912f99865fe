package resolver

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// The read_committed bound, the LSO, KIP-890 partition verification: producers run transactions on the same two partitions at
// once, committing or aborting at random, while a reader watches: the LSO
// of each partition never moves backwards, read_committed never returns a
// batch past it, and at the end read_committed delivers exactly the
// committed transactions' batches, each once.
func TestTxnConcurrent(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 2, nil)
	const producers, txns = 4, 25
	var (
		mu        sync.Mutex
		committed = map[int32][]batchKey{}
		wg        sync.WaitGroup
		done      atomic.Bool
		readerErr = make(chan error, 1)
	)
	go func() { // the watcher
		defer close(readerErr)
		last := [2]Offset{}
		for !done.Load() {
			for part := range int32(2) {
				res, err := g.r.Fetch("t", part, last[part], 1<<20, true, ReadCommitted)
				if err != nil {
					readerErr <- err
					return
				}
				if res.LastStable < last[part] {
					readerErr <- fmt.Errorf("partition %d: LSO %d after %d (the LSO)", part, res.LastStable, last[part])
					return
				}
				for _, b := range res.Batches {
					if h := decodeHeader(b); h.BaseOffset+Offset(h.Records) > res.LastStable {
						readerErr <- fmt.Errorf("partition %d: batch at %d past the LSO %d (the read_committed bound)", part, h.BaseOffset, res.LastStable)
						return
					}
				}
				last[part] = res.LastStable
			}
		}
	}()
	for pid := range int64(producers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(pid), 1))
			seq := [2]int32{}
			for range txns {
				var mine [2][]batchKey
				for part := range int32(2) {
					if err := g.r.AddTxnPartition("t", part, pid, 0); err != nil {
						t.Error(err)
						return
					}
					for range rng.IntN(3) {
						n := 1 + rng.IntN(3)
						if _, err := g.r.Produce("t", part, txnBatch(pid, 0, seq[part], n).encode()); err != nil {
							t.Error(err)
							return
						}
						mine[part] = append(mine[part], batchKey{pid, int64(seq[part])})
						seq[part] += int32(n)
					}
				}
				commit := rng.IntN(2) == 0
				for part := range int32(2) {
					if err := g.r.WriteTxnMarker("t", part, pid, 0, commit, 0); err != nil {
						t.Error(err)
						return
					}
				}
				if commit {
					mu.Lock()
					for part := range int32(2) {
						committed[part] = append(committed[part], mine[part]...)
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	done.Store(true)
	if err := <-readerErr; err != nil {
		t.Fatal(err)
	}
	for part := range int32(2) {
		_, hwm, lso, _ := g.r.Bounds("t", part)
		if lso != hwm {
			t.Fatalf("partition %d: LSO %d below the end %d with every transaction ended", part, lso, hwm)
		}
		for _, maxBytes := range []int{1, 1 << 20} {
			got, _ := committedRead(t, g.r, "t", part, maxBytes)
			want := slices.Clone(committed[part])
			cmp := func(a, b batchKey) int { return int(a.pid-b.pid)*1_000_000 + int(a.seq-b.seq) }
			slices.SortFunc(got, cmp)
			slices.SortFunc(want, cmp)
			if !slices.Equal(got, want) {
				t.Fatalf("partition %d: delivered %d batches, committed %d\n got  %v\n want %v", part, len(got), len(want), got, want)
			}
		}
	}
}

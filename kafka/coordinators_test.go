package kafka

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kgateway/kgateway/offsets"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/resolver/resolvertest"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func openOffsets(t *testing.T, commits map[int32]int64) *offsets.Store {
	t.Helper()
	st, err := offsets.Open(filepath.Join(t.TempDir(), "offsets"), offsets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var cs []offsets.Commit
	for p, o := range commits {
		cs = append(cs, offsets.Commit{TopicPartition: offsets.TopicPartition{Topic: "t", Partition: p}, Offset: offsets.Offset(o), LeaderEpoch: -1})
	}
	if err := st.Commit("g", cs); err != nil {
		t.Fatal(err)
	}
	return st
}

// fetched is group g's committed offsets of t/0 and t/1 by OffsetFetch.
func fetched(t *testing.T, adm *kadm.Client) [2]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	resp, err := adm.FetchOffsets(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	out := [2]int64{-1, -1}
	for p := range out {
		if r, ok := resp.Lookup("t", int32(p)); ok {
			if r.Err != nil {
				t.Fatalf("fetch t/%d: %v", p, r.Err)
			}
			out[p] = r.At
		}
	}
	return out
}

func commitOffset(ctx context.Context, adm *kadm.Client, p int32, at int64) error {
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: "t", Partition: p, At: at, LeaderEpoch: -1})
	resp, err := adm.CommitOffsets(ctx, "g", os)
	if err != nil {
		return err
	}
	return resp.Error()
}

// SwapOffsets: OffsetFetch answers from the new store at once, commits go
// to it, the old store is handed back untouched, and requests racing the
// swaps are served by one coordinator or the other, never a torn one.
func TestSwapOffsets(t *testing.T) {
	res := resolvertest.Open(t, resolver.Config{NumPartitions: 1, RetentionCheckInterval: -1})
	if _, err := res.CreateTopic("t", 2, 1, nil, false); err != nil {
		t.Fatal(err)
	}
	first := openOffsets(t, map[int32]int64{0: 10})
	s := startServer(t, Config{Resolver: res, Offsets: first})
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if got := fetched(t, adm); got != [2]int64{10, -1} {
		t.Fatalf("before the swap: %v", got)
	}

	second := openOffsets(t, map[int32]int64{0: 20, 1: 21})
	if old := s.SwapOffsets(second); old != first {
		t.Fatalf("SwapOffsets returned %p, want the first store %p", old, first)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if got := fetched(t, adm); got != [2]int64{20, 21} {
		t.Fatalf("after the swap OffsetFetch answers %v, want the new store's [20 21]", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	if err := commitOffset(ctx, adm, 1, 30); err != nil {
		t.Fatal(err)
	}
	if c, _, err := second.Get("g", offsets.TopicPartition{Topic: "t", Partition: 1}); err != nil || c.Offset != 30 {
		t.Fatalf("commit after the swap: new store holds %v (%v), want 30", c.Offset, err)
	}

	// Swaps racing commits and fetches (under -race): every request is
	// answered by a whole coordinator.
	third := openOffsets(t, map[int32]int64{0: 40, 1: 41})
	var stop atomic.Bool
	var served atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int64(0); !stop.Load(); i++ {
				if err := commitOffset(ctx, adm, 0, 100+i); err != nil {
					errs <- err
					return
				}
				if _, err := adm.FetchOffsets(ctx, "g"); err != nil {
					errs <- err
					return
				}
				served.Add(1)
			}
		}()
	}
	stores := []*offsets.Store{third, second}
	// At least 20 swaps, and until the workers were served 100 times
	// meanwhile.
	for i := 0; i < 20 || (served.Load() < 100 && ctx.Err() == nil && len(errs) == 0); i++ {
		if old := s.SwapOffsets(stores[i%2]); old != stores[(i+1)%2] {
			t.Fatalf("swap %d returned the wrong store", i)
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	if err := errors.Join(func() (all []error) {
		for err := range errs {
			all = append(all, err)
		}
		return all
	}()...); err != nil {
		t.Fatalf("requests racing swaps: %v", err)
	}
	if served.Load() < 100 {
		t.Fatalf("only %d requests served during the swaps", served.Load())
	}
	if old := s.SwapOffsets(third); old != second && old != third {
		t.Fatal("the last swap returned a store that was not current")
	}
	if got := fetched(t, adm); got[1] != 41 {
		t.Fatalf("after the last swap OffsetFetch answers %v, want the third store's t/1 41", got)
	}
}

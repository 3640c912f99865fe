package resolver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kgateway/kgateway/ledger"
	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/tier"
	"github.com/kgateway/kgateway/topicconfig"
)

// Shared producer ids: with Config.ProducerIDs every InitProducerID without a
// transactional id is a fresh id from the shared allocator at epoch 0,
// also where a local resolver would bump the epoch, and nothing is
// counted locally (the local counter is untouched across a restart).
func TestInitProducerIDShared(t *testing.T) {
	var next atomic.Int64
	next.Store(5000)
	calls := 0
	var mu sync.Mutex
	alloc := func(ctx context.Context) (int64, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		return next.Add(1) - 1, nil
	}
	g := newGateway(t, Config{ProducerIDs: alloc})
	ctx := context.Background()
	id, ep, err := g.r.InitProducerID(ctx, -1, -1)
	if err != nil || id != 5000 || ep != 0 {
		t.Fatalf("first id: %d/%d, %v; want 5000/0", id, ep, err)
	}
	// A KIP-360 bump of the current epoch: locally an epoch bump, here a
	// fresh id.
	id, ep, err = g.r.InitProducerID(ctx, 5000, 0)
	if err != nil || id != 5001 || ep != 0 {
		t.Fatalf("bump: %d/%d, %v; want 5001/0", id, ep, err)
	}
	if id, _ := g.r.AllocateProducerID(ctx); id != 5002 {
		t.Fatalf("AllocateProducerID %d, want 5002", id)
	}
	if calls != 3 {
		t.Fatalf("allocator called %d times, want 3", calls)
	}
	if _, err := g.store.GetMeta(keyNextPID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("local producer-id counter written: %v", err)
	}
	if _, err := g.store.GetMeta(idKey(prefixEpoch, 5000)); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("local epoch bump written: %v", err)
	}
	boom := errors.New("etcd unreachable")
	g.cfg.ProducerIDs = func(context.Context) (int64, error) { return 0, boom }
	g.reopen()
	if _, _, err := g.r.InitProducerID(ctx, -1, -1); !errors.Is(err, boom) {
		t.Fatalf("allocator failure: %v", err)
	}
}

// No tier or view on a cache: with Config.Diskless, remote.storage.enable=true and
// kgateway.compacted.view.enable=true are invalid configs at create, at
// alter and at incremental alter; without it (and with a tier for
// remote storage) the same configs are taken.
func TestDisklessRefusesConfigs(t *testing.T) {
	for _, diskless := range []bool{true, false} {
		t.Run(fmt.Sprintf("diskless=%v", diskless), func(t *testing.T) {
			st, err := storage.Open(t.TempDir(), storage.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			tr := tier.New(st, nil, nil, tier.Options{}) // never used: validation only
			r, err := Open(st, Config{Diskless: diskless, Tier: tr, TierInterval: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if _, err := r.CreateTopic("plain", 1, 1, nil, false); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"remote.storage.enable", topicconfig.CompactedView} {
				cfg := map[string]string{name: "true"}
				errs := []error{}
				_, err := r.CreateTopic("x", 1, 1, cfg, true)
				errs = append(errs, err)
				errs = append(errs, r.AlterTopicConfigs("plain", cfg, true))
				errs = append(errs, r.IncrementalAlterTopicConfigs("plain", []topicconfig.Op{{Name: name, Op: topicconfig.OpSet, Value: "true"}}, true))
				for i, err := range errs {
					if diskless && !errors.Is(err, ErrInvalidConfig) {
						t.Fatalf("%s (call %d): %v, want ErrInvalidConfig", name, i, err)
					}
					if !diskless && err != nil {
						t.Fatalf("%s (call %d) without diskless: %v", name, i, err)
					}
				}
			}
		})
	}
}

// NOT_LEADER_OR_FOLLOWER after a refused write: a produce to a partition whose log the Replicator refused
// (storage ErrNotLeader) is ErrNotLeader, not a storage error, and so is
// every later produce to it.
func TestProduceNotLeader(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	g.produce("t", 0, plain(1, 1).encode())
	p, err := g.r.mu.partition("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	p.app.Lock()
	p.app.failed = fmt.Errorf("%w: %w", storage.ErrFailed, storage.ErrNotLeader)
	p.app.Unlock()
	for range 2 {
		_, err := g.r.Produce("t", 0, plain(1, 1).encode())
		if !errors.Is(err, ErrNotLeader) || errors.Is(err, ErrStorage) {
			t.Fatalf("produce after a refused replication: %v, want ErrNotLeader only", err)
		}
	}
	if err := appendErr("write", errors.New("disk on fire")); !errors.Is(err, ErrStorage) || errors.Is(err, ErrNotLeader) {
		t.Fatalf("other failures stay storage errors: %v", err)
	}
}

// refuser is a Replicator that refuses every log (this node owns none).
type refuser struct{ calls atomic.Int64 }

func (f *refuser) Replicate(es []storage.Replicated) map[storage.LogID]error {
	f.calls.Add(1)
	out := map[storage.LogID]error{}
	for _, e := range es {
		out[e.Log] = fmt.Errorf("fenced: %w", storage.ErrNotLeader)
	}
	return out
}

// NOT_LEADER_OR_FOLLOWER after a refused write through a real store: the Replicator's refusal reaches the
// producer as ErrNotLeader. Copied batches (NoReplicate) are not handed
// to it (the copy of the published batches).
func TestProduceNotLeaderReplicator(t *testing.T) {
	rep := &refuser{}
	g := newGatewayOpts(t, Config{}, storage.Options{Replicator: rep})
	g.create("t", 1, nil)
	if err := g.r.Replicas().ReplacePartition("t", 0, 0, feed([][]byte{at(plain(2, 1), 0)})); err != nil {
		t.Fatalf("copy under a refusing replicator: %v", err)
	}
	if rep.calls.Load() != 0 {
		t.Fatalf("copied batches were handed to the replicator")
	}
	_, err := g.r.Produce("t", 0, plain(1, 1).encode())
	if rep.calls.Load() == 0 {
		t.Skip("storage does not call Options.Replicator yet")
	}
	if !errors.Is(err, ErrNotLeader) || errors.Is(err, ErrStorage) {
		t.Fatalf("produce refused by the replicator: %v, want ErrNotLeader", err)
	}
	if _, err := g.r.Produce("t", 0, plain(1, 1).encode()); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("next produce: %v, want ErrNotLeader", err)
	}
}

// unTrimmable is a published log below a local copy whose start cannot
// move: Trim fails with err. It holds nothing below its start.
type unTrimmable struct {
	start ledger.Offset
	err   error
}

func (p unTrimmable) Start() (ledger.Offset, bool) { return p.start, true }
func (p unTrimmable) Candidates(context.Context, ledger.Offset, ledger.Offset) ([]ledger.PublishedRange, error) {
	return nil, nil
}
func (p unTrimmable) Read(context.Context, []ledger.PublishedRange) ([][]byte, error) {
	return nil, nil
}
func (p unTrimmable) Trim(context.Context, ledger.Offset) error { return p.err }

// DeleteRecords below the local copy: DeleteRecords that cannot move the published start answers
// according to why: a node that lost the partition is ErrNotLeader, one
// whose cluster kept changing until its deadline a timeout (both
// retriable), and only anything else a storage fault. Nothing moves.
func TestDeleteRecordsPublishedFailures(t *testing.T) {
	for _, c := range []struct {
		name    string
		err     error
		want    error
		storage bool
	}{
		{"fenced", fmt.Errorf("node: %w: fenced", storage.ErrNotLeader), ErrNotLeader, false},
		{"timeout", fmt.Errorf("%w: %w", context.DeadlineExceeded, errors.New("set start: concurrent changes")), context.DeadlineExceeded, false},
		{"fault", errors.New("etcd: corrupt record"), ErrStorage, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newGateway(t, Config{})
			g.create("t", 1, nil)
			src := [][]byte{at(plain(3, 1), 1000), at(plain(3, 2), 1003)}
			if err := g.r.Replicas().ReplacePartitionOver("t", 0, 1000, Cache{Published: unTrimmable{start: 1000, err: c.err}}, feed(src)); err != nil {
				t.Fatal(err)
			}
			_, err := g.r.DeleteRecords("t", 0, 1004)
			if !errors.Is(err, c.want) || errors.Is(err, ErrStorage) != c.storage {
				t.Fatalf("DeleteRecords: %v; want %v (a storage error: %v)", err, c.want, c.storage)
			}
			if off, _, err := g.r.ListOffset("t", 0, -2); err != nil || off != 1000 {
				t.Fatalf("log start %d, %v after a failed DeleteRecords, want 1000", off, err)
			}
		})
	}
}

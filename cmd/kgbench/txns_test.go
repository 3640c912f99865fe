package main

import (
	"context"
	"errors"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTransactionsRefusedIsAnError: a server that refuses transactional
// ids, as kgateway does before it has transactions (InitProducerId
// answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED), makes workload 8 return
// that error promptly: no hang until --workload-timeout, no panic. The
// refusal is injected into an in-process kfake.
func TestTransactionsRefusedIsAnError(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.ControlKey(int16(kmsg.InitProducerID), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		r := req.(*kmsg.InitProducerIDRequest)
		if r.TransactionalID == nil {
			return nil, nil, false
		}
		resp := r.ResponseKind().(*kmsg.InitProducerIDResponse)
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		return resp, nil, true
	})
	cfg, err := parseFlags([]string{"--records", "10", "--txn-records", "10", "--txn-interval", "10ms", "--duration", "1s"})
	if err != nil {
		t.Fatal(err)
	}
	b := newBench(cfg, &system{name: "refusing", addr: c.ListenAddrs()[0]})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var res Result
	err = b.transactions(ctx, &res)
	if !errors.Is(err, kerr.TransactionalIDAuthorizationFailed) || ctx.Err() != nil {
		t.Fatalf("workload 8 against a refusing server: %v (context: %v)", err, ctx.Err())
	}
	// The producer id is loaded before the schedule starts (warmup.go),
	// so the refusal comes from there, before the first transaction.
	if !strings.HasPrefix(err.Error(), "init producer id: ") {
		t.Errorf("error %q does not say where it failed", err)
	}
}

// TestUncommittedReadIsAnError: a record delivered to read_committed
// before its transaction's commit was asked for fails the workload, and
// one delivered after does not; so does a committed record that never
// arrived, with the consumers' fetch error.
func TestUncommittedReadIsAnError(t *testing.T) {
	b := newBench(&config{RecordSize: 64, TxnRecords: 1, Duration: time.Second}, nil)
	due := time.Now()
	rec := new(txnRecorder)
	rec.committing.Store(1) // transaction 0's commit has been asked for
	rec.delivered(b.txnValue(due, 0))
	rec.committedTxn(1, time.Millisecond)
	var res Result
	if err := b.fillTxnResult(&res, rec, time.Second, nil); err != nil {
		t.Fatalf("a committed record: %v", err)
	}
	if res.Records != 1 || len(res.Latency) != 5 {
		t.Errorf("result %+v", res)
	}
	rec.committing.Store(2)
	rec.committedTxn(1, time.Millisecond) // transaction 1 committed, never delivered
	fetchErr := errors.New("fetch: LSO stuck")
	if err := b.fillTxnResult(&res, rec, time.Second, fetchErr); !errors.Is(err, errCommittedNotDelivered) || !errors.Is(err, fetchErr) {
		t.Fatalf("a committed record never delivered: %v", err)
	}
	rec.delivered(b.txnValue(due, 2)) // transaction 2: not committing yet
	if err := b.fillTxnResult(&res, rec, time.Second, nil); !errors.Is(err, errUncommittedRead) {
		t.Fatalf("a record of an uncommitted transaction: %v", err)
	}
}

func TestTxnValueRoundTrip(t *testing.T) {
	b := newBench(&config{RecordSize: 16}, nil)
	due := time.Unix(0, 1234567890123)
	v := b.txnValue(due, 42)
	if len(v) != 16 || !sentAt(v).Equal(due) || txnNumber(v) != 42 {
		t.Errorf("value %x: sent %v, txn %d", v, sentAt(v), txnNumber(v))
	}
}

// fetchLevels records the isolation level of every Fetch request an
// in-process kfake receives, per topic ID (franz-go's fetches name topics
// by ID).
type fetchLevels struct {
	mu     sync.Mutex
	levels map[[16]byte]map[int8]int
}

func observeFetchLevels(c *kfake.Cluster) *fetchLevels {
	f := &fetchLevels{levels: map[[16]byte]map[int8]int{}}
	c.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		r := req.(*kmsg.FetchRequest)
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, t := range r.Topics {
			if f.levels[t.TopicID] == nil {
				f.levels[t.TopicID] = map[int8]int{}
			}
			f.levels[t.TopicID][r.IsolationLevel]++
		}
		return nil, nil, false // observed, then served as usual
	})
	return f
}

func (f *fetchLevels) of(t *testing.T, b *bench, topic string) map[int8]int {
	t.Helper()
	cl, err := b.client()
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	id, err := topicID(context.Background(), cl.SeedBrokers()[0], topic)
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.levels[id])
}

// TestIsolationLevelsOnTheWire: workload 8's consumers fetch with
// read_committed (1) only, and workload 9 reads with read_uncommitted (0)
// and read_committed (1), so each row measures what it is named after.
// In-process kfake, which serves the fetches and shows the requests.
func TestIsolationLevelsOnTheWire(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	levels := observeFetchLevels(c)
	cfg, err := parseFlags([]string{"--records", "50", "--txn-records", "8", "--txn-interval", "10ms",
		"--duration", "100ms", "--isolation-passes", "1"})
	if err != nil {
		t.Fatal(err)
	}
	b := newBench(cfg, &system{name: "kfake", addr: c.ListenAddrs()[0]})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var txn, ru, rc Result
	if err := b.transactions(ctx, &txn); err != nil {
		t.Fatal(err)
	}
	if err := b.isolationCost(ctx, &ru, &rc); err != nil {
		t.Fatal(err)
	}
	if got := levels.of(t, b, topicW8); got[1] == 0 || got[0] != 0 {
		t.Errorf("workload 8 fetches by isolation level: %v, want read_committed only", got)
	}
	if got := levels.of(t, b, topicW9); got[0] == 0 || got[1] == 0 {
		t.Errorf("workload 9 fetches by isolation level: %v, want both", got)
	}
	if txn.Records == 0 || ru.MBps == 0 || rc.MBps == 0 {
		t.Errorf("rows: %+v\n%+v\n%+v", txn, ru, rc)
	}
}

// Transactions need the idempotent producer: --idempotent=false, which
// the other workloads honour, does not break workload 8's client.
func TestTxnClientIgnoresIdempotentFalse(t *testing.T) {
	cfg, err := parseFlags([]string{"--idempotent=false"})
	if err != nil {
		t.Fatal(err)
	}
	b := &bench{cfg: cfg, sys: &system{addr: "127.0.0.1:1"}}
	cl, err := b.txnClient()
	if err != nil {
		t.Fatal(err)
	}
	cl.Close()
}

package main

import (
	"context"
	"errors"
	"strings"
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
	if !strings.HasPrefix(err.Error(), "transaction 1: ") {
		t.Errorf("error %q does not say where it failed", err)
	}
}

// TestUncommittedReadIsAnError: a record delivered to read_committed
// before its transaction's commit was asked for fails the workload, and
// one delivered after does not.
func TestUncommittedReadIsAnError(t *testing.T) {
	b := newBench(&config{RecordSize: 64, TxnRecords: 1, Duration: time.Second}, nil)
	due := time.Now()
	rec := new(txnRecorder)
	rec.committing.Store(1) // transaction 0's commit has been asked for
	rec.delivered(b.txnValue(due, 0))
	rec.committedTxn(1, time.Millisecond)
	var res Result
	if err := b.fillTxnResult(&res, rec, time.Second); err != nil {
		t.Fatalf("a committed record: %v", err)
	}
	if res.Records != 1 || len(res.Latency) != 5 {
		t.Errorf("result %+v", res)
	}
	rec.delivered(b.txnValue(due, 1)) // transaction 1: not committing yet
	if err := b.fillTxnResult(&res, rec, time.Second); !errors.Is(err, errUncommittedRead) {
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

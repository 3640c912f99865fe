package main

// txns.go is workload 8: transactions. One transactional producer begins a
// transaction every --txn-interval (back to back when 0), produces
// --txn-records records into it, spread over every partition of the topic,
// flushes and commits, for --duration. Consumers with read_committed tail
// the partitions. Each record carries the time its transaction was due to
// start, so end-to-end latency (due → delivered under read_committed) grows
// when a server falls behind the schedule instead of silently lowering the
// load, as in workload 4.
//
// Each record also carries its transaction's number. A read_committed
// consumer that receives a record before that transaction's commit was even
// asked for has seen uncommitted data: the workload fails, whatever the
// throughput.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	topicW8      = "kgbench-w8"
	w8Partitions = 4 // every transaction spans them all: one marker each
	w8Consumers  = 2 // read_committed consumers, each on half the partitions
	w8TxnID      = "kgbench-w8"
)

var (
	errUncommittedRead       = errors.New("kgbench: read_committed delivered records of a transaction whose commit had not been asked for")
	errCommittedNotDelivered = errors.New("kgbench: read_committed consumers did not get every committed record")
)

// txnRecorder collects workload 8's samples; the producer loop and the
// consumer goroutines add to it concurrently.
type txnRecorder struct {
	// committing is the number of transactions whose commit has been asked
	// for; a record of transaction k (0-based) may be delivered only once
	// committing > k.
	committing atomic.Int64
	early      atomic.Int64 // records delivered before that (must stay 0)
	mu         struct {
		sync.Mutex
		e2e, commit []time.Duration
		committed   int // records in committed transactions
		txns        int // committed transactions
	}
}

func (t *txnRecorder) delivered(v []byte) {
	if int64(txnNumber(v)) >= t.committing.Load() {
		t.early.Add(1)
	}
	d := time.Since(sentAt(v))
	t.mu.Lock()
	t.mu.e2e = append(t.mu.e2e, d)
	t.mu.Unlock()
}

// consume delivers cl's records to t until ctx ends and returns the last
// fetch error (the end of ctx is none).
func (t *txnRecorder) consume(ctx context.Context, cl *kgo.Client) error {
	var last error
	for ctx.Err() == nil {
		fetches := cl.PollFetches(ctx)
		fetches.EachError(func(_ string, _ int32, err error) {
			if ctx.Err() == nil {
				last = err
			}
		})
		fetches.EachRecord(func(r *kgo.Record) { t.delivered(r.Value) })
	}
	return last
}

func (t *txnRecorder) deliveredCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.mu.e2e)
}

func (t *txnRecorder) committedTxn(records int, took time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.commit = append(t.mu.commit, took)
	t.mu.committed += records
	t.mu.txns++
}

func (t *txnRecorder) committedRecords() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.committed
}

// txnValue is a record value of transaction txn, due at due: the due time
// in bytes 0–7 (read by sentAt), the transaction's number in bytes 8–15.
func (b *bench) txnValue(due time.Time, txn int) []byte {
	v := make([]byte, b.cfg.RecordSize)
	copy(v, b.payload)
	binary.BigEndian.PutUint64(v, uint64(due.UnixNano()))
	binary.BigEndian.PutUint64(v[8:], uint64(txn))
	return v
}

// txnNumber decodes the transaction number txnValue embedded.
func txnNumber(v []byte) int {
	if len(v) < 16 {
		return -1
	}
	return int(binary.BigEndian.Uint64(v[8:]))
}

// txnClient is the transactional producer. Transactions need the
// idempotent producer, so --idempotent=false does not apply to it.
func (b *bench) txnClient() (*kgo.Client, error) {
	return kgo.NewClient(append(b.clientOpts(),
		kgo.TransactionalID(w8TxnID),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	)...)
}

// readCommittedConsumers start w8Consumers read_committed consumers over
// the partitions of topicW8, from the start; the caller closes them.
func (b *bench) readCommittedConsumers() ([]*kgo.Client, error) {
	var out []*kgo.Client
	for c := range w8Consumers {
		parts := map[int32]kgo.Offset{}
		for p := c; p < w8Partitions; p += w8Consumers {
			parts[int32(p)] = kgo.NewOffset().AtStart()
		}
		cl, err := b.client(
			kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topicW8: parts}),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		)
		if err != nil {
			closeAll(out)
			return nil, err
		}
		out = append(out, cl)
	}
	return out, nil
}

func closeAll(cls []*kgo.Client) {
	for _, cl := range cls {
		cl.Close()
	}
}

// transactions is workload 8 (see the top of this file).
func (b *bench) transactions(ctx context.Context, res *Result) error {
	if err := b.createTopics(ctx, map[string]int32{topicW8: w8Partitions}); err != nil {
		return err
	}
	prod, err := b.txnClient()
	if err != nil {
		return err
	}
	defer prod.Close()
	cons, err := b.readCommittedConsumers()
	if err != nil {
		return err
	}
	defer closeAll(cons)

	// InitProducerID before the schedule starts (warmup.go): a
	// transaction coordinator that is still being created is set-up, not
	// a transaction's latency.
	if _, _, err := prod.ProducerID(ctx); err != nil {
		return fmt.Errorf("init producer id: %w", err)
	}
	rec := new(txnRecorder)
	consCtx, stopCons := context.WithCancel(ctx)
	defer stopCons()
	var consumers sync.WaitGroup
	fetchErrs := make([]error, len(cons))
	for i, cl := range cons {
		consumers.Go(func() { fetchErrs[i] = rec.consume(consCtx, cl) })
	}
	start := time.Now()
	err = b.runTxns(ctx, prod, rec, start)
	elapsed := time.Since(start)
	if err == nil {
		waitDrained(ctx, rec.committedRecords(), rec.deliveredCount)
	}
	stopCons()
	consumers.Wait()
	if err != nil {
		return err
	}
	return b.fillTxnResult(res, rec, elapsed, errors.Join(fetchErrs...))
}

// runTxns runs transactions on schedule until --duration has passed.
func (b *bench) runTxns(ctx context.Context, cl *kgo.Client, rec *txnRecorder, start time.Time) error {
	for txn := 0; ctx.Err() == nil; txn++ {
		due := start.Add(time.Duration(txn) * b.cfg.TxnInterval)
		if b.cfg.TxnInterval == 0 {
			due = time.Now()
		}
		if due.Sub(start) >= b.cfg.Duration {
			return nil
		}
		if err := sleepUntil(ctx, due); err != nil {
			return err
		}
		if err := b.oneTxn(ctx, cl, rec, txn, due); err != nil {
			return fmt.Errorf("transaction %d: %w", txn+1, err)
		}
	}
	return ctx.Err()
}

// oneTxn produces --txn-records records, round-robin over the partitions,
// in one transaction and commits it. An error leaves the transaction open:
// the workload ends there and closes the client.
func (b *bench) oneTxn(ctx context.Context, cl *kgo.Client, rec *txnRecorder, txn int, due time.Time) error {
	if err := cl.BeginTransaction(); err != nil {
		return err
	}
	var firstErr atomic.Pointer[error]
	for i := range b.cfg.TxnRecords {
		r := &kgo.Record{Topic: topicW8, Partition: int32(i % w8Partitions), Value: b.txnValue(due, txn)}
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				firstErr.CompareAndSwap(nil, &err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	if p := firstErr.Load(); p != nil {
		return fmt.Errorf("produce: %w", *p)
	}
	rec.committing.Store(int64(txn) + 1)
	commitStart := time.Now()
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	rec.committedTxn(b.cfg.TxnRecords, time.Since(commitStart))
	return nil
}

// sleepUntil waits until t or the end of ctx.
func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// fillTxnResult fills the row, or fails the workload when read_committed
// delivered what it must not, or not every committed record within
// drainAfterLoad of the last commit: percentiles over the records that
// did arrive would hide the ones that never did (a last stable offset
// that stopped moving), so that is an error, with the consumers' fetch
// errors (fetchErr).
func (b *bench) fillTxnResult(res *Result, rec *txnRecorder, elapsed time.Duration, fetchErr error) error {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if n := rec.early.Load(); n > 0 {
		return fmt.Errorf("%w: %d records", errUncommittedRead, n)
	}
	switch consumed := len(rec.mu.e2e); {
	case consumed > rec.mu.committed:
		return fmt.Errorf("kgbench: read_committed delivered %d records, only %d were committed", consumed, rec.mu.committed)
	case consumed < rec.mu.committed:
		err := fmt.Errorf("%w: %d of %d records within %s of the last commit", errCommittedNotDelivered, consumed, rec.mu.committed, drainAfterLoad)
		return errors.Join(err, fetchErr)
	}
	b.setThroughput(res, rec.mu.committed, elapsed)
	res.Latency = append(percentiles("e2e", rec.mu.e2e, 0.5, 0.99, 0.999),
		percentiles("commit", rec.mu.commit, 0.5, 0.99)...)
	every := "back to back"
	if b.cfg.TxnInterval > 0 {
		every = "every " + b.cfg.TxnInterval.String()
	}
	res.Notes = fmt.Sprintf("transactions of %d records over %d partitions, %s for %s; committed %d transactions, %d records; read_committed consumers (%d) got %d",
		b.cfg.TxnRecords, w8Partitions, every, b.cfg.Duration, rec.mu.txns, rec.mu.committed, w8Consumers, len(rec.mu.e2e))
	return nil
}

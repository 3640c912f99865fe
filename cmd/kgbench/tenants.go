package main

// tenants.go holds workload 13, fairness between tenants: tenant B
// produces at a steady rate and tails its topic while tenant A floods the
// same server with produce and fetch, first unthrottled, then under a
// client quota (KIP-13: producer_byte_rate and consumer_byte_rate on A's
// client id). B's latencies in each phase, beside B alone, show whether
// one tenant can take another's share, and whether a quota stops it.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	workloadFairness = 13 // this workload's number: a row per phase
	topicW13A        = "kgbench-w13-a"
	topicW13B        = "kgbench-w13-b"
	tenantAClientID  = "kgbench-tenant-a"
	w13APartitions   = 4
	w13AProducers    = 2
)

// fairnessRows are workload 13's rows, one per phase, in the order run.
var fairnessRows = []string{"13 fairness: B alone", "13 fairness: B + A flood", "13 fairness: B + A quota'd"}

// fairness is workload 13. Each phase runs B's paced load (--tenant-rate
// MB/s, --duration) to its own topic; the second and third run A's flood
// beside it, the third with A's client id under a quota of --tenant-quota
// MB/s each way. A row's MB/s and latencies are B's; its notes give what
// A moved. A server without AlterClientQuotas leaves the third row
// unsupported.
func (b *bench) fairness(ctx context.Context, rows []Result) error {
	if err := b.createTopics(ctx, map[string]int32{topicW13A: w13APartitions}); err != nil {
		return err
	}
	for i := range rows {
		flood, quota := i > 0, i == 2
		if quota {
			if err := b.setTenantQuota(ctx, b.cfg.TenantQuotaMBps); err != nil {
				rows[i].Unsupported = err.Error()
				continue
			}
		}
		// B's topic is new in every phase, so its consumer reads from
		// the start and sees only this phase's records.
		topicB := fmt.Sprintf("%s-%d-%d", topicW13B, i, time.Now().UnixNano())
		err := b.createTopics(ctx, map[string]int32{topicB: 1})
		if err == nil {
			err = b.measure(&rows[i], func() error { return b.fairnessPhase(ctx, &rows[i], topicB, flood) })
		}
		if quota {
			_ = b.setTenantQuota(ctx, 0) // leave no quota behind for later rounds
		}
		if err != nil {
			rows[i].Error = err.Error()
		}
	}
	return nil
}

// fairnessPhase runs B's load, with A's flood beside it if flood. A runs
// in a process of its own (tenantproc.go): its client work is not B's.
// The row's client CPU is kgbench's, B's, alone.
func (b *bench) fairnessPhase(ctx context.Context, res *Result, topicB string, flood bool) error {
	var a *floodProc
	if flood {
		var err error
		if a, err = b.startFloodProc(); err != nil {
			return err
		}
	}
	err := b.tenantLoad(ctx, res, pace{topic: topicB, mbps: b.cfg.TenantMBps, duration: b.cfg.Duration})
	if a != nil {
		produced, fetched, secs, aerr := a.stop()
		if aerr != nil && err == nil {
			err = aerr
		}
		if secs > 0 {
			res.Notes += fmt.Sprintf("; A produced %.1f MB/s, fetched %.1f MB/s",
				float64(produced)/bytesPerMB/secs, float64(fetched)/bytesPerMB/secs)
		}
	}
	return err
}

// floodCounts are the bytes tenant A moved.
type floodCounts struct {
	start             time.Time
	produced, fetched atomic.Int64
}

// startFlood starts tenant A: w13AProducers producers sending as fast as
// the server takes them, and one consumer reading their topic from the
// start, all under A's client id.
func (b *bench) startFlood(ctx context.Context, wg *sync.WaitGroup, moved *floodCounts) error {
	moved.start = time.Now()
	for range w13AProducers {
		cl, err := b.client(kgo.ClientID(tenantAClientID), kgo.DefaultProduceTopic(topicW13A), kgo.MaxBufferedRecords(10_000))
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cl.Close()
			for ctx.Err() == nil {
				cl.Produce(ctx, &kgo.Record{Value: b.payload}, func(r *kgo.Record, err error) {
					if err == nil {
						moved.produced.Add(int64(len(r.Value)))
					}
				})
			}
		}()
	}
	cons, err := b.client(kgo.ClientID(tenantAClientID), kgo.ConsumeTopics(topicW13A), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return err
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer cons.Close()
		for ctx.Err() == nil {
			cons.PollFetches(ctx).EachRecord(func(r *kgo.Record) { moved.fetched.Add(int64(len(r.Value))) })
		}
	}()
	return nil
}

// tenantLoad is B: p's paced load with a consumer tailing its topic,
// reported as workload 4 reports its load (ack and end-to-end latency).
func (b *bench) tenantLoad(ctx context.Context, res *Result, p pace) error {
	run, err := b.pacedLoad(ctx, p, []kgo.Opt{kgo.ProducerLinger(b.cfg.LoadLinger), kgo.ClientID("kgbench-tenant-b")},
		[]kgo.Opt{kgo.ClientID("kgbench-tenant-b"), kgo.ConsumeTopics(p.topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())})
	if err != nil {
		return err
	}
	return fillPacedResult(b, res, run, p)
}

// fillPacedResult fills res from a paced load: the acknowledged
// throughput, ack and end-to-end percentiles.
func fillPacedResult(b *bench, res *Result, run pacedRun, p pace) error {
	rec, sent, consumed, elapsed := run.rec, run.sent, run.consumed, run.elapsed
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.mu.ackErr != nil {
		return fmt.Errorf("produce: %w", rec.mu.ackErr)
	}
	b.setThroughput(res, len(rec.mu.ack), elapsed)
	res.Latency = append(percentiles("ack", rec.mu.ack, 0.5, 0.99, 0.999),
		percentiles("e2e", rec.mu.e2e, 0.5, 0.99, 0.999)...)
	res.Notes = fmt.Sprintf("offered %.0f MB/s to %s for %s; sent %d, consumed %d",
		p.mbps, p.topic, p.duration, sent, consumed)
	return nil
}

// setTenantQuota sets (mbps > 0) or removes A's producer and consumer byte
// rates on its client id.
func (b *bench) setTenantQuota(ctx context.Context, mbps float64) error {
	if err := b.serverSupports(ctx, apiNeed{kmsg.AlterClientQuotas, 0}); err != nil {
		return err
	}
	cl, err := b.client()
	if err != nil {
		return err
	}
	defer cl.Close()
	name := tenantAClientID
	var ops []kadm.AlterClientQuotaOp
	for _, key := range []string{"producer_byte_rate", "consumer_byte_rate"} {
		ops = append(ops, kadm.AlterClientQuotaOp{Key: key, Value: mbps * bytesPerMB, Remove: mbps <= 0})
	}
	altered, err := kadm.NewClient(cl).AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{
		Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: &name}}, Ops: ops,
	}})
	if err != nil {
		return fmt.Errorf("AlterClientQuotas: %w", err)
	}
	for _, a := range altered {
		if a.Err != nil {
			return fmt.Errorf("AlterClientQuotas %v: %w (%s)", a.Entity, a.Err, a.ErrMessage)
		}
	}
	return nil
}

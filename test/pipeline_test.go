package test

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// An idempotent producer pipelines up to five produce requests per
// connection; requests in effect one at a time keeps their appends in order, so none fails with
// OUT_OF_ORDER_SEQUENCE_NUMBER and the log holds the records in produce
// order.
func TestPipelinedIdempotentProduceKeepsOrder(t *testing.T) {
	g := newGateway(t)
	g.createTopic("ordered", 1)
	prod := g.client(kgo.DefaultProduceTopic("ordered"), kgo.ProducerLinger(0), kgo.ProducerBatchMaxBytes(1024))
	const n = 3000
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	ctx := testCtx(t)
	for i := 0; i < n; i++ {
		wg.Add(1)
		prod.Produce(ctx, &kgo.Record{Value: []byte(strconv.Itoa(i))}, func(_ *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("produce: %v", firstErr)
	}
	got := consumeN(t, g, "ordered", n)
	for i, r := range got {
		if string(r.Value) != strconv.Itoa(i) || r.Offset != int64(i) {
			t.Fatalf("offset %d holds %q", r.Offset, r.Value)
		}
	}
}

// With fewer than MinBytes available the fetch waits MaxWait, then answers
// with what it has.
func TestFetchMinBytesTimesOut(t *testing.T) {
	g := newGateway(t)
	g.createTopic("minbytes", 1)
	cl := g.client()
	produceRaw(t, cl, "minbytes", makeBatch(batchSpec{records: 1, pid: -1, baseTime: 1}))
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis, req.MinBytes = 50, 1<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = "minbytes", topicID(t, cl, "minbytes")
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := request[*kmsg.FetchResponse](t, cl, req)
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || len(batchesOf(t, p.RecordBatches)) != 1 {
		t.Fatalf("fetch: error %d, %d bytes", p.ErrorCode, len(p.RecordBatches))
	}
}

// fetchWritten signals when a client has written a Fetch request.
type fetchWritten chan struct{}

func (f fetchWritten) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == 1 && err == nil {
		select {
		case f <- struct{}{}:
		default:
		}
	}
}

// Closing the server ends a long-poll fetch at once rather than after
// MaxWait (the shutdown timeout here is longer than the test deadline).
func TestCloseEndsLongPoll(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{shutdownTimeout: time.Hour})
	g.createTopic("closing", 1)
	written := make(fetchWritten, 1)
	cl := g.client(kgo.ConsumeTopics("closing"), kgo.FetchMaxWait(time.Hour/2), kgo.WithHooks(written))
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		cl.PollFetches(testCtx(t)) // ends when the client closes
	}()
	select {
	case <-written:
	case <-time.After(testDeadline):
		t.Fatal("consumer never fetched")
	}
	stopped := make(chan struct{})
	go func() { g.stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(testDeadline):
		t.Fatal("server close waited for a long-poll fetch")
	}
	cl.Close()
	<-polled
}

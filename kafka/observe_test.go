package kafka

import (
	"net"
	"testing"
	"time"

	"github.com/kgateway/kgateway/kafka/connection"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

type countingObserver struct {
	requests       map[string]int
	took           time.Duration
	produce, fetch map[string]int
}

func (o *countingObserver) Request(api string, _ int, took time.Duration) {
	o.requests[api]++
	o.took = took
}
func (o *countingObserver) Response(string, int)             {}
func (o *countingObserver) ProduceBytes(topic string, n int) { o.produce[topic] += n }
func (o *countingObserver) FetchBytes(topic string, n int)   { o.fetch[topic] += n }

// The slow-request log counts handling time only: a long-poll wait is
// subtracted. Every request is logged at debug.
func TestObserveSlowRequestExcludesLongPoll(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	obs := &countingObserver{requests: map[string]int{}, produce: map[string]int{}, fetch: map[string]int{}}
	s := &Server{cfg: Config{SlowRequest: time.Second, Observer: obs}.WithDefaults(), log: zap.New(core)}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	client := "cl"
	run := func(key int16, handled, waited time.Duration, req kmsg.Request, resp kmsg.Response) {
		rc := &reqCtx{conn: &conn{nc: a}, clientID: &client}
		rc.stats.arrived, rc.stats.waited, rc.stats.size = time.Now().Add(-handled-waited), waited, 10
		s.observe(&connection.Slot{Key: key, Version: 4, Resp: resp}, rc, req)
	}
	fetchResp := kmsg.NewPtrFetchResponse()
	ft := kmsg.NewFetchResponseTopic()
	ft.Topic = "t"
	fp := kmsg.NewFetchResponseTopicPartition()
	fp.RecordBatches = make([]byte, 70)
	ft.Partitions = append(ft.Partitions, fp)
	fetchResp.Topics = append(fetchResp.Topics, ft)

	run(1, 10*time.Millisecond, 5*time.Second, kmsg.NewPtrFetchRequest(), fetchResp) // long poll: not slow
	if n := logs.FilterMessage("slow-request").Len(); n != 0 {
		t.Fatalf("a long poll was logged as slow")
	}
	if obs.took > time.Second || obs.requests["Fetch"] != 1 || obs.fetch["t"] != 70 {
		t.Fatalf("observer: %+v", obs)
	}
	run(3, 2*time.Second, 0, kmsg.NewPtrMetadataRequest(), kmsg.NewPtrMetadataResponse()) // slow
	slow := logs.FilterMessage("slow-request").All()
	if len(slow) != 1 || slow[0].ContextMap()["api"] != "Metadata" || slow[0].ContextMap()["client-id"] != "cl" {
		t.Fatalf("slow-request logs: %+v", slow)
	}
	if n := logs.FilterMessage("request").FilterLevelExact(zapcore.DebugLevel).Len(); n != 2 {
		t.Fatalf("%d debug request logs, want 2", n)
	}
}

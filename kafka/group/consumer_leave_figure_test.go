package group

import (
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestConsumerLeavesAtOnceFigure reports what 100 members of a consumer
// group leaving at once cost: the time from the start until the last
// leave is answered, and the synced writes of the offsets store (real
// files, fsynced) they took. A figure, not a rule: it runs only with
// KGW_LEAVES_FIGURE set, KGW_LEAVES_FIGURE times (BENCHMARKS.md, "KIP-848
// leaves in one write").
func TestConsumerLeavesAtOnceFigure(t *testing.T) {
	rounds, _ := strconv.Atoi(os.Getenv("KGW_LEAVES_FIGURE"))
	if rounds <= 0 {
		t.Skip("KGW_LEAVES_FIGURE not set")
	}
	for range rounds {
		topics := &staticTopics{}
		topics.add("t", 200)
		gate := &writeGate{}
		h := &harness{t: t, clock: newFakeClock(), dir: t.TempDir(), cfg: Config{Metadata: topics}, writeHook: gate.write}
		h.open()
		ms := make([]*cm, 100)
		for i := range ms {
			ms[i] = &cm{id: "m" + strconv.Itoa(i), topics: []string{"t"}}
			code(t, "join", h.beat("g", ms[i], true).ErrorCode, nil)
		}
		start, codes := make(chan struct{}), make(chan int16, len(ms))
		var ready sync.WaitGroup
		for _, m := range ms {
			ready.Add(1)
			go func() {
				m.epoch = epochLeave
				ready.Done()
				<-start
				codes <- h.beat("g", m, false).ErrorCode
			}()
		}
		ready.Wait()
		writes := gate.count()
		began := time.Now()
		close(start)
		for range ms {
			code(t, "leave", <-codes, nil)
		}
		took := time.Since(began)
		t.Logf("leave100 last_answered_ms=%.2f writes=%d", float64(took.Microseconds())/1000, gate.count()-writes)
		h.close()
	}
}

package group

import (
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestConsumerJoinsAtOnceFigure reports what 100 members joining a new
// consumer group at once cost: the time from the start until the last
// join is answered, and the synced writes of the offsets store (real
// files, fsynced) they took. A figure, not a rule: it runs only with
// KGW_JOINS_FIGURE set, KGW_JOINS_FIGURE times.
func TestConsumerJoinsAtOnceFigure(t *testing.T) {
	rounds, _ := strconv.Atoi(os.Getenv("KGW_JOINS_FIGURE"))
	if rounds <= 0 {
		t.Skip("KGW_JOINS_FIGURE not set")
	}
	for range rounds {
		topics := &staticTopics{}
		topics.add("t", 100)
		gate := &writeGate{}
		h := &harness{t: t, clock: newFakeClock(), dir: t.TempDir(), cfg: Config{Metadata: topics}, writeHook: gate.write}
		h.open()
		ms := make([]*cm, 100)
		start, codes := make(chan struct{}), make(chan int16, len(ms))
		var ready sync.WaitGroup
		for i := range ms {
			ms[i] = &cm{id: "m" + strconv.Itoa(i), topics: []string{"t"}}
			ready.Add(1)
			go func() {
				ready.Done()
				<-start
				codes <- h.beat("g", ms[i], true).ErrorCode
			}()
		}
		ready.Wait()
		writes := gate.count()
		began := time.Now()
		close(start)
		for range ms {
			code(t, "join", <-codes, nil)
		}
		took := time.Since(began)
		t.Logf("join100 last_answered_ms=%.2f writes=%d", float64(took.Microseconds())/1000, gate.count()-writes)
		h.close()
	}
}

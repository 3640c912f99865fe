package group

import (
	"sync/atomic"
	"time"

	"github.com/kgateway/kgateway/kafka/clock"
)

// Clock is the coordinator's time source (kafka/clock): tests inject a
// fake one to drive session and rebalance timeouts without sleeping.
type Clock = clock.Clock

// Timer is a stoppable pending call.
type Timer = clock.Timer

// after calls f after d on the coordinator's clock. With d = 0 it calls f
// on a goroutine of its own at once, as Kafka's coordinator queues a
// timer of 0 ms behind the events it already has: f then waits for the
// group's lock with the requests that were already waiting for it.
func (c *Coordinator) after(d time.Duration, f func()) Timer {
	if d > 0 {
		return c.clock.AfterFunc(d, f)
	}
	t := new(nowTimer)
	go func() {
		if !t.stopped.Load() {
			f()
		}
	}()
	return t
}

// nowTimer is a call of after with no delay; Stop keeps f from running
// if its goroutine has not started it yet.
type nowTimer struct{ stopped atomic.Bool }

func (t *nowTimer) Stop() bool { return !t.stopped.Swap(true) }

package txn

import "time"

// Clock is the coordinator's time source. Tests inject a fake one to drive
// transaction timeouts and id expiration without sleeping.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d, unless stopped.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a stoppable pending call.
type Timer interface {
	Stop() bool
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

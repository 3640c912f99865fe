// Package clock is the time source of the coordinators (kafka/group,
// kafka/txn): session, rebalance and transaction timeouts and id
// expiration read it, so that tests drive them with a fake clock instead
// of sleeping.
package clock

import "time"

// Clock is a coordinator's time source.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d, unless stopped;
	// with d ≤ 0 at once, as time.AfterFunc does.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a stoppable pending call.
type Timer interface {
	Stop() bool
}

// Real is the wall clock: time.Now and time.AfterFunc.
type Real struct{}

func (Real) Now() time.Time { return time.Now() }

func (Real) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

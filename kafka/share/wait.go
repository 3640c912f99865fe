package share

import (
	"reflect"
	"time"
)

// WaitAny waits, in one select over every channel (no goroutine per
// partition), for done (the connection dies), closing (the server
// closes), appended (an append to a watched partition), the time until,
// or any of wake (a release or expiry on one of the partitions). It
// reports whether a wait ended for a reason a fetch answers (not done or
// closing).
func WaitAny(done, closing <-chan struct{}, appended <-chan struct{}, until time.Time, wake []<-chan struct{}) bool {
	timer := time.NewTimer(time.Until(until))
	defer timer.Stop()
	cases := []reflect.SelectCase{
		{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(done)},
		{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(closing)},
		{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(appended)},
		{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(timer.C)},
	}
	for _, c := range wake {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(c)})
	}
	chosen, _, _ := reflect.Select(cases)
	return chosen >= 2 // not done or closing
}

package wire

import (
	"context"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// testDeadline bounds every wait of these tests.
const testDeadline = 20 * time.Second

// waitFor polls cond until it holds, failing at testDeadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not before the deadline", what)
		}
		time.Sleep(time.Millisecond) // polling a condition, bounded by the deadline
	}
}

// The request memory budget progress rule: frames that together need more than the budget, all
// waiting for more of it while holding part, do not deadlock: the one
// nearest completion is let through.
func TestBudgetProgressRule(t *testing.T) {
	b := NewBudget(10)
	ctx := context.Background()
	for range 2 {
		if err := b.Acquire(ctx, nil, 5); err != nil {
			t.Fatal(err)
		}
	}
	// Two frames of 8 bytes, 5 held each (in use: all 10), both need 3.
	first := make(chan struct{})
	go func() { b.Grow(ctx, nil, 5, 3); close(first) }()
	waitFor(t, "first frame waits", func() bool { return b.Waiting() == 1 })
	second := make(chan struct{})
	go func() { b.Grow(ctx, nil, 5, 3); close(second) }()
	select { // granted beyond the budget: every byte was held by waiters
	case <-first:
	case <-time.After(testDeadline):
		t.Fatal("frames holding the whole budget deadlocked")
	}
	if n := b.InUse(); n != 13 {
		t.Fatalf("in use %d, want 13", n)
	}
	// The second still waits: the first's 8 bytes will come back.
	if b.Waiting() != 1 {
		t.Fatal("second frame not waiting")
	}
	b.Release(8)
	<-second
	b.Release(8)
	if n := b.InUse(); n != 0 {
		t.Fatalf("in use %d after every release", n)
	}
}

func TestByteBudgetFIFOAndGiveUp(t *testing.T) {
	b := NewBudget(10)
	ctx := context.Background()
	if err := b.Acquire(ctx, nil, 8); err != nil {
		t.Fatal(err)
	}
	got := make(chan int64, 2)
	go func() { b.Acquire(ctx, nil, 5); got <- 5 }()
	waitFor(t, "first waiter queued", func() bool { return b.Waiting() == 1 })
	go func() { b.Acquire(ctx, nil, 1); got <- 1 }() // fits, but FIFO: behind 5
	waitFor(t, "second waiter queued", func() bool { return b.Waiting() == 2 })
	stop := make(chan struct{})
	gaveUp := make(chan error)
	go func() { gaveUp <- b.Acquire(ctx, stop, 10) }()
	waitFor(t, "third waiter queued", func() bool { return b.Waiting() == 3 })
	close(stop)
	if err := <-gaveUp; err == nil {
		t.Fatal("acquire succeeded after stop")
	}
	b.Release(8)
	if a, b := <-got, <-got; a+b != 6 {
		t.Fatalf("granted %d and %d, want 5 and 1", a, b)
	}
	b.Release(6)
	if n := b.InUse(); n != 0 {
		t.Fatalf("in use %d after every release", n)
	}
}

// The connection limit: running out of descriptors (or a connection reset while queued)
// pauses accepting; any other accept error is final.
func TestRetryableAccept(t *testing.T) {
	for err, want := range map[error]bool{
		&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EMFILE)}:       true,
		&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.ENFILE)}:       true,
		&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.ECONNABORTED)}: true,
		&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EINVAL)}:       false,
		net.ErrClosed: false,
	} {
		if got := RetryableAccept(err); got != want {
			t.Errorf("RetryableAccept(%v) = %v", err, got)
		}
	}
}

package node

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/diskless"
	"github.com/kgateway/kgateway/cluster/owner"
	"github.com/kgateway/kgateway/storage"
)

func TestRebuildBackoffSchedule(t *testing.T) {
	want := []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond,
		800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond, 6400 * time.Millisecond,
		10 * time.Second, 10 * time.Second}
	for fails, w := range want {
		if got := rebuildBackoff(fails); got != w {
			t.Errorf("rebuildBackoff(%d) = %v, want %v", fails, got, w)
		}
	}
	if got := rebuildBackoff(1000); got != rebuildBackoffMax {
		t.Errorf("rebuildBackoff(1000) = %v, want the cap %v", got, rebuildBackoffMax)
	}
}

// TestRebuildRetriesBackOff replays, on a fake clock, placement rounds
// every 25 ms (the pace at which a failed rebuild's release wakes the
// next round) for 70 s, with a partition whose rebuild always fails:
// it is attempted at the backoff's pace (7 attempts to reach the 10 s
// cap, then one per 10 s), not at every round; another partition is
// unaffected; and a success resets the schedule.
func TestRebuildRetriesBackOff(t *testing.T) {
	var r retries
	now := time.Unix(0, 0)
	attempts, other := 0, 0
	for end := now.Add(70 * time.Second); now.Before(end); now = now.Add(25 * time.Millisecond) {
		for _, k := range r.due([]string{"bad", "good"}, now) {
			if k == "bad" {
				attempts++
				r.failed("bad", now)
			} else {
				other++
				r.succeeded("good")
			}
		}
	}
	// 0.1+0.2+...+6.4 s = 12.7 s for the first 8 attempts, then one per
	// 10 s over the remaining 57.3 s: 13 or 14 attempts.
	if attempts < 12 || attempts > 15 {
		t.Errorf("%d rebuild attempts in 70 s of rounds every 25 ms, want 12..15 (backoff to 10 s)", attempts)
	}
	if other != 2800 {
		t.Errorf("a healthy partition was tried %d times, want every round (2800)", other)
	}
	r.succeeded("bad")
	if got := r.due([]string{"bad"}, now); len(got) != 1 {
		t.Fatal("a partition is still held back after a success")
	}
	if d := r.failed("bad", now); d != rebuildBackoffMin {
		t.Errorf("first failure after a success waits %v, want %v", d, rebuildBackoffMin)
	}
}

// TestTrimRetriesTransientConflicts: a DeleteRecords below the local copy
// (published.Trim) that meets the owner's own merge is retried, never
// handed to the client as a storage fault; a lost ownership is
// storage.ErrNotLeader at once; conflicts that outlast the budget are a
// timeout (REQUEST_TIMED_OUT, retriable); any other error is returned
// as it is, at once.
func TestTrimRetriesTransientConflicts(t *testing.T) {
	ctx := context.Background()
	conflict := fmt.Errorf("diskless: p: set start: %w", diskless.ErrConflict)
	calls := 0
	err := retryTransient(ctx, time.Minute, func(context.Context) error {
		calls++
		switch calls {
		case 1:
			return conflict
		case 2:
			return fmt.Errorf("diskless: object records: %w", diskless.ErrStale)
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("two transient failures then success: %v after %d calls, want nil after 3", err, calls)
	}
	calls = 0
	err = retryTransient(ctx, time.Minute, func(context.Context) error {
		calls++
		return fmt.Errorf("diskless: p: %w", &owner.FencedError{Lost: []string{"p"}})
	})
	if !errors.Is(err, storage.ErrNotLeader) || calls != 1 {
		t.Fatalf("fenced: %v after %d calls, want storage.ErrNotLeader after 1", err, calls)
	}
	calls = 0
	err = retryTransient(ctx, 50*time.Millisecond, func(context.Context) error {
		calls++
		return conflict
	})
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, diskless.ErrConflict) || calls < 2 {
		t.Fatalf("conflicts past the budget: %v after %d calls, want a timeout after retries", err, calls)
	}
	calls = 0
	boom := errors.New("diskless: p: corrupt")
	err = retryTransient(ctx, time.Minute, func(context.Context) error {
		calls++
		return boom
	})
	if err != boom || calls != 1 {
		t.Fatalf("a lasting error: %v after %d calls, want it as is after 1", err, calls)
	}
}

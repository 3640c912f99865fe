package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFairnessAgainstKfake runs workload 13 at toy sizes: three rows of
// B's paced load, each with its ack and end-to-end figures; the flooded
// rows say what A moved, and A's quota is removed afterwards.
func TestFairnessAgainstKfake(t *testing.T) {
	b, _ := inProcessKfake(t, []string{"--duration", "1s", "--tenant-rate", "1", "--tenant-quota", "1"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rows := b.runWorkload(ctx, workloadFairness)
	if got := workloadRowNames(rows); !slices.Equal(got, fairnessRows) {
		t.Fatalf("rows %q", got)
	}
	for i, r := range rows {
		if r.Error != "" || r.Unsupported != "" || r.Records == 0 || r.MBps <= 0 {
			t.Errorf("%+v", r)
		}
		if names := figureNames(r); !slices.Contains(names, "ack p99") || !slices.Contains(names, "e2e p99") {
			t.Errorf("%s: figures %q", r.Workload, names)
		}
		if flooded := strings.Contains(r.Notes, "A produced"); flooded != (i > 0) {
			t.Errorf("%s: notes %q", r.Workload, r.Notes)
		}
	}
	cl, err := b.client()
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := kmsg.NewPtrDescribeClientQuotasRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Entries) != 0 {
		t.Errorf("quota left behind: %+v", resp.Entries)
	}
}

// TestFairnessQuotaUnsupported: a server without AlterClientQuotas gets an
// unsupported third row and measured first two.
func TestFairnessQuotaUnsupported(t *testing.T) {
	b, _ := inProcessKfake(t, []string{"--duration", "1s", "--tenant-rate", "1"}, withoutKeys(kmsg.AlterClientQuotas))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rows := b.runWorkload(ctx, workloadFairness)
	if rows[2].Unsupported == "" || rows[0].Records == 0 || rows[1].Records == 0 {
		t.Fatalf("%+v", rows)
	}
}

// TestSpreadLoadsAgainstKfake runs workloads 14 and 15 briefly: every
// record sent is acknowledged and consumed, with publish and end-to-end
// p50, p99 and p99.9.
func TestSpreadLoadsAgainstKfake(t *testing.T) {
	b, _ := inProcessKfake(t, []string{"--duration", "1s", "--rate", "1"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, w := range []int{14, 15} {
		rows := b.runWorkload(ctx, w)
		r := rows[0]
		if r.Error != "" || r.Records == 0 {
			t.Fatalf("workload %d: %+v", w, r)
		}
		want := []string{"ack p50", "ack p99", "ack p99.9", "e2e p50", "e2e p99", "e2e p99.9"}
		if got := figureNames(r); !slices.Equal(got, want) {
			t.Errorf("workload %d figures %q", w, got)
		}
		if !strings.Contains(r.Notes, fmt.Sprintf("consumed %d over", r.Records)) {
			t.Errorf("workload %d notes %q", w, r.Notes)
		}
	}
}

package main

import (
	"slices"
	"testing"
)

func TestABBAOrder(t *testing.T) {
	if got := abbaOrder("u", "c", 3); !slices.Equal(got, []string{"u", "c", "c", "u", "u", "c"}) {
		t.Errorf("abbaOrder = %q", got)
	}
}

// A CPU ratio is given only when both sides are well above /proc's 10 ms
// tick: a per-pass reading of 0 or 1 tick would make it noise.
func TestCPURatio(t *testing.T) {
	for _, tc := range []struct {
		rc, ru float64
		want   string
	}{
		{0.3, 0.2, ", server CPU ×1.500"},
		{0.1, 0.1, ", server CPU ×1.000"},
		{0.01, 0.5, ""},
		{0.5, 0, ""},
	} {
		if got := cpuRatio(tc.rc, tc.ru); got != tc.want {
			t.Errorf("cpuRatio(%v, %v) = %q, want %q", tc.rc, tc.ru, got, tc.want)
		}
	}
}

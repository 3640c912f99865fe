package txnstate

import (
	"math"
	"testing"
)

// The leader's marker epoch rule by transaction version (KIP-1228).
func TestMarkerFenced(t *testing.T) {
	for _, c := range []struct {
		tv             int8
		epoch, current int16
		open, fenced   bool
	}{
		{0, 4, 5, true, true},
		{0, 5, 5, true, false},
		{1, 6, 5, true, false},
		{1, 4, 5, false, true},
		{2, 5, 5, true, true},                          // TV2: not bumped
		{2, 4, 5, true, true},                          // TV2: older
		{2, 6, 5, true, false},                         // TV2: the bumped epoch
		{2, 5, 5, false, false},                        // TV2: a retried marker, the transaction ended
		{2, 4, 5, false, true},                         // TV2: older, even with nothing open
		{2, math.MaxInt16, math.MaxInt16, true, false}, // TV2: the last epoch
		{3, 5, 5, true, true},                          // later versions check as 2 does
	} {
		if got := MarkerFenced(c.tv, c.epoch, c.current, c.open); got != c.fenced {
			t.Errorf("tv %d epoch %d current %d open %v: fenced %v, want %v", c.tv, c.epoch, c.current, c.open, got, c.fenced)
		}
	}
}

package replicas

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestReassign(t *testing.T) {
	live := func(id int32) bool { return id >= 1 && id <= 3 }
	for _, tc := range []struct {
		current, target []int32
		allowRF         bool
		want            int16
		msg             string
	}{
		{[]int32{1}, []int32{1}, true, 0, ""},
		{[]int32{1}, nil, true, kerr.NoReassignmentInProgress.Code, ""},
		{[]int32{1}, []int32{}, true, kerr.InvalidReplicaAssignment.Code, "The manual partition assignment includes an empty replica list."},
		{[]int32{1}, []int32{9, 1}, true, kerr.InvalidReplicaAssignment.Code, "The manual partition assignment includes broker 9, but no such broker is registered."},
		{[]int32{1}, []int32{2, 2}, true, kerr.InvalidReplicaAssignment.Code, "The manual partition assignment includes the broker 2 more than once."},
		{[]int32{1}, []int32{1, 2}, false, kerr.InvalidReplicationFactor.Code, "The replication factor is changed from 1 to 2"},
		{[]int32{1}, []int32{2}, true, kerr.InvalidReplicaAssignment.Code, ""}, // a move to a named node: placement is hashed
		{nil, []int32{1}, true, kerr.InvalidReplicaAssignment.Code, ""},        // no owner now: still a placement by name
	} {
		o := Reassign(tc.current, tc.target, live, tc.allowRF)
		if o.Code != tc.want || (tc.msg != "" && o.Message != tc.msg) {
			t.Errorf("%v -> %v: %+v, want %d %q", tc.current, tc.target, o, tc.want, tc.msg)
		}
	}
}

func TestElect(t *testing.T) {
	if Elect(Unclean, true).Code != kerr.ElectionNotNeeded.Code || Elect(Preferred, true).Code != kerr.ElectionNotNeeded.Code {
		t.Error("a led single-replica partition needs an election")
	}
	if Elect(Preferred, false).Code != kerr.PreferredLeaderNotAvailable.Code || Elect(Unclean, false).Code != kerr.EligibleLeadersNotAvailable.Code {
		t.Error("a partition without a leader")
	}
	if ValidElection(2) || !ValidElection(Unclean) {
		t.Error("election types")
	}
}

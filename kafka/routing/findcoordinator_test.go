package routing

import (
	"encoding/base64"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFindShareCoordinator answers a well-formed share-state key
// COORDINATOR_NOT_AVAILABLE and a malformed one INVALID_REQUEST.
func TestFindShareCoordinator(t *testing.T) {
	id := base64.RawURLEncoding.EncodeToString(make([]byte, 16))
	r := kmsg.NewPtrFindCoordinatorRequest()
	r.Version, r.CoordinatorType = 6, 2
	r.CoordinatorKeys = []string{"g:" + id + ":3", "g:" + id, ":" + id + ":3", "g:short:3", "g:" + id + ":x"}
	resp := FindShareCoordinator(r)
	for i, co := range resp.Coordinators {
		want := kerr.InvalidRequest.Code
		if i == 0 {
			want = kerr.CoordinatorNotAvailable.Code
		}
		if co.ErrorCode != want || co.NodeID != -1 || co.Port != -1 || co.ErrorMessage == nil {
			t.Errorf("key %q: %+v, want code %d", co.Key, co, want)
		}
	}
}

// TestFindCoordinatorVersions puts the answer at the top level below v4
// and per key from v4.
func TestFindCoordinatorVersions(t *testing.T) {
	c := Coordinator{NodeID: 2, Host: "h", Port: 9092}
	r := kmsg.NewPtrFindCoordinatorRequest()
	r.Version = 3
	if resp := FindCoordinator(r, c, 0, nil); resp.NodeID != 2 || resp.Host != "h" || len(resp.Coordinators) != 0 {
		t.Fatalf("v3: %+v", resp)
	}
	r.Version, r.CoordinatorKeys = 4, []string{"a", "b"}
	msg := "none"
	resp := FindCoordinator(r, Coordinator{NodeID: -1, Port: -1}, kerr.CoordinatorNotAvailable.Code, &msg)
	if len(resp.Coordinators) != 2 || resp.Coordinators[1].Key != "b" || resp.Coordinators[1].ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("v4: %+v", resp.Coordinators)
	}
	if resp := NoCoordinator(r); resp.ErrorCode != kerr.CoordinatorNotAvailable.Code || len(resp.Coordinators) != 2 {
		t.Fatalf("no store: %+v", resp)
	}
}

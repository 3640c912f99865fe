package tenancy

import (
	"errors"
	"testing"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
)

// A principal's partitions are those of the topics it created; beyond its
// bound it gets POLICY_VIOLATION, another principal and "" are unaffected.
func TestPartitionRoom(t *testing.T) {
	topics := []resolver.Topic{
		{Name: "m1", Partitions: 3, Creator: "User:m"},
		{Name: "m2", Partitions: 2, Creator: "User:m"},
		{Name: "o1", Partitions: 4, Creator: "User:o"},
		{Name: "old", Partitions: 9},
	}
	if err := PartitionRoom("User:m", 1, 5, topics); !errors.Is(err, kerr.PolicyViolation) {
		t.Fatalf("User:m at 5 of 5, one more: %v, want POLICY_VIOLATION", err)
	}
	if err := PartitionRoom("User:o", 1, 5, topics); err != nil {
		t.Fatalf("User:o at 4 of 5, one more: %v", err)
	}
	if err := PartitionRoom("User:o", 2, 5, topics); !errors.Is(err, kerr.PolicyViolation) {
		t.Fatalf("User:o at 4 of 5, two more: %v, want POLICY_VIOLATION", err)
	}
	if err := PartitionRoom("", 100, 5, topics); err != nil {
		t.Fatalf("no tenant: %v", err)
	}
}

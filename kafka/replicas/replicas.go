// Package replicas answers the requests that move or elect partition
// replicas (ElectLeaders, AlterPartitionReassignments,
// ListPartitionReassignments) for a node whose partitions each have one
// replica, its leader: a single kgateway, or a cluster node, whose
// partitions are placed by rendezvous hashing (rendezvous placement).
//
// With one replica there is never a leader to elect: a partition with a
// leader is ELECTION_NOT_NEEDED, for preferred and unclean elections
// alike, as Kafka answers for a partition led by its only replica; one
// without (a cluster partition between owners) has no other replica to
// elect, PREFERRED_LEADER_NOT_AVAILABLE or ELIGIBLE_LEADERS_NOT_AVAILABLE.
//
// A reassignment's replica list is checked as Kafka's controller checks a
// manual assignment (ReplicationControlManager): not empty, then in
// ascending order each broker registered (live) and named once. A list
// that is the partition's current replica set is accepted and changes
// nothing, as Kafka completes it at once. Any other valid list would
// move the partition: a single node has no other broker to move it to,
// and a cluster node cannot place a partition on a named node, as
// placement is the membership's rendezvous hash, which a handover would
// undo; it is refused INVALID_REPLICA_ASSIGNMENT (or
// INVALID_REPLICATION_FACTOR when the count changes and the request does
// not allow it). So no reassignment is ever in progress: cancelling one
// is NO_REASSIGNMENT_IN_PROGRESS and listing them finds none.
package replicas

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Election types (ElectLeaders v1+).
const (
	Preferred int8 = 0
	Unclean   int8 = 1
)

// Outcome is a per-partition answer: an error code and Kafka's message
// ("" for none).
type Outcome struct {
	Code    int16
	Message string
}

// ValidElection says whether typ is an election type Kafka knows.
func ValidElection(typ int8) bool { return typ == Preferred || typ == Unclean }

// Elect answers an election of type typ for a partition that exists and
// has a leader or not.
func Elect(typ int8, hasLeader bool) Outcome {
	switch {
	case hasLeader:
		return Outcome{kerr.ElectionNotNeeded.Code, "Leader election not needed for topic partition."}
	case typ == Preferred:
		return Outcome{kerr.PreferredLeaderNotAvailable.Code, "The preferred leader was not available."}
	default:
		return Outcome{kerr.EligibleLeadersNotAvailable.Code, "Eligible topic partition leaders are not available."}
	}
}

// Reassign answers a reassignment of a partition whose replicas are
// current to target (nil: cancel), with live saying which brokers are
// registered; allowRF is the request's allow_replication_factor_change.
func Reassign(current, target []int32, live func(int32) bool, allowRF bool) Outcome {
	if target == nil {
		return Outcome{Code: kerr.NoReassignmentInProgress.Code}
	}
	if o, bad := checkAssignment(target, live); bad {
		return o
	}
	if !allowRF && len(target) != len(current) {
		return Outcome{kerr.InvalidReplicationFactor.Code,
			fmt.Sprintf("The replication factor is changed from %d to %d", len(current), len(target))}
	}
	if slices.Equal(sorted(current), sorted(target)) {
		return Outcome{}
	}
	return Outcome{kerr.InvalidReplicaAssignment.Code,
		"kgateway places each partition on one node by rendezvous hashing of the live nodes; it cannot be moved to named brokers"}
}

// checkAssignment is Kafka's check of a manual assignment.
func checkAssignment(target []int32, live func(int32) bool) (Outcome, bool) {
	if len(target) == 0 {
		return Outcome{kerr.InvalidReplicaAssignment.Code, "The manual partition assignment includes an empty replica list."}, true
	}
	ids := sorted(target)
	for i, id := range ids {
		if !live(id) {
			return Outcome{kerr.InvalidReplicaAssignment.Code,
				fmt.Sprintf("The manual partition assignment includes broker %d, but no such broker is registered.", id)}, true
		}
		if i > 0 && ids[i-1] == id {
			return Outcome{kerr.InvalidReplicaAssignment.Code,
				fmt.Sprintf("The manual partition assignment includes the broker %d more than once.", id)}, true
		}
	}
	return Outcome{}, false
}

func sorted(ids []int32) []int32 {
	s := slices.Clone(ids)
	slices.Sort(s)
	return s
}

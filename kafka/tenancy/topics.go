package tenancy

import (
	"fmt"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
)

// DefaultPartitionsPerPrincipal is partitions.max.per.principal: a tenth
// of the global partitions.max, so that one principal at its bound leaves
// the others theirs.
const DefaultPartitionsPerPrincipal = 10000

// PartitionRoom bounds the partitions each principal creates: a topic
// belongs to the principal whose request created it (resolver.Topic's
// Creator, kept in the topic's durable record: the single node's
// catalog, or the cluster catalog's etcd record), and its partitions,
// including any added later by whoever may alter it, count against that
// principal's max. Only topics that exist count: a deleted topic frees
// its partitions. It returns nil when principal may create n more
// partitions, else a POLICY_VIOLATION error with the reason. The
// principal "" (no authorizer, no tenants) has no bound; nor does a
// topic without a creator (made before creators were recorded, or
// without an authorizer) count against anyone.
//
// Like partitions.max, concurrent creations by one principal may each
// pass the check: the bound is exceeded by at most one topic per
// concurrent request.
func PartitionRoom(principal string, n int32, max int, topics []resolver.Topic) error {
	if principal == "" || max <= 0 {
		return nil
	}
	have := 0
	for _, t := range topics {
		if t.Creator == principal && !t.Companion {
			have += int(t.Partitions)
		}
	}
	if have+int(n) > max {
		return fmt.Errorf("%w: %d partitions more would exceed partitions.max.per.principal %d for %s (it created %d that exist)",
			kerr.PolicyViolation, n, max, principal, have)
	}
	return nil
}

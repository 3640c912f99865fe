package test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgateway/kgateway/kafka/group"
	"github.com/twmb/franz-go/pkg/kgo"
)

// fast848 is a coordinator config whose consumer-protocol timings suit a
// test: heartbeats every 100ms, sessions of 6s.
func fast848() group.Config {
	return group.Config{
		ConsumerSessionTimeout: 6 * time.Second, ConsumerMinSessionTimeout: time.Second,
		ConsumerHeartbeatInterval: 100 * time.Millisecond, ConsumerMinHeartbeatInterval: 10 * time.Millisecond,
	}
}

// balancer848 maps an assignor name to the franz-go balancer that asks for
// it with kgo.ServerSideBalancer.
func balancer848(assignor string) kgo.GroupBalancer {
	if assignor == "range" {
		return kgo.RangeBalancer()
	}
	return kgo.CooperativeStickyBalancer()
}

func member848(t *testing.T, addr, groupID, topic, assignor string, opts ...kgo.Opt) *groupMember {
	t.Helper()
	base := []kgo.Opt{kgo.ServerSideBalancer(), kgo.Balancers(balancer848(assignor))}
	return newGroupMember(t, addr, groupID, topic, append(base, opts...)...)
}

// ownershipWatch samples the members' owned partitions until stopped and
// records any moment a partition was owned by two members at once.
type ownershipWatch struct {
	stop    chan struct{}
	done    chan struct{}
	doubled atomic.Value // string
	mu      sync.Mutex
	members []*groupMember
}

func watchOwnership(t *testing.T, ms ...*groupMember) *ownershipWatch {
	w := &ownershipWatch{stop: make(chan struct{}), done: make(chan struct{}), members: ms}
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.stop:
				return
			default:
			}
			w.mu.Lock()
			seen := map[int32]int{}
			for i, m := range w.members {
				for _, p := range m.ownedSet() {
					if j, ok := seen[p]; ok {
						w.doubled.CompareAndSwap(nil, fmt.Sprintf("partition %d owned by members %d and %d", p, j, i))
					}
					seen[p] = i
				}
			}
			w.mu.Unlock()
			time.Sleep(time.Millisecond) // sampling interval, not a wait for a condition
		}
	}()
	t.Cleanup(w.check(t))
	return w
}

func (w *ownershipWatch) add(m *groupMember) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.members = append(w.members, m)
}

func (w *ownershipWatch) check(t *testing.T) func() {
	return func() {
		select {
		case <-w.stop:
		default:
			close(w.stop)
		}
		<-w.done
		if d, ok := w.doubled.Load().(string); ok {
			t.Errorf("double ownership: %s", d)
		}
	}
}

// KIP-848 with franz-go's server-side balancer: two members split a topic,
// a third joins, one leaves; with each assignor every partition is owned
// exactly once after each step and never by two members at once.
func Test848Splits(t *testing.T) {
	for _, assignor := range []string{"uniform", "range"} {
		t.Run(assignor, func(t *testing.T) {
			g := newGatewayWith(t, gatewayOptions{group: fast848()})
			const parts = 6
			topic := "k848-" + assignor
			g.createTopic(topic, parts)
			groupID := "g848-" + assignor
			a := member848(t, g.addr, groupID, topic, assignor)
			b := member848(t, g.addr, groupID, topic, assignor)
			w := watchOwnership(t, a, b)
			eventually(t, "two members split the partitions", func() bool { return ownedExactlyOnce(parts, a, b) })
			c := member848(t, g.addr, groupID, topic, assignor)
			w.add(c)
			// Reconciliation passes through splits like 3/2/1 that own every
			// partition once (a member gains a partition only after its old
			// owner revokes it); the rule is that the split settles at 2/2/2.
			eventually(t, "three members split the partitions evenly", func() bool {
				if !ownedExactlyOnce(parts, a, b, c) {
					return false
				}
				for _, m := range []*groupMember{a, b, c} {
					if len(m.ownedSet()) != parts/3 {
						return false
					}
				}
				return true
			})
			a.close()
			eventually(t, "two remaining members own every partition", func() bool { return ownedExactlyOnce(parts, b, c) })

			described, err := g.admin().DescribeConsumerGroups(testCtx(t), groupID)
			if err != nil {
				t.Fatal(err)
			}
			dg := described[groupID]
			if dg.Err != nil || len(dg.Members) != 2 || dg.AssignorName != assignor {
				t.Fatalf("described: err %v, %d members, assignor %q", dg.Err, len(dg.Members), dg.AssignorName)
			}
			listed, err := g.admin().ListGroups(testCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			if lg := listed[groupID]; lg.GroupType != "consumer" || lg.ProtocolType != "consumer" {
				t.Fatalf("listed %+v", lg)
			}
		})
	}
}

package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestClusterEtcdOutage: etcd stops for longer than the nodes' session,
// so every node loses its session, and registering again fails at first:
// it times out while etcd is down, and once etcd is back the old
// registration is still there (a restarted etcd renews every lease).
// Every node registers again all the same (one registration per node id) and serves; nothing
// acknowledged is lost.
func TestClusterEtcdOutage(t *testing.T) {
	c := StartCluster(t, 3)
	const topic, n = "outage", 3
	c.CreateTopic(topic, n)
	prod := c.StartProducers(topic, 2, "o", 3*time.Millisecond, nil)
	prod.Book.WaitAcked(t, 200, 60*time.Second)

	lost := make([]int, c.Len())
	for i := range lost {
		lost[i] = c.LogCount(i, "cluster-session-lost")
	}
	c.StopEtcd()
	t.Logf("%s etcd stopped", stamp())
	waitFor(t, 60*time.Second, "every node to notice it lost its session", func(context.Context) (bool, error) {
		for i := range lost {
			if c.LogCount(i, "cluster-session-lost") == lost[i] {
				return false, fmt.Errorf("node %d has not", i)
			}
		}
		return true, nil
	})
	// The outage lasts a while longer (its length is the fault, not a
	// wait for anything): a registration a node attempts meanwhile times
	// out, and a restarted etcd renews the old session's lease, so its
	// registration is still there at first.
	t.Logf("%s every node lost its session", stamp())
	time.Sleep(3 * sessionTimeout)
	c.StartEtcd()
	t.Logf("%s etcd started", stamp())
	for i := range c.Len() {
		c.WaitRegistered(i)
	}
	c.WaitLeaders(topic, n, 90*time.Second)
	t.Logf("%s every node registered, every partition led", stamp())
	prod.Book.WaitAcked(t, prod.Book.Acked()+200, 60*time.Second)
	t.Logf("%s writes go on", stamp())
	prod.Stop(t)
	parts, _ := c.ReadAll(topic, n)
	prod.Book.Check(t, parts)
}

package catalog_test

import (
	"maps"
	"testing"

	"github.com/kgateway/kgateway/cluster/etcdtest"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/resolver/dynconfig"
	"github.com/kgateway/kgateway/topicconfig"
)

// newNodeID is newNode with Options.NodeID id.
func newNodeID(t *testing.T, srv *etcdtest.Server, name string, id int32) *node {
	t.Helper()
	n := &node{t: t, name: name, dir: t.TempDir(), srv: srv, deletes: &deleteLog{}, id: id,
		cfg: resolver.Config{RetentionCheckInterval: -1}}
	n.open()
	n.start()
	t.Cleanup(n.stop)
	return n
}

// TestConfigsApplied (cluster configs in the catalog): the default broker
// layer applies on every node, a node's own layer on that node only, an
// internal topic's configs are seen by every node (and go back to the
// initial set when their record goes), the entries of a record dynconfig
// refuses are left out, and a node that starts again loads them all from
// etcd.
func TestConfigsApplied(t *testing.T) {
	srv := etcdtest.Start(t)
	a, b := newNodeID(t, srv, "a", 1), newNodeID(t, srv, "b", 2)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(a.cat.AlterBrokerConfigs(dynconfig.LayerDefault, map[string]string{"log.retention.ms": "1000"}, false))
	must(a.cat.IncrementalAlterBrokerConfigs(dynconfig.LayerNode, []topicconfig.Op{{Name: "message.max.bytes", Op: topicconfig.OpSet, Value: "2048"}}, false))
	initial := map[string]string{"cleanup.policy": "compact"}
	must(a.cat.IncrementalAlterInternalTopicConfigs(resolver.OffsetsTopic, initial,
		[]topicconfig.Op{{Name: "retention.ms", Op: topicconfig.OpSet, Value: "5000"}}, false))
	settle(t, srv, a, b)
	wantDefault := map[string]string{"log.retention.ms": "1000"}
	check := func(when string) {
		t.Helper()
		if l := b.r.BrokerLayers(); !maps.Equal(l.Default, wantDefault) || len(l.Node) != 0 {
			t.Fatalf("%s: b's layers %+v: want the default only", when, l)
		}
		if l := a.r.BrokerLayers(); !maps.Equal(l.Default, wantDefault) || l.Node["message.max.bytes"] != "2048" {
			t.Fatalf("%s: a's layers %+v", when, l)
		}
		if set, _ := b.cat.InternalTopicConfigs(resolver.OffsetsTopic, initial); !maps.Equal(set, map[string]string{"cleanup.policy": "compact", "retention.ms": "5000"}) {
			t.Fatalf("%s: b's %s configs %v", when, resolver.OffsetsTopic, set)
		}
	}
	check("applied")

	// An entry that does not check is left out by every node.
	cli := srv.Client(t)
	if _, err := cli.Put(ctxT(t), prefix+"topics.configs/brokers/default", `{"num.partitions":"3","log.retention.ms":"1000"}`); err != nil {
		t.Fatal(err)
	}
	settle(t, srv, a, b)
	check("after a read-only name in the default layer's record")

	b.restart()
	check("after b started again")

	if _, err := cli.Delete(ctxT(t), prefix+"topics.configs/internal/"+resolver.OffsetsTopic); err != nil {
		t.Fatal(err)
	}
	settle(t, srv, a, b)
	if set, _ := b.cat.InternalTopicConfigs(resolver.OffsetsTopic, initial); !maps.Equal(set, initial) {
		t.Fatalf("after its record went: %v", set)
	}
}

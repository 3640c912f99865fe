package resolver

import (
	"errors"
	"testing"

	"github.com/kgateway/kgateway/resolver/dynconfig"
	"github.com/kgateway/kgateway/topicconfig"
)

// Dynamic broker configs: the per-broker layer over the cluster-wide
// default over the flag, each described with its source; a change applies
// to existing topics at once (here max.message.bytes, through
// message.max.bytes) and survives a restart; read-only and invalid ones are
// refused and change nothing.
func TestDynamicBrokerConfigs(t *testing.T) {
	g := newGateway(t, Config{RetentionMs: 3_600_000, RetentionCheckInterval: -1})
	g.create("t", 1, nil)
	big := plain(1, 5)
	big.value = make([]byte, 4096)

	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(g.r.DynamicConfigs().AlterBrokerConfigs(dynconfig.LayerDefault, map[string]string{"log.retention.ms": "7200000", "message.max.bytes": "8192"}, false))
	must(g.r.DynamicConfigs().IncrementalAlterBrokerConfigs(dynconfig.LayerNode, []topicconfig.Op{
		{Name: "message.max.bytes", Op: topicconfig.OpSet, Value: "1024"},
		{Name: "log.cleanup.policy", Op: topicconfig.OpAppend, Value: "compact"},
	}, false))
	check := func(when string) {
		t.Helper()
		b := entryMap(g.r.BrokerConfigs())
		for name, want := range map[string]struct {
			value  string
			source topicconfig.Source
		}{
			"log.retention.ms":   {"7200000", topicconfig.SourceDynamicDefaultBroker},
			"message.max.bytes":  {"1024", topicconfig.SourceDynamicBroker},
			"log.cleanup.policy": {"delete,compact", topicconfig.SourceDynamicBroker},
			"log.segment.bytes":  {"1073741824", topicconfig.SourceDefault},
		} {
			if e := b[name]; e.Value != want.value || e.Source != want.source || e.ReadOnly {
				t.Errorf("%s: %s: %+v, want %s from %d", when, name, e, want.value, want.source)
			}
		}
		if syn := b["message.max.bytes"].Synonyms; len(syn) != 3 || syn[1].Value != "8192" || syn[1].Source != topicconfig.SourceDynamicDefaultBroker {
			t.Errorf("%s: message.max.bytes synonyms %+v", when, syn)
		}
		if syn := entryMap(mustConfigs(t, g.r, "t"))["retention.ms"].Synonyms; len(syn) != 3 || syn[0].Source != topicconfig.SourceDynamicDefaultBroker ||
			syn[1].Source != topicconfig.SourceStaticBroker || syn[1].Value != "3600000" {
			t.Errorf("%s: retention.ms synonyms %+v", when, syn)
		}
		// The existing topic takes the broker's new max at once.
		if _, err := g.r.Produce("t", 0, big.encode()); !errors.Is(err, ErrMessageTooLarge) {
			t.Fatalf("%s: a 4 KiB batch over message.max.bytes=1024: %v", when, err)
		}
	}
	check("after the change")
	g.reopen()
	check("after a restart")

	// Read-only and invalid changes are refused as a whole.
	if err := g.r.DynamicConfigs().IncrementalAlterBrokerConfigs(dynconfig.LayerNode, []topicconfig.Op{
		{Name: "num.partitions", Op: topicconfig.OpSet, Value: "3"},
		{Name: "log.retention.ms", Op: topicconfig.OpSet, Value: "1"},
	}, false); !errors.Is(err, dynconfig.ErrReadOnly) {
		t.Fatalf("num.partitions: %v", err)
	}
	if err := g.r.DynamicConfigs().AlterBrokerConfigs(dynconfig.LayerNode, map[string]string{"log.retention.ms": "soon"}, false); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("an invalid value: %v", err)
	}
	if v := g.r.BrokerLayers().Node; v["log.retention.ms"] != "" || v["message.max.bytes"] != "1024" {
		t.Fatalf("a refused change changed the layer: %v", v)
	}
	// Deleting the overrides goes back to the layers below.
	must(g.r.DynamicConfigs().IncrementalAlterBrokerConfigs(dynconfig.LayerNode, []topicconfig.Op{{Name: "message.max.bytes", Op: topicconfig.OpDelete}}, false))
	if e := entryMap(g.r.BrokerConfigs())["message.max.bytes"]; e.Value != "8192" || e.Source != topicconfig.SourceDynamicDefaultBroker {
		t.Fatalf("message.max.bytes after deleting this broker's: %+v", e)
	}
	must(g.r.DynamicConfigs().AlterBrokerConfigs(dynconfig.LayerDefault, nil, false))
	must(g.r.DynamicConfigs().AlterBrokerConfigs(dynconfig.LayerNode, nil, false)) // the legacy API replaces a layer whole
	if b := entryMap(g.r.BrokerConfigs()); b["log.cleanup.policy"].Source != topicconfig.SourceDefault || b["message.max.bytes"].Source != topicconfig.SourceDefault {
		t.Fatalf("after clearing both layers: %+v %+v", b["log.cleanup.policy"], b["message.max.bytes"])
	}
	g.produce("t", 0, big.encode())
}

package resolver

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/topicconfig"
)

// Dynamic broker configs, as Kafka's DynamicBrokerConfig for its log
// configs: the broker configs that are topic defaults (log.retention.ms
// for retention.ms, ...) can be changed at run time by AlterConfigs and
// IncrementalAlterConfigs on a BROKER resource, for this broker (its node
// id) or as the cluster-wide default (""). Precedence, highest first:
// this broker's dynamic value, the dynamic default, the flag (static),
// Kafka's default. Both layers are kept in the metadata store under
// resolver/broker-configs, written with the change, and applied without a
// restart: every topic's settings are resolved again over the new values,
// as an alteration of the topic's own configs does (retention, rollover,
// max.message.bytes, timestamps, compaction lags take the new value at
// their next use). The other broker configs are read-only, as in Kafka.
//
// Invariants: a layer holds only names of dynamicBrokerConfigs, each with
// a value its topic config accepts; what the store holds is what
// brokerValues reads (the store is written first).

var keyBrokerConfigs = []byte("resolver/broker-configs")

// BrokerLayer is the resource a dynamic broker config is set on.
type BrokerLayer int

const (
	BrokerLayerNode    BrokerLayer = iota // this broker (BROKER resource named by its node id)
	BrokerLayerDefault                    // every broker (BROKER resource "")
)

// dynamicBrokerConfigs are the broker configs that change at run time:
// Kafka's dynamic log configs that kgateway's topics take as defaults.
var dynamicBrokerConfigs = map[string]bool{
	"log.cleanup.policy":                true,
	"log.cleaner.delete.retention.ms":   true,
	"log.cleaner.max.compaction.lag.ms": true,
	"log.cleaner.min.cleanable.ratio":   true,
	"log.cleaner.min.compaction.lag.ms": true,
	"log.local.retention.bytes":         true,
	"log.local.retention.ms":            true,
	"log.message.timestamp.type":        true,
	"log.retention.bytes":               true,
	"log.retention.ms":                  true,
	"log.roll.ms":                       true,
	"log.segment.bytes":                 true,
	"message.max.bytes":                 true,
	"compression.type":                  true,
}

// ErrReadOnlyBrokerConfig: a change to a broker config that cannot change
// at run time (Kafka's "Cannot update these configs dynamically").
var ErrReadOnlyBrokerConfig = errors.New("resolver: broker config is read-only")

// brokerLayers are the dynamic values (name → value) of both layers.
type brokerLayers struct {
	Node    map[string]string `json:"node,omitempty"`
	Default map[string]string `json:"default,omitempty"`
}

func (l *brokerLayers) layer(which BrokerLayer) map[string]string {
	if which == BrokerLayerDefault {
		return l.Default
	}
	return l.Node
}

// DynamicBrokerConfig reports whether a broker config can change at run
// time.
func DynamicBrokerConfig(name string) bool { return dynamicBrokerConfigs[name] }

// loadBrokerConfigs reads the dynamic layers at Open.
func (r *Resolver) loadBrokerConfigs() error {
	v, err := r.store.GetMeta(keyBrokerConfigs)
	if errors.Is(err, storage.ErrNotFound) {
		r.dynBroker.Store(&brokerLayers{})
		return nil
	}
	if err != nil {
		return storageErr("read broker configs", err)
	}
	var l brokerLayers
	if err := json.Unmarshal(v, &l); err != nil {
		return fmt.Errorf("%w: broker configs: %v", ErrStorage, err)
	}
	r.dynBroker.Store(&l)
	return nil
}

// layers is the current dynamic layers (never nil after Open).
func (r *Resolver) layers() *brokerLayers {
	if l := r.dynBroker.Load(); l != nil {
		return l
	}
	return &brokerLayers{}
}

// BrokerOverrides is a copy of one layer's dynamic values.
func (r *Resolver) BrokerOverrides(which BrokerLayer) map[string]string {
	return maps.Clone(r.layers().layer(which))
}

// AlterBrokerConfigs replaces one layer's dynamic values with set (legacy
// AlterConfigs: a name left out goes back to the layer below).
func (r *Resolver) AlterBrokerConfigs(which BrokerLayer, set map[string]string, validateOnly bool) error {
	return r.changeBrokerLayer(which, validateOnly, func(map[string]string) (map[string]string, error) {
		return maps.Clone(set), nil
	})
}

// IncrementalAlterBrokerConfigs applies ops to one layer, in order: SET,
// DELETE (back to the layer below), and APPEND and SUBTRACT on the list
// config log.cleanup.policy, from its effective value.
func (r *Resolver) IncrementalAlterBrokerConfigs(which BrokerLayer, ops []topicconfig.Op, validateOnly bool) error {
	return r.changeBrokerLayer(which, validateOnly, func(cur map[string]string) (map[string]string, error) {
		out := maps.Clone(cur)
		if out == nil {
			out = map[string]string{}
		}
		var errs []error
		for _, op := range ops {
			switch op.Op {
			case topicconfig.OpSet:
				out[op.Name] = op.Value
			case topicconfig.OpDelete:
				delete(out, op.Name)
			case topicconfig.OpAppend, topicconfig.OpSubtract:
				topic, ok := topicconfig.TopicConfigOf(op.Name)
				if !ok || op.Name != "log.cleanup.policy" {
					errs = append(errs, fmt.Errorf("%s %s: not a list config", op.Op, op.Name))
					continue
				}
				// The effective value: this layer's, else the layers below.
				below := r.brokerValues()
				if v, ok := out[op.Name]; ok {
					below[op.Name] = v
				}
				edited, err := topicconfig.Apply(nil, below, []topicconfig.Op{{Name: topic, Op: op.Op, Value: op.Value}})
				if err != nil {
					errs = append(errs, err)
					continue
				}
				out[op.Name] = edited[topic]
			default:
				errs = append(errs, fmt.Errorf("%s: unknown operation %d", op.Name, int8(op.Op)))
			}
		}
		if len(errs) > 0 {
			return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, errors.Join(errs...))
		}
		return out, nil
	})
}

// changeBrokerLayer validates the layer edit gives, persists it and
// applies it to every topic. Not served in cluster mode, where broker
// configs would have to be shared through the cluster's catalog.
func (r *Resolver) changeBrokerLayer(which BrokerLayer, validateOnly bool, edit func(cur map[string]string) (map[string]string, error)) error {
	if r.cfg.Diskless {
		return fmt.Errorf("%w: dynamic broker configs are not served in cluster mode (set them by flags on every node)", ErrReadOnlyBrokerConfig)
	}
	r.adminMu.Lock()
	defer r.adminMu.Unlock()
	cur := r.layers()
	next, err := edit(cur.layer(which))
	if err != nil {
		return err
	}
	if err := checkBrokerLayer(next); err != nil {
		return err
	}
	if validateOnly {
		return nil
	}
	l := &brokerLayers{Node: cur.Node, Default: cur.Default}
	if which == BrokerLayerDefault {
		l.Default = next
	} else {
		l.Node = next
	}
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	if err := r.store.ApplyMeta(storage.MetaOp{Key: keyBrokerConfigs, Value: b}); err != nil {
		return storageErr("persist broker configs", err)
	}
	r.dynBroker.Store(l)
	return r.reapplySettingsLocked()
}

// checkBrokerLayer refuses unknown and read-only names (every one named,
// as Kafka's message does) and values the topic config they default
// would refuse. (Kafka stores unknown broker config names as custom
// configs; kgateway, which would never read them, refuses them.)
func checkBrokerLayer(layer map[string]string) error {
	var readOnly, unknown []string
	topicSet := map[string]string{}
	for name, v := range layer {
		if _, known := brokerConfigs[name]; !known && !dynamicBrokerConfigs[name] {
			unknown = append(unknown, name)
			continue
		}
		if !dynamicBrokerConfigs[name] {
			readOnly = append(readOnly, name)
			continue
		}
		topic, _ := topicconfig.TopicConfigOf(name)
		topicSet[topic] = v
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fmt.Errorf("%w: not broker configs kgateway has: %s", ErrReadOnlyBrokerConfig, strings.Join(unknown, ", "))
	}
	if len(readOnly) > 0 {
		slices.Sort(readOnly)
		return fmt.Errorf("%w: Cannot update these configs dynamically: [%s]", ErrReadOnlyBrokerConfig, strings.Join(readOnly, ", "))
	}
	return topicconfig.Check(topicSet)
}

// reapplySettingsLocked resolves every topic's settings again over the
// broker's current values. Needs adminMu.
func (r *Resolver) reapplySettingsLocked() error {
	r.mu.RLock()
	topics := make([]*topic, 0, len(r.mu.topics))
	for _, t := range r.mu.topics {
		topics = append(topics, t)
	}
	r.mu.RUnlock()
	var errs []error
	for _, t := range topics {
		s := r.settings(t.configs)
		for _, p := range t.parts {
			if err := p.applySettings(s); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// brokerSynonyms are a broker config's values above Kafka's default, in
// precedence order: this broker's dynamic one, the dynamic default, the
// flag's when it differs from Kafka's default.
func (r *Resolver) brokerSynonyms(name string) []topicconfig.Synonym {
	var out []topicconfig.Synonym
	l := r.layers()
	if v, ok := l.Node[name]; ok {
		out = append(out, topicconfig.Synonym{Name: name, Value: v, Source: topicconfig.SourceDynamicBroker})
	}
	if v, ok := l.Default[name]; ok {
		out = append(out, topicconfig.Synonym{Name: name, Value: v, Source: topicconfig.SourceDynamicDefaultBroker})
	}
	if spec, ok := brokerConfigs[name]; ok {
		if v := spec.value(r.cfg); v != spec.def {
			out = append(out, topicconfig.Synonym{Name: name, Value: v, Source: topicconfig.SourceStaticBroker})
		}
	}
	return out
}

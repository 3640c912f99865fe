package dynconfig

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kgateway/kgateway/topicconfig"
)

// Layer is the resource a dynamic broker config is set on.
type Layer int

const (
	LayerNode    Layer = iota // one broker (BROKER resource named by its node id)
	LayerDefault              // every broker (BROKER resource "")
)

// Layers are the dynamic values (name → value) of both layers. A
// published Layers is never changed: a change makes a new one.
type Layers struct {
	Node    map[string]string `json:"node,omitempty"`
	Default map[string]string `json:"default,omitempty"`
}

// Of is one layer's values (not a copy).
func (l Layers) Of(which Layer) map[string]string {
	if which == LayerDefault {
		return l.Default
	}
	return l.Node
}

// With is l with one layer replaced by values.
func (l Layers) With(which Layer, values map[string]string) Layers {
	if which == LayerDefault {
		l.Default = values
	} else {
		l.Node = values
	}
	return l
}

// dynamic are the broker configs that change at run time: Kafka's dynamic
// log configs that kgateway's topics take as defaults.
var dynamic = map[string]bool{
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

// Dynamic reports whether a broker config can change at run time.
func Dynamic(name string) bool { return dynamic[name] }

// ErrReadOnly: a change to a broker config that cannot change at run time
// (Kafka's "Cannot update these configs dynamically"), or that kgateway
// does not have.
var ErrReadOnly = errors.New("dynconfig: broker config is read-only")

// Values are the broker configs' effective values: the layers over the
// static ones (each broker config kgateway has, from its flag).
func Values(static map[string]string, l Layers) map[string]string {
	out := maps.Clone(static)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, l.Default)
	maps.Copy(out, l.Node)
	return out
}

// Synonyms are name's dynamic values in precedence order: the node
// layer's (DYNAMIC_BROKER_CONFIG), the default layer's
// (DYNAMIC_DEFAULT_BROKER_CONFIG).
func (l Layers) Synonyms(name string) []topicconfig.Synonym {
	var out []topicconfig.Synonym
	if v, ok := l.Node[name]; ok {
		out = append(out, topicconfig.Synonym{Name: name, Value: v, Source: topicconfig.SourceDynamicBroker})
	}
	if v, ok := l.Default[name]; ok {
		out = append(out, topicconfig.Synonym{Name: name, Value: v, Source: topicconfig.SourceDynamicDefaultBroker})
	}
	return out
}

// EditBrokerLayer applies IncrementalAlterConfigs' ops to one layer's
// values cur, in order: SET, DELETE (back to the layer below), and
// APPEND and SUBTRACT on the list config log.cleanup.policy, from its
// effective value (cur's, else effective's: the broker's values). The
// result is not checked: CheckBrokerLayer it.
func EditBrokerLayer(cur map[string]string, ops []topicconfig.Op, effective map[string]string) (map[string]string, error) {
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
			below := maps.Clone(effective)
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
		return nil, fmt.Errorf("%w: %w", topicconfig.ErrInvalid, errors.Join(errs...))
	}
	return out, nil
}

// CheckBrokerLayer refuses, naming every one as Kafka's message does, the
// names that are not broker configs kgateway has (static lists those) and
// the read-only ones (ErrReadOnly), then values the topic config they
// default would refuse (topicconfig.ErrInvalid). Kafka stores unknown
// broker config names as custom configs; kgateway, which would never read
// them, refuses them.
func CheckBrokerLayer(layer, static map[string]string) error {
	var readOnly, unknown []string
	topicSet := map[string]string{}
	for name, v := range layer {
		if _, known := static[name]; !known && !dynamic[name] {
			unknown = append(unknown, name)
			continue
		}
		if !dynamic[name] {
			readOnly = append(readOnly, name)
			continue
		}
		topic, _ := topicconfig.TopicConfigOf(name)
		topicSet[topic] = v
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fmt.Errorf("%w: not broker configs kgateway has: %s", ErrReadOnly, strings.Join(unknown, ", "))
	}
	if len(readOnly) > 0 {
		slices.Sort(readOnly)
		return fmt.Errorf("%w: Cannot update these configs dynamically: [%s]", ErrReadOnly, strings.Join(readOnly, ", "))
	}
	return topicconfig.Check(topicSet)
}

// Host is what the configs apply to: the resolver.
type Host interface {
	// StaticBrokerConfigs maps each broker config the host describes to
	// its value from flags (Kafka's default where no flag set it).
	StaticBrokerConfigs() map[string]string
	// BrokerLayers are the dynamic layers in effect.
	BrokerLayers() Layers
	// ApplyBrokerLayers makes l the layers in effect and resolves every
	// topic's settings again over them.
	ApplyBrokerLayers(l Layers) error
	// ValidateTopicConfigs checks a topic's explicit configs as an
	// alteration of the topic's would.
	ValidateTopicConfigs(configs map[string]string) error
}

// Effective are host's broker values now.
func Effective(h Host) map[string]string { return Values(h.StaticBrokerConfigs(), h.BrokerLayers()) }

// Edit computes a layer's (or an internal topic's) new values from its
// current ones.
type Edit func(cur map[string]string) (map[string]string, error)

// Replace is legacy AlterConfigs' edit: the layer becomes set (a name
// left out goes back to the layer below).
func Replace(set map[string]string) Edit {
	return func(map[string]string) (map[string]string, error) { return maps.Clone(set), nil }
}

// Incremental is IncrementalAlterConfigs' edit (EditBrokerLayer) over
// host's effective values.
func Incremental(h Host, ops []topicconfig.Op) Edit {
	return func(cur map[string]string) (map[string]string, error) {
		return EditBrokerLayer(cur, ops, Effective(h))
	}
}

// InternalEdit is IncrementalAlterConfigs' edit of an internal topic's
// explicit configs, as of any topic's, over host's broker values.
func InternalEdit(h Host, ops []topicconfig.Op) Edit {
	return func(cur map[string]string) (map[string]string, error) {
		return topicconfig.Apply(cur, Effective(h), ops)
	}
}

package dynconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/topicconfig"
)

// The single node's keys in the metadata store (the resolver's prefix:
// they were the resolver's before this package).
var (
	keyBrokerLayers            = []byte("resolver/broker-configs")
	prefixInternalConfigs      = []byte("resolver/internal-configs/")
	errNotStored               = errors.New("dynconfig: not stored")
	_                     Meta = (*storage.Store)(nil)
)

func internalKey(name string) []byte {
	return append(append([]byte{}, prefixInternalConfigs...), name...)
}

// Meta is the node's metadata store (storage.Store).
type Meta interface {
	GetMeta(key []byte) ([]byte, error)
	ApplyMeta(ops ...storage.MetaOp) error
}

// LoadLayers reads the layers a single node stored (none: empty layers).
func LoadLayers(m Meta) (Layers, error) {
	var l Layers
	err := get(m, keyBrokerLayers, &l)
	if errors.Is(err, errNotStored) {
		return Layers{}, nil
	}
	return l, err
}

// get decodes key's value into v; errNotStored when there is none.
func get(m Meta, key []byte, v any) error {
	b, err := m.GetMeta(key)
	if errors.Is(err, storage.ErrNotFound) {
		return errNotStored
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("dynconfig: %s: %w", key, err)
	}
	return nil
}

// Configs keep a node's dynamic broker configs and internal topics'
// configs, as the config APIs change and read them: Local on a single
// node, the shared catalog (cluster/catalog) in a cluster.
type Configs interface {
	AlterBrokerConfigs(which Layer, set map[string]string, validateOnly bool) error
	IncrementalAlterBrokerConfigs(which Layer, ops []topicconfig.Op, validateOnly bool) error
	InternalTopicConfigs(name string, initial map[string]string) (map[string]string, error)
	AlterInternalTopicConfigs(name string, initial, set map[string]string, validateOnly bool) error
	IncrementalAlterInternalTopicConfigs(name string, initial map[string]string, ops []topicconfig.Op, validateOnly bool) error
}

var _ Configs = (*Local)(nil)

// Local keeps a single node's dynamic configs in its metadata store and
// applies them to its host. Changes are serialized; each is checked
// whole, written, then applied.
type Local struct {
	meta Meta
	host Host
	// storageErr wraps a failure of the store (the resolver's ErrStorage,
	// KAFKA_STORAGE_ERROR).
	storageErr func(op string, err error) error
	mu         sync.Mutex
}

// NewLocal is the dynamic configs of the node whose store is meta and
// whose resolver is host; storageErr wraps the store's failures.
func NewLocal(meta Meta, host Host, storageErr func(op string, err error) error) *Local {
	return &Local{meta: meta, host: host, storageErr: storageErr}
}

// AlterBrokerConfigs replaces one layer with set (legacy AlterConfigs).
func (l *Local) AlterBrokerConfigs(which Layer, set map[string]string, validateOnly bool) error {
	return l.changeLayer(which, Replace(set), validateOnly)
}

// IncrementalAlterBrokerConfigs applies ops to one layer
// (EditBrokerLayer).
func (l *Local) IncrementalAlterBrokerConfigs(which Layer, ops []topicconfig.Op, validateOnly bool) error {
	return l.changeLayer(which, Incremental(l.host, ops), validateOnly)
}

func (l *Local) changeLayer(which Layer, edit Edit, validateOnly bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	cur := l.host.BrokerLayers()
	next, err := edit(cur.Of(which))
	if err != nil {
		return err
	}
	if err := CheckBrokerLayer(next, l.host.StaticBrokerConfigs()); err != nil {
		return err
	}
	if validateOnly {
		return nil
	}
	layers := cur.With(which, next)
	if err := l.put(keyBrokerLayers, layers); err != nil {
		return l.storageErr("persist broker configs", err)
	}
	return l.host.ApplyBrokerLayers(layers)
}

// InternalTopicConfigs is an internal topic's explicit configs: initial
// until an alteration stored others. name must be an internal topic's.
func (l *Local) InternalTopicConfigs(name string, initial map[string]string) (map[string]string, error) {
	var set map[string]string
	err := get(l.meta, internalKey(name), &set)
	if errors.Is(err, errNotStored) {
		return maps.Clone(initial), nil
	}
	if err != nil {
		return nil, l.storageErr("read internal topic configs", err)
	}
	return set, nil
}

// AlterInternalTopicConfigs replaces an internal topic's explicit configs
// (AlterConfigs).
func (l *Local) AlterInternalTopicConfigs(name string, initial, set map[string]string, validateOnly bool) error {
	return l.changeInternal(name, initial, Replace(set), validateOnly)
}

// IncrementalAlterInternalTopicConfigs applies ops to an internal topic's
// explicit configs, as to any topic's.
func (l *Local) IncrementalAlterInternalTopicConfigs(name string, initial map[string]string, ops []topicconfig.Op, validateOnly bool) error {
	return l.changeInternal(name, initial, InternalEdit(l.host, ops), validateOnly)
}

func (l *Local) changeInternal(name string, initial map[string]string, edit Edit, validateOnly bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	cur, err := l.InternalTopicConfigs(name, initial)
	if err != nil {
		return err
	}
	next, err := edit(cur)
	if err != nil {
		return err
	}
	if err := l.host.ValidateTopicConfigs(next); err != nil {
		return err
	}
	if validateOnly {
		return nil
	}
	if err := l.put(internalKey(name), next); err != nil {
		return l.storageErr("persist internal topic configs", err)
	}
	return nil
}

func (l *Local) put(key []byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return l.meta.ApplyMeta(storage.MetaOp{Key: key, Value: b})
}

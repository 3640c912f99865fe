package resolver

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/topicconfig"
)

// The configs of the internal topics (reserved internal topic names), which an admin may describe
// and alter like any topic's, as Kafka lets them: Kafka creates each with
// a few configs set (the front end's "initial" set) and keeps whatever an
// AlterConfigs or IncrementalAlterConfigs leaves. Here the internal
// topics are always empty (their contents live in the offset store), so
// their configs bound nothing: they are kept and described, durably,
// under resolver/internal-configs/<name> once first altered, and
// validated as any topic's.

var prefixInternalConfigs = []byte("resolver/internal-configs/")

func internalConfigsKey(name string) []byte {
	return append(append([]byte{}, prefixInternalConfigs...), name...)
}

// InternalTopicConfigs is an internal topic's explicit configs: initial
// until an alteration stored others.
func (r *Resolver) InternalTopicConfigs(name string, initial map[string]string) (map[string]string, error) {
	if !IsInternalTopic(name) {
		return nil, fmt.Errorf("%w: %q is not an internal topic", ErrUnknownTopic, name)
	}
	v, err := r.store.GetMeta(internalConfigsKey(name))
	if errors.Is(err, storage.ErrNotFound) {
		return maps.Clone(initial), nil
	}
	if err != nil {
		return nil, storageErr("read internal topic configs", err)
	}
	var set map[string]string
	if err := json.Unmarshal(v, &set); err != nil {
		return nil, fmt.Errorf("%w: internal topic configs of %s: %v", ErrStorage, name, err)
	}
	return set, nil
}

// AlterInternalTopicConfigs replaces an internal topic's explicit configs
// (AlterConfigs).
func (r *Resolver) AlterInternalTopicConfigs(name string, initial, set map[string]string, validateOnly bool) error {
	return r.changeInternalConfigs(name, initial, validateOnly, func(map[string]string) (map[string]string, error) {
		return maps.Clone(set), nil
	})
}

// IncrementalAlterInternalTopicConfigs applies ops to an internal topic's
// explicit configs, as IncrementalAlterTopicConfigs does to a topic's.
func (r *Resolver) IncrementalAlterInternalTopicConfigs(name string, initial map[string]string, ops []topicconfig.Op, validateOnly bool) error {
	return r.changeInternalConfigs(name, initial, validateOnly, func(cur map[string]string) (map[string]string, error) {
		return topicconfig.Apply(cur, r.brokerValues(), ops)
	})
}

func (r *Resolver) changeInternalConfigs(name string, initial map[string]string, validateOnly bool, edit func(cur map[string]string) (map[string]string, error)) error {
	r.adminMu.Lock()
	defer r.adminMu.Unlock()
	cur, err := r.InternalTopicConfigs(name, initial)
	if err != nil {
		return err
	}
	next, err := edit(cur)
	if err != nil {
		return err
	}
	if err := r.validateConfigs(next); err != nil {
		return err
	}
	if validateOnly {
		return nil
	}
	b, err := json.Marshal(next)
	if err != nil {
		return err
	}
	if err := r.store.ApplyMeta(storage.MetaOp{Key: internalConfigsKey(name), Value: b}); err != nil {
		return storageErr("persist internal topic configs", err)
	}
	return nil
}

package resolver

import (
	"fmt"
	"maps"

	"github.com/kgateway/kgateway/topicconfig"
)

// Applying a shared catalog (cluster/catalog): in cluster mode the topic
// catalog's truth is a record per topic kept elsewhere (etcd), and every
// node's resolver is made to match it, one record at a time, in the
// order the records changed. ApplyTopic is that step; the validation of a
// change before it is made is the validateOnly form of the catalog
// methods and PlanIncrementalAlter.

// ApplyTopic makes the local binding of name match a shared record: the
// topic with exactly this id, partition count and explicit configs.
// Idempotent: applying a record twice, or a record the binding already
// matches, changes nothing. A binding of the same name with another id is
// a topic the shared catalog deleted and created again: it is deleted
// here first (its data with it), the shared catalog wins. Partitions only
// grow: a record with fewer partitions than the binding is refused
// (ErrInvalidPartitions), as no change of the catalog shrinks a topic.
//
// The record was validated by the node that made the change, against the
// same rules; here only what would make a binding unsound is checked
// (name, partition count, each config's value).
func (r *Resolver) ApplyTopic(name string, id TopicID, partitions int32, configs map[string]string) error {
	return r.ApplyTopicBy("", name, id, partitions, configs)
}

// ApplyTopicBy is ApplyTopic for a record that names the topic's creator
// (Topic.Creator): a binding created here records it; an existing
// binding keeps the creator it has (a record's creator never changes).
func (r *Resolver) ApplyTopicBy(creator, name string, id TopicID, partitions int32, configs map[string]string) error {
	if err := validTopicName(name); err != nil {
		return err
	}
	if IsInternalTopic(name) { // Reserved internal topic names: never bound
		return fmt.Errorf("%w: %q is an internal topic", ErrInvalidTopic, name)
	}
	if partitions < 1 || partitions > maxPartitions {
		return fmt.Errorf("%w: %d (must be 1..%d)", ErrInvalidPartitions, partitions, maxPartitions)
	}
	if err := topicconfig.Check(configs); err != nil {
		return err
	}
	r.adminMu.Lock()
	defer r.adminMu.Unlock()
	r.mu.RLock()
	t := r.mu.topics[name]
	other := r.mu.byID[id]
	r.mu.RUnlock()
	if t != nil && t.id != id {
		if err := r.deleteLocked(t); err != nil {
			return err
		}
		t = nil
	}
	if t == nil {
		if other != nil && other.name != name {
			return fmt.Errorf("%w: topic id %s is bound to %q", ErrTopicExists, id, other.name)
		}
		_, err := r.createLocked(name, id, partitions, maps.Clone(configs), creator)
		return err
	}
	if have := int32(len(t.parts)); partitions < have {
		return fmt.Errorf("%w: %q has %d partitions, the record %d (never shrinks)", ErrInvalidPartitions, name, have, partitions)
	} else if partitions > have {
		nt, err := r.growLocked(t, partitions)
		if err != nil {
			return err
		}
		t = nt
	}
	if maps.Equal(t.configs, configs) { // nil and empty are equal
		return nil
	}
	return r.replaceConfigsLocked(t, configs)
}

// PlanIncrementalAlter returns the full, validated set of explicit
// configs that IncrementalAlterTopicConfigs(name, ops, false) would leave
// on the topic now, without changing anything.
func (r *Resolver) PlanIncrementalAlter(name string, ops []topicconfig.Op) (map[string]string, error) {
	t, err := r.boundTopic(name)
	if err != nil {
		return nil, err
	}
	return r.planOps(t, ops)
}

// AutoCreateTopics is auto.create.topics.enable: whether EnsureTopic may
// create a topic.
func (r *Resolver) AutoCreateTopics() bool { return r.cfg.AutoCreate }

// DefaultPartitions is num.partitions: what a topic created with -1
// partitions, or auto-created, gets.
func (r *Resolver) DefaultPartitions() int32 { return r.cfg.NumPartitions }

package resolver

import "github.com/kgateway/kgateway/topicconfig"

// IncrementalAlterTopicConfigs applies ops to the topic's explicit
// configs, in order, and then validates and persists the result as one
// change (all or nothing). APPEND and SUBTRACT start from the effective
// value (the default when not set, as Kafka does) and apply only to list
// configs (cleanup.policy, *.throttled.replicas); on any other config they
// are ErrInvalidConfig.
func (r *Resolver) IncrementalAlterTopicConfigs(name string, ops []topicconfig.Op, validateOnly bool) error {
	r.adminMu.Lock()
	defer r.adminMu.Unlock()
	t, err := r.boundTopic(name)
	if err != nil {
		// Kafka validates the changes before it looks the topic up: an
		// invalid one is INVALID_CONFIG even for a missing topic.
		if verr := r.validateOps(ops); verr != nil {
			return verr
		}
		return err
	}
	configs, err := r.planOps(t, ops)
	if err != nil {
		return err
	}
	if validateOnly {
		return nil
	}
	return r.replaceConfigsLocked(t, configs)
}

// validateOps checks ops as if on a topic with nothing set.
func (r *Resolver) validateOps(ops []topicconfig.Op) error {
	configs, err := topicconfig.Apply(nil, r.brokerValues(), ops)
	if err != nil {
		return err
	}
	return r.validateConfigs(configs)
}

// planOps is the validated config set ops leave on t.
func (r *Resolver) planOps(t *topic, ops []topicconfig.Op) (map[string]string, error) {
	configs, err := topicconfig.Apply(t.configs, r.brokerValues(), ops)
	if err != nil {
		return nil, err
	}
	if err := r.validateConfigs(configs); err != nil {
		return nil, err
	}
	if err := r.mu.checkViewName(t.name, configs); err != nil { // No name collisions
		return nil, err
	}
	return configs, nil
}

package resolver

import (
	"fmt"
	"time"

	"github.com/kgateway/kgateway/topicconfig"
)

// Topic configs: the vocabulary (names, defaults, validation, resolution)
// is package topicconfig's; the resolver keeps each topic's explicit
// configs in its binding and applies what they resolve to.

const defaultRetentionCheckInterval = 5 * time.Minute

// validateConfigs is topicconfig.Validate over the broker's values, plus
// what this broker serves: no tier or compacted view in cluster mode, a
// tiered topic needs the broker's object store and is neither compacted
// nor viewed (Kafka's checks for remote.storage.enable).
func (r *Resolver) validateConfigs(configs map[string]string) error {
	broker := r.brokerValues()
	if err := topicconfig.Validate(configs, broker); err != nil {
		return err
	}
	value := func(name string) string { return topicconfig.Value(configs, broker, name) }
	if r.cfg.Diskless { // No tier or view on a cache
		for _, name := range []string{"remote.storage.enable", topicconfig.CompactedView} {
			if value(name) == "true" {
				return fmt.Errorf("%w: %s=true is not served in cluster mode", ErrInvalidConfig, name)
			}
		}
	}
	if value("remote.storage.enable") != "true" {
		return nil
	}
	if r.cfg.Tier == nil {
		return fmt.Errorf("%w: remote.storage.enable=true needs the broker's object.store.url", ErrInvalidConfig)
	}
	if topicconfig.PolicyHas(value("cleanup.policy"), "compact") {
		return fmt.Errorf("%w: remote.storage.enable=true is not supported with cleanup.policy=compact", ErrInvalidConfig)
	}
	if topicconfig.ViewOn(configs) {
		// The cleaner copies a view from local ledgers only.
		return fmt.Errorf("%w: remote.storage.enable=true is not supported with %s=true", ErrInvalidConfig, topicconfig.CompactedView)
	}
	return nil
}

// settings resolves a topic's explicit configs (already validated) over
// the broker's values.
func (r *Resolver) settings(configs map[string]string) topicconfig.Settings {
	return topicconfig.Resolve(configs, r.brokerValues(), r.cfg.Ledger)
}

// TopicConfigs returns every known config of the topic, sorted by name,
// with its effective value, source and synonyms (DescribeConfigs reports
// all of them, not only the ones set).
//
// A companion topic is described by its source's configs (the companion topic).
func (r *Resolver) TopicConfigs(name string) ([]topicconfig.Entry, error) {
	if src, ok := r.CompanionSource(name); ok {
		name = src
	}
	t, ok := r.Topic(name)
	if !ok {
		return nil, ErrUnknownTopic
	}
	return topicconfig.Entries(t.Configs, r.brokerValues()), nil
}

// DefaultTopicConfigs is TopicConfigs for a topic with nothing set.
func (r *Resolver) DefaultTopicConfigs() []topicconfig.Entry {
	return topicconfig.Entries(nil, r.brokerValues())
}

// ConfigsFor is TopicConfigs for a topic with set configured explicitly
// (CreateTopics v5+ describes a topic that validate_only never created).
func (r *Resolver) ConfigsFor(set map[string]string) []topicconfig.Entry {
	return topicconfig.Entries(set, r.brokerValues())
}

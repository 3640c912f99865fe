package resolver

import (
	"errors"

	"github.com/kgateway/kgateway/resolver/dynconfig"
	"github.com/kgateway/kgateway/topicconfig"
)

// Dynamic broker configs (package dynconfig): the resolver holds the
// layers in effect, reads them at Open before any topic is resolved, and
// resolves every topic's settings again when they change
// (ApplyBrokerLayers). What may change, the checks, the edits and where
// the layers are kept are dynconfig's (on a single node, DynamicConfigs
// over this resolver's store; in cluster mode, the shared catalog).

var _ dynconfig.Host = (*Resolver)(nil)

// loadBrokerConfigs reads the layers a single node stored, at Open.
func (r *Resolver) loadBrokerConfigs() error {
	l, err := dynconfig.LoadLayers(r.store)
	if err != nil {
		return storageErr("read broker configs", err)
	}
	r.dynBroker.Store(&l)
	r.dynConfigs = dynconfig.NewLocal(r.store, r, storageErr)
	return nil
}

// DynamicConfigs are this node's dynamic broker configs and internal
// topic configs kept in its store (a single node's; a cluster's are the
// shared catalog's).
func (r *Resolver) DynamicConfigs() *dynconfig.Local { return r.dynConfigs }

// BrokerLayers are the dynamic broker config layers in effect.
func (r *Resolver) BrokerLayers() dynconfig.Layers {
	if l := r.dynBroker.Load(); l != nil {
		return *l
	}
	return dynconfig.Layers{}
}

// ApplyBrokerLayers makes l the layers in effect and resolves every
// topic's settings again over them (retention, rollover,
// max.message.bytes, timestamps and compaction lags take the new values
// at their next use), as an alteration of a topic's own configs does.
func (r *Resolver) ApplyBrokerLayers(l dynconfig.Layers) error {
	r.adminMu.Lock()
	defer r.adminMu.Unlock()
	r.dynBroker.Store(&l)
	return r.reapplySettingsLocked()
}

// StaticBrokerConfigs maps each broker config the resolver describes to
// its value from flags (Kafka's default where none was set).
func (r *Resolver) StaticBrokerConfigs() map[string]string {
	out := make(map[string]string, len(brokerConfigs))
	for name, spec := range brokerConfigs {
		out[name] = spec.value(r.cfg)
	}
	return out
}

// ValidateTopicConfigs checks a topic's explicit configs as CreateTopic
// and AlterTopicConfigs do (an internal topic's, dynconfig).
func (r *Resolver) ValidateTopicConfigs(configs map[string]string) error {
	return r.validateConfigs(configs)
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
// precedence order: the dynamic layers', then the flag's when it differs
// from Kafka's default.
func (r *Resolver) brokerSynonyms(name string) []topicconfig.Synonym {
	out := r.BrokerLayers().Synonyms(name)
	if spec, ok := brokerConfigs[name]; ok {
		if v := spec.value(r.cfg); v != spec.def {
			out = append(out, topicconfig.Synonym{Name: name, Value: v, Source: topicconfig.SourceStaticBroker})
		}
	}
	return out
}

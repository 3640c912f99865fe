package resolver

import (
	"fmt"
	"strings"
	"sync"

	"github.com/kgateway/kgateway/ledger"
	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/topicconfig"
)

// bindings is the catalog in memory: every bound topic by name and by id,
// every bound partition by its log, and whether the resolver is closed.
// Resolver holds it as mu, behind its RWMutex; readers of the catalog
// take only the read lock, writers also hold Resolver.adminMu.
//
// It owns the lookups: by name (with a companion's source, the companion
// topic), by id, by log, and the publication of a topic. It may not open,
// close or write a partition, nor touch storage: the catalog's durable
// records and the partitions' logs are the Resolver's.
//
// Methods named *Locked need the lock held by the caller (publish and
// unpublish the write lock); the others take the read lock themselves.
type bindings struct {
	sync.RWMutex
	topics map[string]*topic
	byID   map[TopicID]*topic
	// byLog is every bound partition by its log (PartitionOfLog).
	byLog  map[storage.LogID]*partition
	closed bool
}

func newBindings() bindings {
	return bindings{topics: make(map[string]*topic), byID: make(map[TopicID]*topic), byLog: make(map[storage.LogID]*partition)}
}

// partition resolves (topic, partition) through the binding (read flow
// step 1). It is re-resolved on every attempt so a deleted and recreated
// topic is never read through a stale binding.
func (b *bindings) partition(name string, idx int32) (*partition, error) {
	lookedUp()
	b.RLock()
	defer b.RUnlock()
	if b.closed {
		return nil, fmt.Errorf("%w: %w", ErrStorage, ledger.ErrClosed)
	}
	t, ok := b.topics[name]
	if !ok || idx < 0 || int(idx) >= len(t.parts) {
		if _, companion := b.companionLocked(name); companion && !ok {
			return nil, errReadOnly(name) // Read-only companions
		}
		return nil, ErrUnknownTopic
	}
	return t.parts[idx], nil
}

// all lists every partition of every topic (none once closed).
func (b *bindings) all() []*partition {
	b.RLock()
	defer b.RUnlock()
	if b.closed {
		return nil
	}
	var out []*partition
	for _, t := range b.topics {
		out = append(out, t.parts...)
	}
	return out
}

// publishLocked makes t the binding of its name and id, and of its
// partitions' logs. Needs the write lock.
func (b *bindings) publishLocked(t *topic) {
	b.topics[t.name] = t
	b.byID[t.id] = t
	for _, p := range t.parts {
		b.byLog[p.log] = p
	}
}

// unpublishLocked removes t's binding. Needs the write lock.
func (b *bindings) unpublishLocked(t *topic) {
	delete(b.topics, t.name)
	delete(b.byID, t.id)
	for _, p := range t.parts {
		if b.byLog[p.log] == p {
			delete(b.byLog, p.log)
		}
	}
}

// companionLocked returns the source topic whose companion is name.
func (b *bindings) companionLocked(name string) (*topic, bool) {
	src, ok := strings.CutSuffix(name, CompanionSuffix)
	if !ok {
		return nil, false
	}
	t, ok := b.topics[src]
	if !ok || !topicconfig.ViewOn(t.configs) {
		return nil, false
	}
	return t, true
}

// companionByIDLocked finds the companion with topic id id.
func (b *bindings) companionByIDLocked(id TopicID) (*topic, bool) {
	for _, t := range b.topics {
		if topicconfig.ViewOn(t.configs) && companionID(t.id) == id {
			return t, true
		}
	}
	return nil, false
}

// checkViewName implements no name collisions: a topic named like the
// companion of a topic with a view cannot be created, and a view cannot
// be turned on while a topic holds its companion's name. The caller
// holds Resolver.adminMu, so the answer stays true until it publishes.
func (b *bindings) checkViewName(name string, configs map[string]string) error {
	b.RLock()
	defer b.RUnlock()
	if _, ok := b.companionLocked(name); ok {
		return fmt.Errorf("%w: %q is the compacted view of %q", ErrTopicExists, name, strings.TrimSuffix(name, CompanionSuffix))
	}
	if topicconfig.ViewOn(configs) {
		if _, taken := b.topics[CompanionName(name)]; taken {
			return fmt.Errorf("%w: %s=true needs the name %q, which a topic has", ErrInvalidConfig, topicconfig.CompactedView, CompanionName(name))
		}
	}
	return nil
}

// companionSource is the source topic of a companion name (the
// companion topic): false when name is not the companion of a topic with
// a view on (a topic of that name itself never is, no name collisions).
func (b *bindings) companionSource(name string) (string, bool) {
	b.RLock()
	defer b.RUnlock()
	if _, real := b.topics[name]; real {
		return "", false
	}
	t, ok := b.companionLocked(name)
	if !ok {
		return "", false
	}
	return t.name, true
}

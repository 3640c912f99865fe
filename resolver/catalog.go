package resolver

import (
	"crypto/rand"
	"errors"
	"fmt"
	"maps"

	"go.uber.org/zap"

	"github.com/kgateway/kgateway/ledger"
	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/topicconfig"
)

// The topic catalog: name, topic ID and partition -> LogID bindings
// (read flow step 1), durable in the metadata keyspace (meta.go).

// maxPartitions bounds one topic's partition count: each partition is a
// log with open files, and a typo must not create millions of them.
const maxPartitions = 10000

// validTopicName reports Kafka's rule: 1–249 characters of
// [a-zA-Z0-9._-], and not "." or "..".
func validTopicName(name string) error {
	if name == "" || len(name) > 249 || name == "." || name == ".." {
		return fmt.Errorf("%w: %q", ErrInvalidTopic, name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("%w: %q has illegal character %q", ErrInvalidTopic, name, c)
		}
	}
	return nil
}

// newTopicID returns a random UUID v4 (never the all-zero id Kafka
// reserves for "no id").
func newTopicID() TopicID {
	var id TopicID
	rand.Read(id[:])
	id[6] = id[6]&0x0f | 0x40 // version 4
	id[8] = id[8]&0x3f | 0x80 // RFC 4122 variant
	return id
}

// CreateTopic validates and creates a topic; with validateOnly it only
// validates. partitions -1 means num.partitions; replication must be -1
// or 1.
func (r *Resolver) CreateTopic(name string, partitions int32, replication int16, configs map[string]string, validateOnly bool) (Topic, error) {
	return r.CreateTopicBy("", name, partitions, replication, configs, validateOnly)
}

// CreateTopicBy is CreateTopic recording creator (Topic.Creator) in the
// topic's record, with the binding in one write.
func (r *Resolver) CreateTopicBy(creator, name string, partitions int32, replication int16, configs map[string]string, validateOnly bool) (Topic, error) {
	if err := validTopicName(name); err != nil {
		return Topic{}, err
	}
	if IsInternalTopic(name) { // Reserved internal topic names: it exists, without a binding
		return Topic{}, fmt.Errorf("%w: %q is an internal topic", ErrTopicExists, name)
	}
	r.adminMu.Lock()
	defer r.adminMu.Unlock()
	if _, ok := r.Topic(name); ok {
		return Topic{}, fmt.Errorf("%w: %q", ErrTopicExists, name)
	}
	if partitions == -1 {
		partitions = r.cfg.NumPartitions
	}
	if partitions < 1 || partitions > maxPartitions {
		return Topic{}, fmt.Errorf("%w: %d (must be 1..%d, or -1 for the default)", ErrInvalidPartitions, partitions, maxPartitions)
	}
	if replication != -1 && replication != 1 {
		return Topic{}, fmt.Errorf("%w: %d (one broker: must be 1 or -1)", ErrInvalidReplication, replication)
	}
	if err := r.validateConfigs(configs); err != nil {
		return Topic{}, err
	}
	if err := r.mu.checkViewName(name, configs); err != nil { // No name collisions
		return Topic{}, err
	}
	id := newTopicID()
	if validateOnly {
		return Topic{Name: name, ID: id, Partitions: partitions, Configs: maps.Clone(configs), Creator: creator}, nil
	}
	return r.createLocked(name, id, partitions, maps.Clone(configs), creator)
}

// createLocked allocates the logs, persists the binding together with the
// log counter, and only then opens the partitions (ledger.Open creates the
// logs), so a crash leaves either no topic or a topic whose missing logs
// Open creates.
func (r *Resolver) createLocked(name string, id TopicID, partitions int32, configs map[string]string, creator string) (Topic, error) {
	r.mu.RLock()
	closed := r.mu.closed
	r.mu.RUnlock()
	if closed {
		return Topic{}, fmt.Errorf("%w: %w", ErrStorage, ledger.ErrClosed)
	}
	logs := make([]storage.LogID, partitions)
	for i := range logs {
		logs[i] = r.nextLog + storage.LogID(i)
	}
	next := r.nextLog + storage.LogID(partitions)
	if err := r.store.ApplyMeta(encodeTopic(name, id, logs, configs, creator), putCounter(keyNextLog, uint64(next))); err != nil {
		return Topic{}, storageErr("persist topic", err)
	}
	r.nextLog = next
	// All the partitions' logs in one storage call: two syncs for the
	// topic rather than two per partition (ledger.Open then finds them).
	err := r.store.CreateLogs(logs...)
	var t *topic
	if err == nil {
		t, err = r.openTopic(name, id, logs, configs)
		if t != nil {
			t.creator = creator
		}
	} else {
		err = storageErr("create logs", err)
	}
	if err != nil {
		r.log.Error("create-topic-failed", zap.String("topic", name), zap.Error(err))
		derr := r.removeBindingLocked(name, logs)
		if derr == nil {
			derr = r.deleteLogs(logs)
		}
		if derr != nil {
			r.log.Error("create-topic-rollback-failed", zap.String("topic", name), zap.Error(derr))
		}
		return Topic{}, err
	}
	r.mu.Lock()
	r.mu.publishLocked(t)
	r.mu.Unlock()
	return t.public(), nil
}

// openTopic opens every partition of a binding.
func (r *Resolver) openTopic(name string, id TopicID, logs []storage.LogID, configs map[string]string) (*topic, error) {
	if configs == nil {
		configs = map[string]string{}
	}
	t := &topic{name: name, id: id, configs: configs}
	s := r.settings(configs)
	for i, l := range logs {
		p, err := r.states.openPartition(name, int32(i), l, s)
		if err != nil {
			for _, q := range t.parts {
				q.close()
			}
			return nil, err
		}
		t.parts = append(t.parts, p)
	}
	return t, nil
}

// DeleteTopic removes the binding and every partition's log. The binding
// goes first, together with a deletion marker per log, in one atomic
// write; the logs follow, and Open finishes a deletion a crash interrupted.
func (r *Resolver) DeleteTopic(name string) error {
	if IsInternalTopic(name) { // Reserved internal topic names
		return fmt.Errorf("%w: %q is an internal topic", ErrInvalidTopic, name)
	}
	r.adminMu.Lock()
	defer r.adminMu.Unlock()
	t, err := r.boundTopic(name)
	if err != nil {
		return err
	}
	return r.deleteLocked(t)
}

// deleteLocked deletes a bound topic (DeleteTopic). Needs adminMu.
func (r *Resolver) deleteLocked(t *topic) error {
	name := t.name
	// ckptMu: no checkpoint of these logs may land after their keys go.
	for _, p := range t.parts {
		p.ckptMu.Lock()
		defer p.ckptMu.Unlock()
	}
	logs := make([]storage.LogID, len(t.parts))
	for i, p := range t.parts {
		logs[i] = p.log
	}
	if err := r.removeBindingLocked(name, logs); err != nil {
		return err
	}
	r.mu.Lock()
	r.mu.unpublishLocked(t)
	r.mu.Unlock()
	var errs []error
	for _, p := range t.parts {
		errs = append(errs, p.close())
	}
	errs = append(errs, r.deleteLogs(logs))
	errs = append(errs, syncViews(r.store, &r.mu)) // View removal: the view goes with its source
	return errors.Join(errs...)
}

// removeBindingLocked durably removes a binding and marks its logs for
// deletion, in one write.
func (r *Resolver) removeBindingLocked(name string, logs []storage.LogID) error {
	ops := []storage.MetaOp{{Key: topicKey(name), Delete: true}}
	for _, l := range logs {
		ops = append(ops, storage.MetaOp{Key: idKey(prefixDeleting, uint64(l)), Value: []byte{}})
	}
	if err := r.store.ApplyMeta(ops...); err != nil {
		return storageErr("remove topic", err)
	}
	return nil
}

// EnsureTopic returns the topic, auto-creating it with num.partitions
// partitions when auto.create.topics.enable is set (ErrUnknownTopic
// otherwise, ErrInvalidTopic for a bad name).
func (r *Resolver) EnsureTopic(name string) (Topic, error) {
	return r.EnsureTopicBy("", name)
}

// EnsureTopicBy is EnsureTopic with creator recorded as the creator of a
// topic it creates (Topic.Creator).
func (r *Resolver) EnsureTopicBy(creator, name string) (Topic, error) {
	if IsInternalTopic(name) { // Reserved internal topic names: never auto-created as an ordinary topic
		return Topic{}, fmt.Errorf("%w: %q is an internal topic", ErrInvalidTopic, name)
	}
	if t, ok := r.Topic(name); ok {
		return t, nil
	}
	if err := validTopicName(name); err != nil {
		return Topic{}, err
	}
	if !r.cfg.AutoCreate {
		return Topic{}, fmt.Errorf("%w: %q", ErrUnknownTopic, name)
	}
	t, err := r.CreateTopicBy(creator, name, -1, -1, nil, false)
	if errors.Is(err, ErrTopicExists) { // created concurrently
		if t, ok := r.Topic(name); ok {
			return t, nil
		}
	}
	return t, err
}

// AlterTopicConfigs replaces the topic's explicit configs with configs
// (AlterConfigs semantics; IncrementalAlterTopicConfigs merges instead).
// The new settings apply to later appends and the next retention pass; a
// changed rollover policy reopens the partitions' ledgers.
func (r *Resolver) AlterTopicConfigs(name string, configs map[string]string, validateOnly bool) error {
	if err := r.validateConfigs(configs); err != nil {
		return err
	}
	r.adminMu.Lock()
	defer r.adminMu.Unlock()
	t, err := r.boundTopic(name)
	if err != nil {
		return err
	}
	if err := r.mu.checkViewName(name, configs); err != nil { // No name collisions
		return err
	}
	if validateOnly {
		return nil
	}
	return r.replaceConfigsLocked(t, configs)
}

// replaceConfigsLocked persists configs (already validated) as t's
// explicit configs, publishes the new binding and applies the settings.
// Needs adminMu.
func (r *Resolver) replaceConfigsLocked(t *topic, configs map[string]string) error {
	configs = maps.Clone(configs)
	if configs == nil {
		configs = map[string]string{}
	}
	logs := make([]storage.LogID, len(t.parts))
	for i, p := range t.parts {
		logs[i] = p.log
	}
	if err := r.store.ApplyMeta(encodeTopic(t.name, t.id, logs, configs, t.creator)); err != nil {
		return storageErr("persist topic configs", err)
	}
	nt := &topic{name: t.name, id: t.id, configs: configs, parts: t.parts, creator: t.creator}
	r.mu.Lock()
	r.mu.publishLocked(nt)
	r.mu.Unlock()
	s := r.settings(configs)
	var errs []error
	for _, p := range t.parts {
		errs = append(errs, p.applySettings(s))
	}
	if topicconfig.ViewOn(t.configs) != topicconfig.ViewOn(configs) {
		errs = append(errs, syncViews(r.store, &r.mu)) // View removal: turned off, the view goes
	}
	return errors.Join(errs...)
}

// CreatePartitions grows a topic to count partitions (it never shrinks).
func (r *Resolver) CreatePartitions(name string, count int32, validateOnly bool) error {
	r.adminMu.Lock()
	defer r.adminMu.Unlock()
	t, err := r.boundTopic(name)
	if err != nil {
		return err
	}
	have := int32(len(t.parts))
	if count <= have || count > maxPartitions {
		return fmt.Errorf("%w: %d (topic has %d; must grow, at most %d)", ErrInvalidPartitions, count, have, maxPartitions)
	}
	if validateOnly {
		return nil
	}
	_, err = r.growLocked(t, count)
	return err
}

// growLocked grows t (bound) to count partitions, count being more than
// it has, and returns the binding that replaced t. Needs adminMu.
func (r *Resolver) growLocked(t *topic, count int32) (*topic, error) {
	name := t.name
	have := int32(len(t.parts))
	logs := make([]storage.LogID, count)
	for i, p := range t.parts {
		logs[i] = p.log
	}
	for i := have; i < count; i++ {
		logs[i] = r.nextLog + storage.LogID(i-have)
	}
	next := r.nextLog + storage.LogID(count-have)
	if err := r.store.ApplyMeta(encodeTopic(name, t.id, logs, t.configs, t.creator), putCounter(keyNextLog, uint64(next))); err != nil {
		return nil, storageErr("persist partitions", err)
	}
	r.nextLog = next
	parts := append([]*partition{}, t.parts...)
	s := r.settings(t.configs)
	for i := have; i < count; i++ {
		p, err := r.states.openPartition(name, i, logs[i], s)
		if err != nil {
			for _, q := range parts[have:] {
				q.close()
			}
			return nil, err // the binding is durable; Open retries the ledger
		}
		parts = append(parts, p)
	}
	nt := &topic{name: t.name, id: t.id, configs: t.configs, parts: parts, creator: t.creator}
	r.mu.Lock()
	r.mu.publishLocked(nt)
	r.mu.Unlock()
	return nt, nil
}

// boundTopic returns the binding of a topic by name, or ErrUnknownTopic.
func (r *Resolver) boundTopic(name string) (*topic, error) {
	r.mu.RLock()
	t, ok := r.mu.topics[name]
	_, companion := r.mu.companionLocked(name)
	r.mu.RUnlock()
	if !ok && companion {
		return nil, errReadOnly(name) // Read-only companions: a companion is changed through its source
	}
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTopic, name)
	}
	return t, nil
}

package catalog

import (
	"context"
	"errors"
	"fmt"
	"maps"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/topicconfig"
)

// The changes (kafka.Catalog). Each validates on this node's resolver
// first (validation before writing), writes etcd, and returns once this node's resolver applied
// the write (waiting for the local apply).

func (c *Catalog) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), c.opts.Timeout)
}

func (c *Catalog) key(name string) string { return c.dir + name }

// clusterConfigs refuses what cluster mode does not serve (validation before writing): the
// object tier of a topic (the data is in the object store already) and
// the compacted view.
func clusterConfigs(configs map[string]string) error {
	for _, name := range []string{"remote.storage.enable", topicconfig.CompactedView} {
		if configs[name] == "true" {
			return fmt.Errorf("%w: %s=true is not supported in cluster mode", resolver.ErrInvalidConfig, name)
		}
	}
	return nil
}

// CreateTopic creates a topic with a new id, unless the name is taken in
// etcd (one id per name: TOPIC_ALREADY_EXISTS).
func (c *Catalog) CreateTopic(name string, partitions int32, replication int16, configs map[string]string, validateOnly bool) (resolver.Topic, error) {
	return c.CreateTopicBy("", name, partitions, replication, configs, validateOnly)
}

// CreateTopicBy is CreateTopic recording creator in the topic's record
// (resolver.Topic.Creator on every node).
func (c *Catalog) CreateTopicBy(creator, name string, partitions int32, replication int16, configs map[string]string, validateOnly bool) (resolver.Topic, error) {
	if resolver.IsInternalTopic(name) { // Internal topics kept local: the resolver's answer (reserved internal topic names)
		return c.r.CreateTopic(name, partitions, replication, configs, true)
	}
	if err := clusterConfigs(configs); err != nil {
		return resolver.Topic{}, err
	}
	t, err := c.r.CreateTopicBy(creator, name, partitions, replication, configs, true)
	if err != nil {
		return resolver.Topic{}, err
	}
	ctx, cancel := c.ctx()
	defer cancel()
	if validateOnly {
		_, _, ok, err := c.current(ctx, name)
		if err == nil && ok {
			err = fmt.Errorf("%w: %q", resolver.ErrTopicExists, name)
		}
		return t, err
	}
	if _, err := c.create(ctx, t); err != nil {
		return resolver.Topic{}, err
	}
	return t, nil
}

// create puts t's record if the name is free and waits until it is
// applied; ErrTopicExists when taken, with the taker's mod revision.
func (c *Catalog) create(ctx context.Context, t resolver.Topic) (int64, error) {
	key := c.key(t.Name)
	resp, err := c.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, newRecord(t).encode())).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return 0, etcdErr(ctx, "create topic", err)
	}
	if !resp.Succeeded {
		var rev int64
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
			rev = kvs[0].ModRevision
		}
		return rev, fmt.Errorf("%w: %q", resolver.ErrTopicExists, t.Name)
	}
	return resp.Header.Revision, c.WaitApplied(ctx, resp.Header.Revision)
}

// EnsureTopic returns the topic, creating it when the resolver's
// auto.create.topics.enable allows. Of nodes creating one name at once,
// one creates it and all return it, with its one id (one id per name).
func (c *Catalog) EnsureTopic(name string) (resolver.Topic, error) {
	return c.EnsureTopicBy("", name)
}

// EnsureTopicBy is EnsureTopic recording creator as the creator of a
// topic it creates.
func (c *Catalog) EnsureTopicBy(creator, name string) (resolver.Topic, error) {
	if resolver.IsInternalTopic(name) { // Internal topics kept local
		return c.r.EnsureTopic(name)
	}
	if t, ok := c.r.Topic(name); ok {
		return t, nil
	}
	ctx, cancel := c.ctx()
	defer cancel()
	// The record may be ahead of this node's resolver.
	_, mod, ok, err := c.current(ctx, name)
	if err != nil {
		return resolver.Topic{}, err
	}
	if ok {
		return c.appliedTopic(ctx, name, mod)
	}
	if !c.r.AutoCreateTopics() {
		return c.r.EnsureTopic(name) // ErrUnknownTopic, or ErrInvalidTopic for a bad name
	}
	t, err := c.r.CreateTopicBy(creator, name, -1, -1, nil, true)
	if errors.Is(err, resolver.ErrTopicExists) { // applied meanwhile
		if t, ok := c.r.Topic(name); ok {
			return t, nil
		}
	}
	if err != nil {
		// Never the resolver's EnsureTopic here: it would create the
		// topic locally only.
		return resolver.Topic{}, err
	}
	rev, err := c.create(ctx, t)
	if errors.Is(err, resolver.ErrTopicExists) && rev > 0 {
		return c.appliedTopic(ctx, name, rev) // another node won
	}
	if err != nil {
		return resolver.Topic{}, err
	}
	return t, nil
}

// appliedTopic waits until revision rev of name's record is applied and
// returns the topic.
func (c *Catalog) appliedTopic(ctx context.Context, name string, rev int64) (resolver.Topic, error) {
	if err := c.WaitApplied(ctx, rev); err != nil {
		return resolver.Topic{}, err
	}
	if t, ok := c.r.Topic(name); ok {
		return t, nil
	}
	return resolver.Topic{}, fmt.Errorf("%w: %q (deleted meanwhile)", resolver.ErrUnknownTopic, name)
}

// DeleteTopic deletes the record, guarded by its mod revision so that
// OnDelete gets the id and partitions of the very record deleted (guarded deletion).
func (c *Catalog) DeleteTopic(name string) error {
	if resolver.IsInternalTopic(name) { // Internal topics kept local
		return c.r.DeleteTopic(name)
	}
	ctx, cancel := c.ctx()
	defer cancel()
	for range maxAttempts {
		rec, mod, ok, err := c.current(ctx, name)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: %q", resolver.ErrUnknownTopic, name)
		}
		id, err := rec.topicID()
		if err != nil {
			return err
		}
		key := c.key(name)
		resp, err := c.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", mod)).
			Then(clientv3.OpDelete(key)).
			Commit()
		if err != nil {
			return etcdErr(ctx, "delete topic", err)
		}
		if !resp.Succeeded {
			continue
		}
		if c.opts.OnDelete != nil {
			c.opts.OnDelete(id, rec.Partitions)
		}
		return c.WaitApplied(ctx, resp.Header.Revision)
	}
	return fmt.Errorf("%w: %q", ErrConflict, name)
}

// CreatePartitions grows the topic to count partitions.
func (c *Catalog) CreatePartitions(name string, count int32, validateOnly bool) error {
	return c.update(name, validateOnly, func(rec *record) error {
		if err := c.r.CreatePartitions(name, count, true); err != nil {
			return err
		}
		if count <= rec.Partitions {
			return fmt.Errorf("%w: %d (topic has %d; must grow)", resolver.ErrInvalidPartitions, count, rec.Partitions)
		}
		rec.Partitions = count
		return nil
	})
}

// AlterTopicConfigs replaces the topic's explicit configs.
func (c *Catalog) AlterTopicConfigs(name string, configs map[string]string, validateOnly bool) error {
	return c.update(name, validateOnly, func(rec *record) error {
		if err := clusterConfigs(configs); err != nil {
			return err
		}
		if err := c.r.AlterTopicConfigs(name, configs, true); err != nil {
			return err
		}
		rec.Configs = maps.Clone(configs)
		return nil
	})
}

// IncrementalAlterTopicConfigs applies ops to the topic's explicit
// configs.
func (c *Catalog) IncrementalAlterTopicConfigs(name string, ops []topicconfig.Op, validateOnly bool) error {
	return c.update(name, validateOnly, func(rec *record) error {
		configs, err := c.r.PlanIncrementalAlter(name, ops)
		if err != nil {
			return err
		}
		if err := clusterConfigs(configs); err != nil {
			return err
		}
		rec.Configs = configs
		return nil
	})
}

// update changes name's record with change, which validates on the
// resolver, and puts it if the record is unchanged since it was read
// (its mod revision), retrying on a conflict (compare-and-swap changes). change sees the
// resolver with that revision applied: the resolver's binding is the
// record, or a later one (then the put fails and the change is made
// again on it).
func (c *Catalog) update(name string, validateOnly bool, change func(*record) error) error {
	if resolver.IsInternalTopic(name) { // Internal topics kept local: no binding, no record
		return fmt.Errorf("%w: %q is an internal topic", resolver.ErrUnknownTopic, name)
	}
	ctx, cancel := c.ctx()
	defer cancel()
	for range maxAttempts {
		rec, mod, ok, err := c.current(ctx, name)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: %q", resolver.ErrUnknownTopic, name)
		}
		if err := c.WaitApplied(ctx, mod); err != nil {
			return err
		}
		if err := change(&rec); err != nil {
			return err
		}
		if validateOnly {
			return nil
		}
		key := c.key(name)
		resp, err := c.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", mod)).
			Then(clientv3.OpPut(key, rec.encode())).
			Commit()
		if err != nil {
			return etcdErr(ctx, "update topic", err)
		}
		if resp.Succeeded {
			return c.WaitApplied(ctx, resp.Header.Revision)
		}
	}
	return fmt.Errorf("%w: %q", ErrConflict, name)
}

// current reads name's record and its mod revision; ok is false when
// there is none.
func (c *Catalog) current(ctx context.Context, name string) (rec record, mod int64, ok bool, err error) {
	resp, err := c.cli.Get(ctx, c.key(name))
	if err != nil {
		return rec, 0, false, etcdErr(ctx, "read topic", err)
	}
	if len(resp.Kvs) == 0 {
		return rec, 0, false, nil
	}
	kv := resp.Kvs[0]
	if rec, _, err = decodeRecord(kv.Value); err != nil {
		return rec, 0, false, err
	}
	return rec, kv.ModRevision, true, nil
}

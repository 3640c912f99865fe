package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/kgateway/kgateway/resolver/dynconfig"
	"github.com/kgateway/kgateway/topicconfig"
)

// The cluster's dynamic configs (package dynconfig) beside the topics,
// in one range the catalog watch follows with them (cluster configs in
// the catalog):
//
//	<prefix>topics.configs/brokers/default  the default broker layer (resource "")
//	<prefix>topics.configs/brokers/<id>     node id's broker layer (resource "<id>")
//	<prefix>topics.configs/internal/<name>  an internal topic's explicit configs
//
// each a JSON object of name → value. Every node applies the default
// layer and its own: the resolver's layers are set from them
// (resolver.ApplyBrokerLayers, which re-resolves every topic's settings),
// the internal topics' configs are kept in memory for DescribeConfigs. A
// change is made as a topic's (compare-and-swap on the key's mod
// revision, checked on this node first, waiting for the local apply).

var _ dynconfig.Configs = (*Catalog)(nil)

// configsDir is the configs' directory under the prefix: it sorts just
// before "topics/", so that one watch of [configsDir, end of topics/)
// sees both (and nothing else is written between them).
const configsDir = "topics.configs/"

func (c *Catalog) brokerKey(which dynconfig.Layer) string {
	if which == dynconfig.LayerDefault {
		return c.cfgDir + "brokers/default"
	}
	return c.cfgDir + "brokers/" + strconv.Itoa(int(c.opts.NodeID))
}

func (c *Catalog) internalKey(name string) string { return c.cfgDir + "internal/" + name }

// configs are the cluster's dynamic configs as this node applied them.
type configs struct {
	def, node map[string]string            // the broker layers that apply to this node
	internal  map[string]map[string]string // internal topic → explicit configs
}

// applyConfig applies one config key's value (nil: deleted) to st. A
// value that is not JSON is logged and applied as deleted; a broker
// layer's entries that dynconfig refuses are logged and left out; so the
// layers in effect hold only valid values and every node, loading or
// watching, applies the same ones.
func (c *Catalog) applyConfig(st *configs, key string, v []byte) {
	rest := strings.TrimPrefix(key, c.cfgDir)
	var set map[string]string // nil: deleted
	if v != nil {
		if err := json.Unmarshal(v, &set); err != nil {
			c.log.Error("catalog-config-not-applied", zap.String("key", key), zap.Error(err))
			v, set = nil, nil
		}
	}
	if v != nil && set == nil {
		set = map[string]string{} // JSON null: empty, not deleted
	}
	switch {
	case rest == "brokers/default" || rest == "brokers/"+strconv.Itoa(int(c.opts.NodeID)):
		set = c.validEntries(key, set)
		if rest == "brokers/default" {
			st.def = set
		} else {
			st.node = set
		}
	case strings.HasPrefix(rest, "internal/"):
		name := strings.TrimPrefix(rest, "internal/")
		if set == nil {
			delete(st.internal, name)
		} else {
			st.internal[name] = set
		}
	}
}

// validEntries are the entries of a broker layer dynconfig accepts, each
// on its own; the others are logged.
func (c *Catalog) validEntries(key string, set map[string]string) map[string]string {
	static := c.r.StaticBrokerConfigs()
	out := make(map[string]string, len(set))
	for name, v := range set {
		if err := dynconfig.CheckBrokerLayer(map[string]string{name: v}, static); err != nil {
			c.log.Error("catalog-config-not-applied", zap.String("key", key), zap.Error(err))
			continue
		}
		out[name] = v
	}
	return out
}

// setConfigs makes st this node's configs: the resolver takes the
// broker layers when they changed.
func (c *Catalog) setConfigs(st configs) {
	c.cfgMu.Lock()
	old := c.cfg
	c.cfg = st
	c.cfgMu.Unlock()
	if maps.Equal(old.def, st.def) && maps.Equal(old.node, st.node) && old.internal != nil {
		return
	}
	if err := c.r.ApplyBrokerLayers(dynconfig.Layers{Node: st.node, Default: st.def}); err != nil {
		c.log.Error("catalog-broker-configs-not-applied", zap.Error(err))
	}
}

// configsNow is a copy of the configs applied, to apply one key's change
// to.
func (c *Catalog) configsNow() configs {
	c.cfgMu.Lock()
	defer c.cfgMu.Unlock()
	st := c.cfg
	st.internal = maps.Clone(st.internal)
	if st.internal == nil {
		st.internal = map[string]map[string]string{}
	}
	return st
}

// AlterBrokerConfigs replaces one broker layer (legacy AlterConfigs):
// the default for every node, or this node's.
func (c *Catalog) AlterBrokerConfigs(which dynconfig.Layer, set map[string]string, validateOnly bool) error {
	return c.changeConfig(c.brokerKey(which), dynconfig.Replace(set), c.checkLayer, validateOnly)
}

// IncrementalAlterBrokerConfigs applies ops to one broker layer.
func (c *Catalog) IncrementalAlterBrokerConfigs(which dynconfig.Layer, ops []topicconfig.Op, validateOnly bool) error {
	return c.changeConfig(c.brokerKey(which), dynconfig.Incremental(c.r, ops), c.checkLayer, validateOnly)
}

func (c *Catalog) checkLayer(layer map[string]string) error {
	return dynconfig.CheckBrokerLayer(layer, c.r.StaticBrokerConfigs())
}

// InternalTopicConfigs is an internal topic's explicit configs as this
// node applied them: initial until altered.
func (c *Catalog) InternalTopicConfigs(name string, initial map[string]string) (map[string]string, error) {
	c.cfgMu.Lock()
	defer c.cfgMu.Unlock()
	if set, ok := c.cfg.internal[name]; ok {
		return maps.Clone(set), nil
	}
	return maps.Clone(initial), nil
}

// AlterInternalTopicConfigs replaces an internal topic's explicit configs.
func (c *Catalog) AlterInternalTopicConfigs(name string, initial, set map[string]string, validateOnly bool) error {
	return c.changeConfig(c.internalKey(name), c.fromInitial(initial, dynconfig.Replace(set)), c.r.ValidateTopicConfigs, validateOnly)
}

// IncrementalAlterInternalTopicConfigs applies ops to an internal topic's
// explicit configs.
func (c *Catalog) IncrementalAlterInternalTopicConfigs(name string, initial map[string]string, ops []topicconfig.Op, validateOnly bool) error {
	return c.changeConfig(c.internalKey(name), c.fromInitial(initial, dynconfig.InternalEdit(c.r, ops)), c.r.ValidateTopicConfigs, validateOnly)
}

// fromInitial edits initial when the key was never written (cur nil).
func (c *Catalog) fromInitial(initial map[string]string, edit dynconfig.Edit) dynconfig.Edit {
	return func(cur map[string]string) (map[string]string, error) {
		if cur == nil {
			cur = maps.Clone(initial)
		}
		return edit(cur)
	}
}

// changeConfig edits key's value (nil when absent), checks the result
// and puts it if the key is unchanged since it was read, retrying on a
// conflict (compare-and-swap changes); it returns once this node applied
// it. The edit sees this node with the read revision applied.
func (c *Catalog) changeConfig(key string, edit dynconfig.Edit, check func(map[string]string) error, validateOnly bool) error {
	ctx, cancel := c.ctx()
	defer cancel()
	for range maxAttempts {
		cur, mod, err := c.readConfig(ctx, key)
		if err != nil {
			return err
		}
		if err := c.WaitApplied(ctx, mod); err != nil {
			return err
		}
		next, err := edit(cur)
		if err != nil {
			return err
		}
		if err := check(next); err != nil {
			return err
		}
		if validateOnly {
			return nil
		}
		b, err := json.Marshal(next)
		if err != nil {
			return err
		}
		resp, err := c.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", mod)).
			Then(clientv3.OpPut(key, string(b))).
			Commit()
		if err != nil {
			return etcdErr(ctx, "update configs", err)
		}
		if resp.Succeeded {
			return c.WaitApplied(ctx, resp.Header.Revision)
		}
	}
	return fmt.Errorf("%w: %s", ErrConflict, key)
}

// readConfig reads key's value and mod revision (nil and 0 when absent;
// nil when not JSON).
func (c *Catalog) readConfig(ctx context.Context, key string) (map[string]string, int64, error) {
	resp, err := c.cli.Get(ctx, key)
	if err != nil {
		return nil, 0, etcdErr(ctx, "read configs", err)
	}
	if len(resp.Kvs) == 0 {
		return nil, 0, nil
	}
	var set map[string]string
	if err := json.Unmarshal(resp.Kvs[0].Value, &set); err != nil {
		return nil, resp.Kvs[0].ModRevision, nil // applied as deleted (applyConfig): the change replaces it
	}
	if set == nil {
		set = map[string]string{}
	}
	return set, resp.Kvs[0].ModRevision, nil
}

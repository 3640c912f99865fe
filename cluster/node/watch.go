package node

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/kgateway/kgateway/cluster/owner"
	"github.com/kgateway/kgateway/kafka"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// watch keeps set fed with every key under prefix: a full load, then the
// changes from the load's revision; a watch that fails (etcd restarted,
// the revision compacted) starts over with a full load.
func (n *Node) watch(ctx context.Context, prefix string, set func(map[string][]byte)) {
	for ctx.Err() == nil {
		cur, rev, err := n.load(ctx, prefix)
		if err != nil {
			n.log.Debug("cluster-watch-load-failed", zap.String("prefix", prefix), zap.Error(err))
			select {
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
			continue
		}
		set(cur)
		n.Kick()
		wc := n.cli.Watch(clientv3.WithRequireLeader(ctx), prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1))
		for resp := range wc {
			if resp.Err() != nil || resp.Canceled {
				break
			}
			for _, ev := range resp.Events {
				k := strings.TrimPrefix(string(ev.Kv.Key), prefix)
				if ev.Type == mvccpb.DELETE {
					delete(cur, k)
				} else {
					cur[k] = ev.Kv.Value
				}
			}
			set(cur)
			n.Kick()
		}
	}
}

func (n *Node) load(ctx context.Context, prefix string) (map[string][]byte, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := n.cli.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, 0, err
	}
	cur := make(map[string][]byte, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		cur[strings.TrimPrefix(string(kv.Key), prefix)] = kv.Value
	}
	return cur, resp.Header.Revision, nil
}

func (n *Node) setNodes(cur map[string][]byte) {
	brokers := make(map[int32]kafka.Broker, len(cur))
	for k, v := range cur {
		id, err := strconv.ParseInt(k, 10, 32)
		var r registration
		if err != nil || json.Unmarshal(v, &r) != nil {
			n.log.Warn("cluster-bad-registration", zap.String("key", k))
			continue
		}
		brokers[int32(id)] = kafka.Broker{NodeID: int32(id), Host: r.Host, Port: r.Port, Rack: r.Rack}
	}
	n.mu.Lock()
	n.mu.brokers = brokers
	n.mu.Unlock()
}

func (n *Node) setOwners(cur map[string][]byte) {
	owners := make(map[string]owner.Record, len(cur))
	for k, v := range cur {
		r, err := owner.ParseRecord(v)
		if err != nil {
			n.log.Warn("cluster-bad-owner-record", zap.String("key", k), zap.Error(err))
			continue
		}
		owners[k] = r
	}
	n.mu.Lock()
	n.mu.owners = owners
	n.mu.Unlock()
}

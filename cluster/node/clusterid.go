package node

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// SharedClusterID returns the cluster's id: the one stored under
// P cluster-id, or, when none is yet, proposed, stored atomically (the
// first node to ask wins; the others read its id). Every node thus
// reports one cluster id, as a Kafka cluster's brokers do: clients
// compare it (ApiVersions v5, KIP-1242) and rediscover the cluster when
// a node reports another.
func (n *Node) SharedClusterID(ctx context.Context, proposed string) (string, error) {
	key := n.cfg.Prefix + "cluster-id"
	resp, err := n.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, proposed)).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return "", fmt.Errorf("cluster: cluster id: %w", err)
	}
	if resp.Succeeded {
		return proposed, nil
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 || len(kvs[0].Value) == 0 {
		return "", fmt.Errorf("cluster: cluster id: %s is empty", key)
	}
	return string(kvs[0].Value), nil
}

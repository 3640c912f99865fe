package coord

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// DefaultPIDBlock is how many producer ids ProducerIDs takes at once.
const DefaultPIDBlock = 1000

// ProducerIDs returns a producer id allocator over the etcd counter
// prefix + "pid" (producer id blocks): it hands out ids from a block of block ids
// (DefaultPIDBlock if block <= 0) taken by compare-and-swap, and takes
// the next block when this one is used up. It is safe for concurrent use.
func ProducerIDs(cli *clientv3.Client, prefix string, block int) func(ctx context.Context) (int64, error) {
	if block <= 0 {
		block = DefaultPIDBlock
	}
	key := prefix + "pid"
	var mu sync.Mutex
	var next, end int64
	return func(ctx context.Context) (int64, error) {
		mu.Lock()
		defer mu.Unlock()
		if next >= end {
			start, err := takeBlock(ctx, cli, key, int64(block))
			if err != nil {
				return 0, err
			}
			next, end = start, start+int64(block)
		}
		id := next
		next++
		return id, nil
	}
}

// takeBlock moves the counter at key from its value v to v+n, if nobody
// moved it since it was read, and returns v. A swap whose outcome is
// unknown returns an error: the block it may have taken is abandoned.
func takeBlock(ctx context.Context, cli *clientv3.Client, key string, n int64) (int64, error) {
	for {
		resp, err := cli.Get(ctx, key)
		if err != nil {
			return 0, fmt.Errorf("coord: producer ids: %w", err)
		}
		var v, rev int64
		if len(resp.Kvs) == 1 {
			rev = resp.Kvs[0].ModRevision
			if v, err = strconv.ParseInt(string(resp.Kvs[0].Value), 10, 64); err != nil || v < 0 {
				return 0, fmt.Errorf("coord: producer ids: counter %q", resp.Kvs[0].Value)
			}
		}
		txn, err := cli.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", rev)).
			Then(clientv3.OpPut(key, strconv.FormatInt(v+n, 10))).
			Commit()
		if err != nil {
			return 0, fmt.Errorf("coord: producer ids: %w", err)
		}
		if txn.Succeeded {
			return v, nil
		}
		// Another allocator took a block first: read again.
	}
}

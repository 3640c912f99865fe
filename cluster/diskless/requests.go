package diskless

import (
	"context"
	"sync/atomic"

	clientv3 "go.etcd.io/etcd/client/v3"
	"gocloud.dev/blob"
)

// Requests counts what a Committer asked of etcd and of the object store
// since it was made: the inputs of the cost model (docs/DESIGN.md "Cluster
// mode: what it costs"), and what a node exports as metrics.
type Requests struct {
	EtcdTxns, EtcdReads                                int64
	ObjectPuts, ObjectGets, ObjectDeletes, ObjectLists int64
	// ObjectBytesRead is how many bytes the object reads fetched (the
	// ranges' and the exported states' bodies).
	ObjectBytesRead int64
}

// counters are Requests as they are counted.
type counters struct {
	etcdTxns, etcdReads                                atomic.Int64
	objectPuts, objectGets, objectDeletes, objectLists atomic.Int64
	objectBytesRead                                    atomic.Int64
}

// Requests returns the counts so far.
func (c *Committer) Requests() Requests {
	n := &c.counts
	return Requests{EtcdTxns: n.etcdTxns.Load(), EtcdReads: n.etcdReads.Load(),
		ObjectPuts: n.objectPuts.Load(), ObjectGets: n.objectGets.Load(),
		ObjectDeletes: n.objectDeletes.Load(), ObjectLists: n.objectLists.Load(),
		ObjectBytesRead: n.objectBytesRead.Load()}
}

// etcdClient is the etcd client with every transaction and read counted.
type etcdClient struct {
	*clientv3.Client
	n *counters
}

func (e etcdClient) Txn(ctx context.Context) clientv3.Txn {
	e.n.etcdTxns.Add(1)
	return e.Client.Txn(ctx)
}

func (e etcdClient) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	e.n.etcdReads.Add(1)
	return e.Client.Get(ctx, key, opts...)
}

// objectStore is the bucket with every request counted (a list counts
// once per page the iterator fetches).
type objectStore struct {
	*blob.Bucket
	n *counters
}

func (o objectStore) WriteAll(ctx context.Context, key string, p []byte, opts *blob.WriterOptions) error {
	o.n.objectPuts.Add(1)
	return o.Bucket.WriteAll(ctx, key, p, opts)
}

func (o objectStore) Delete(ctx context.Context, key string) error {
	o.n.objectDeletes.Add(1)
	return o.Bucket.Delete(ctx, key)
}

func (o objectStore) NewRangeReader(ctx context.Context, key string, offset, length int64, opts *blob.ReaderOptions) (*blob.Reader, error) {
	o.n.objectGets.Add(1)
	return o.Bucket.NewRangeReader(ctx, key, offset, length, opts)
}

func (o objectStore) NewReader(ctx context.Context, key string, opts *blob.ReaderOptions) (*blob.Reader, error) {
	o.n.objectGets.Add(1)
	return o.Bucket.NewReader(ctx, key, opts)
}

func (o objectStore) List(opts *blob.ListOptions) *listIterator {
	o.n.objectLists.Add(1)
	return &listIterator{it: o.Bucket.List(opts), n: o.n}
}

// listIterator counts a list request per page of results.
type listIterator struct {
	it   *blob.ListIterator
	n    *counters
	seen int
}

// listPage is the page size of the object stores' list requests (S3's
// ListObjectsV2 returns at most 1,000 keys).
const listPage = 1000

func (l *listIterator) Next(ctx context.Context) (*blob.ListObject, error) {
	obj, err := l.it.Next(ctx)
	if err == nil {
		l.seen++
		if l.seen%listPage == 0 {
			l.n.objectLists.Add(1)
		}
	}
	return obj, err
}

package diskless

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/etcdtest"
	"github.com/kgateway/kgateway/cluster/owner"
	"github.com/kgateway/kgateway/storage/objstore"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"gocloud.dev/blob"
)

// deadline bounds every test's waits.
const deadline = 60 * time.Second

const prefix = "/kg/"

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	t.Cleanup(cancel)
	return ctx
}

// clock is a test clock: the real one, moved forward by Advance.
type clock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

// env is one etcd and one bucket shared by the nodes of a test.
type env struct {
	t    testing.TB
	etcd *etcdtest.Server
	// client is a new client of the env's etcd (each node's own).
	client func(testing.TB) *clientv3.Client
	cli    *clientv3.Client
	bucket *blob.Bucket
	dir    string // the file bucket's directory ("" for S3)
	clock  *clock
	opts   Options
}

// newEnv starts etcd and opens the bucket at url (file:// on a fresh
// directory when url is "").
func newEnv(t testing.TB, url string) *env {
	t.Helper()
	srv := etcdtest.Start(t)
	return newEnvOn(t, url, srv.Client, srv)
}

// newEnvOn is newEnv over an etcd whose clients client makes (srv is the
// embedded one, if it is).
func newEnvOn(t testing.TB, url string, client func(testing.TB) *clientv3.Client, srv *etcdtest.Server) *env {
	t.Helper()
	e := &env{t: t, etcd: srv, client: client, clock: &clock{}}
	e.cli = client(t)
	if url == "" {
		e.dir = t.TempDir()
		url = "file://" + e.dir
	}
	b, err := objstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	e.bucket = b
	e.opts = Options{OrphanAge: time.Hour, Now: e.clock.Now}
	return e
}

// node is one node's session, ownership manager and committer.
type node struct {
	name string
	sess *concurrency.Session
	m    *owner.Manager
	c    *Committer
}

// node starts a node whose session runs on a client of its own.
func (e *env) node(name string) *node {
	e.t.Helper()
	sess, err := concurrency.NewSession(e.client(e.t), concurrency.WithTTL(60))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { sess.Close() })
	m := owner.New(e.cli, sess, name, prefix)
	return &node{name: name, sess: sess, m: m, c: New(e.cli, m, e.bucket, prefix, name, e.opts)}
}

func (n *node) acquire(t testing.TB, pkeys ...string) map[string]owner.Ownership {
	t.Helper()
	owns := make(map[string]owner.Ownership)
	for _, p := range pkeys {
		o, err := n.m.Acquire(ctxT(t), p)
		if err != nil {
			t.Fatalf("%s acquires %s: %v", n.name, p, err)
		}
		owns[p] = o
	}
	return owns
}

// recordBatch is a Kafka record batch header (magic 2) covering
// [base, base+n) followed by a payload that names the batch.
func recordBatch(pkey string, base int64, n int32) []byte {
	payload := bytes.Repeat([]byte(fmt.Sprintf("%s@%d;", pkey, base)), 1+int(base%5))
	b := make([]byte, batchHeaderLen, batchHeaderLen+len(payload))
	binary.BigEndian.PutUint64(b, uint64(base))
	binary.BigEndian.PutUint32(b[8:], uint32(batchHeaderLen+len(payload)-batchLenPrefix))
	b[magicOff] = 2
	binary.BigEndian.PutUint32(b[lastDeltaOff:], uint32(n-1))
	binary.BigEndian.PutUint32(b[57:], uint32(n))
	return append(b, payload...)
}

func batch(pkey string, base int64, n int32) Batch {
	return Batch{PKey: pkey, Base: base, Records: n, MaxTime: 1000 + base, Data: recordBatch(pkey, base, n)}
}

// oneErr fails unless every partition's result is nil.
func allOK(t testing.TB, res map[string]error) {
	t.Helper()
	for p, err := range res {
		if err != nil {
			t.Fatalf("commit of %s: %v", p, err)
		}
	}
}

// readAll reads pkey's published ranges and returns the batches they
// hold by base offset, checking that the ranges tile [first base, end)
// (ranges tiling the log) and that every batch lies within its range.
func (e *env) readAll(t testing.TB, c *Committer, pkey string) (start, end int64, byBase map[int64][]byte, ranges []Range) {
	t.Helper()
	start, end, ranges, err := c.Log(ctxT(t), pkey)
	if err != nil {
		t.Fatal(err)
	}
	byBase = make(map[int64][]byte)
	for i, r := range ranges {
		if i > 0 && r.Base != ranges[i-1].End {
			t.Fatalf("%s: range [%d, %d) after one ending at %d", pkey, r.Base, r.End, ranges[i-1].End)
		}
		data, err := c.ReadRange(ctxT(t), r)
		if err != nil {
			t.Fatalf("%s: read [%d, %d): %v", pkey, r.Base, r.End, err)
		}
		for pos := 0; pos < len(data); {
			size := batchLenPrefix + int(binary.BigEndian.Uint32(data[pos+8:]))
			byBase[int64(binary.BigEndian.Uint64(data[pos:]))] = data[pos : pos+size]
			pos += size
		}
	}
	switch {
	case len(ranges) == 0 && end != start:
		t.Fatalf("%s: no range but start %d end %d", pkey, start, end)
	case len(ranges) > 0 && (ranges[0].Base > start || ranges[len(ranges)-1].End != end):
		t.Fatalf("%s: ranges [%d, %d) for log [%d, %d)", pkey, ranges[0].Base, ranges[len(ranges)-1].End, start, end)
	}
	return start, end, byBase, ranges
}

// objects lists the bucket's objects under dir.
func (e *env) objects(t testing.TB, dir string) []string {
	t.Helper()
	var names []string
	it := e.bucket.List(&blob.ListOptions{Prefix: dir})
	for {
		o, err := it.Next(ctxT(t))
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, o.Key)
	}
}

// refs is an object's reference record: its count, or -1 when absent.
func (e *env) refs(t testing.TB, object string) int64 {
	t.Helper()
	resp, err := e.cli.Get(ctxT(t), prefix+"obj/"+object)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) == 0 {
		return -1
	}
	st, err := decodeObj(object, resp.Kvs[0].Value, resp.Kvs[0].ModRevision)
	if err != nil {
		t.Fatal(err)
	}
	return st.Refs
}

// keys counts the etcd keys under prefix+sub.
func (e *env) keys(t testing.TB, sub string) int64 {
	t.Helper()
	resp, err := e.cli.Get(ctxT(t), prefix+sub, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Count
}

func objectsOf(ranges []Range) []string {
	var out []string
	for _, r := range ranges {
		if !slices.Contains(out, r.Object) {
			out = append(out, r.Object)
		}
	}
	return out
}

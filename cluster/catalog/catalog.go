package catalog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kgateway/kgateway/resolver"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Options configures a Catalog.
type Options struct {
	// Timeout bounds each change (its etcd calls and the wait for this
	// node's resolver to apply it, waiting for the local apply): Kafka's default request timeout,
	// 30 s, when zero.
	Timeout time.Duration
	// OnDelete is called by the node whose DeleteTopic deleted the record,
	// once, after etcd accepted the deletion, with the deleted topic's id
	// and partition count, so that its data elsewhere (the object store)
	// can be removed (guarded deletion). It must not call the Catalog.
	OnDelete func(id resolver.TopicID, partitions int32)
	// RetryInterval is the pause between attempts to reload the catalog
	// while etcd fails (default 500 ms).
	RetryInterval time.Duration
	// NodeID is this node's id: the broker layer named by it applies
	// here (configs.go).
	NodeID int32
	Logger *zap.Logger
}

// ErrClosed is returned by WaitApplied, and so by every change, after
// Close.
var ErrClosed = errors.New("catalog: closed")

// ErrConflict is a change that lost the compare-and-swap to concurrent
// changes of the same topic on every attempt (compare-and-swap changes).
var ErrConflict = errors.New("catalog: concurrent changes of the topic")

// maxAttempts bounds the compare-and-swap attempts of one change (compare-and-swap changes).
const maxAttempts = 5

// Catalog is the shared topic catalog of one node: kafka.Catalog over
// etcd, applied to this node's resolver.
type Catalog struct {
	cli    *clientv3.Client
	dir    string // <prefix>topics/
	cfgDir string // <prefix>topics.configs/ (configs.go)
	r      *resolver.Resolver
	opts   Options
	log    *zap.Logger

	mu struct {
		sync.Mutex
		applied int64         // every topic change up to this revision is applied (waiting for the local apply)
		changed chan struct{} // closed and replaced when applied advances or on Close
		started bool
		closed  bool
	}
	// cfg is the dynamic configs applied (configs.go); cfgMu guards it.
	cfgMu sync.Mutex
	cfg   configs

	stop context.CancelFunc // ends the watch
	done chan struct{}      // closed when the watch loop returned
}

// New makes the catalog of the topics under prefix (cluster.etcd.prefix,
// e.g. "/kgateway/") for this node's resolver r. Nothing happens until
// Start. The client and the resolver stay the caller's.
func New(cli *clientv3.Client, prefix string, r *resolver.Resolver, opts Options) (*Catalog, error) {
	if cli == nil || r == nil {
		return nil, errors.New("catalog: a client and a resolver are needed")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.RetryInterval <= 0 {
		opts.RetryInterval = 500 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	c := &Catalog{cli: cli, dir: prefix + "topics/", cfgDir: prefix + configsDir, r: r, opts: opts, log: opts.Logger, done: make(chan struct{})}
	c.mu.changed = make(chan struct{})
	return c, nil
}

// Start loads every topic record and makes the resolver match them
// (etcd as the catalog's truth), then follows the changes in the background until Close (the catalog watch).
// ctx bounds the first load only.
func (c *Catalog) Start(ctx context.Context) error {
	c.mu.Lock()
	if c.mu.started || c.mu.closed {
		c.mu.Unlock()
		return errors.New("catalog: already started or closed")
	}
	c.mu.started = true
	c.mu.Unlock()
	rev, err := c.load(ctx)
	if err != nil {
		close(c.done)
		return err
	}
	wctx, stop := context.WithCancel(context.Background())
	c.stop = stop
	go c.run(wctx, rev)
	return nil
}

// Close stops following the catalog; waiting changes fail with
// ErrClosed.
func (c *Catalog) Close() error {
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return nil
	}
	c.mu.closed = true
	close(c.mu.changed)
	started := c.mu.started
	c.mu.Unlock()
	if c.stop != nil {
		c.stop()
	}
	if started {
		<-c.done
	}
	return nil
}

// Applied is the etcd revision up to which every topic change is applied
// to the resolver.
func (c *Catalog) Applied() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.applied
}

// WaitApplied returns once every topic change up to revision rev is
// applied to this node's resolver (waiting for the local apply), or ctx's error (wrapping
// context.DeadlineExceeded on a deadline: Kafka's REQUEST_TIMED_OUT), or
// ErrClosed. rev must be the revision of a topic change (a record's mod
// revision, a create's or a deletion's): the applied revision reaches
// only those, and a load's.
func (c *Catalog) WaitApplied(ctx context.Context, rev int64) error {
	for {
		c.mu.Lock()
		applied, changed, closed := c.mu.applied, c.mu.changed, c.mu.closed
		c.mu.Unlock()
		if applied >= rev {
			return nil
		}
		if closed {
			return ErrClosed
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("%w: catalog: revision %d not applied (at %d)", ctx.Err(), rev, applied)
		}
	}
}

// advance records that every change up to rev is applied and wakes the
// waiters.
func (c *Catalog) advance(rev int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rev <= c.mu.applied || c.mu.closed {
		return
	}
	c.mu.applied = rev
	close(c.mu.changed)
	c.mu.changed = make(chan struct{})
}

// run follows the catalog from revision rev (loaded) until ctx ends:
// when the watch ends (compaction, cancellation, an apply that failed),
// a full reload and a new watch from its revision (the catalog watch).
func (c *Catalog) run(ctx context.Context, rev int64) {
	defer close(c.done)
	for {
		err := c.follow(ctx, rev)
		if ctx.Err() != nil {
			return
		}
		c.log.Warn("catalog-watch-ended", zap.Int64("revision", c.Applied()), zap.Error(err))
		if rev, err = c.reload(ctx); err != nil {
			return
		}
	}
}

// reload loads until a load succeeds or ctx ends.
func (c *Catalog) reload(ctx context.Context) (int64, error) {
	for {
		lctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
		rev, err := c.load(lctx)
		cancel()
		if err == nil {
			return rev, nil
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		c.log.Warn("catalog-reload-failed", zap.Error(err))
		t := time.NewTimer(c.opts.RetryInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, ctx.Err()
		case <-t.C:
		}
	}
}

// load reads every record at one revision, applies each, deletes the
// local topics without one (etcd as the catalog's truth) and returns the revision.
func (c *Catalog) load(ctx context.Context) (int64, error) {
	resp, err := c.cli.Get(ctx, c.cfgDir, clientv3.WithRange(c.end()))
	if err != nil {
		return 0, etcdErr(ctx, "load topics", err)
	}
	// The configs first, so that topics are resolved over them.
	st := configs{internal: map[string]map[string]string{}}
	for _, kv := range resp.Kvs {
		if strings.HasPrefix(string(kv.Key), c.cfgDir) {
			c.applyConfig(&st, string(kv.Key), kv.Value)
		}
	}
	c.setConfigs(st)
	inEtcd := make(map[string]bool, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		if !strings.HasPrefix(string(kv.Key), c.dir) {
			continue
		}
		name := strings.TrimPrefix(string(kv.Key), c.dir)
		inEtcd[name] = true
		if err := c.applyPut(name, kv.Value); err != nil {
			return 0, err
		}
	}
	for _, t := range c.r.Topics() {
		if t.Companion || resolver.IsInternalTopic(t.Name) || inEtcd[t.Name] {
			continue
		}
		if err := c.applyDelete(t.Name); err != nil {
			return 0, err
		}
	}
	c.advance(resp.Header.Revision)
	return resp.Header.Revision, nil
}

// follow applies the changes after revision rev in order, until the
// watch ends or an apply fails. The applied revision advances to the
// events' own revisions: a watch response's header revision may be ahead
// of events still to come. The watch requires a leader, so
// that an etcd member cut off from its cluster ends it (and the catalog
// loads again from a member that has one) rather than leaving it silent.
func (c *Catalog) follow(ctx context.Context, rev int64) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for resp := range c.cli.Watch(clientv3.WithRequireLeader(wctx), c.cfgDir, clientv3.WithRange(c.end()), clientv3.WithRev(rev+1)) {
		if err := resp.Err(); err != nil {
			return err
		}
		if resp.Canceled {
			return errors.New("catalog: watch canceled")
		}
		for _, ev := range resp.Events {
			// The events of one revision (one transaction) come in one
			// response: the revision is applied once all of them are.
			c.advance(ev.Kv.ModRevision - 1)
			if err := c.apply(ev); err != nil {
				return err
			}
		}
		if n := len(resp.Events); n > 0 {
			c.advance(resp.Events[n-1].Kv.ModRevision)
		}
	}
	return errors.New("catalog: watch closed")
}

// end is the end of the range the catalog reads and watches: the configs
// and the topics (configsDir sorts before topics/).
func (c *Catalog) end() string { return clientv3.GetPrefixRangeEnd(c.dir) }

func (c *Catalog) apply(ev *clientv3.Event) error {
	key := string(ev.Kv.Key)
	if strings.HasPrefix(key, c.cfgDir) {
		st := c.configsNow()
		var v []byte
		if ev.Type != mvccpb.DELETE {
			v = ev.Kv.Value
		}
		c.applyConfig(&st, key, v)
		c.setConfigs(st)
		return nil
	}
	if !strings.HasPrefix(key, c.dir) {
		return nil // between the two directories: nobody's
	}
	name := strings.TrimPrefix(key, c.dir)
	if ev.Type == mvccpb.DELETE {
		return c.applyDelete(name)
	}
	return c.applyPut(name, ev.Kv.Value)
}

// applyPut applies one record. A record that can never apply (bad JSON,
// an invalid value) is logged and skipped; a storage failure is returned,
// and the caller loads again (the catalog watch).
func (c *Catalog) applyPut(name string, v []byte) error {
	if resolver.IsInternalTopic(name) { // Internal topics kept local: never written; ignore a stray one
		return nil
	}
	rec, id, err := decodeRecord(v)
	if err == nil {
		err = c.r.ApplyTopicBy(rec.Creator, name, id, rec.Partitions, rec.Configs)
	}
	if err != nil && errors.Is(err, resolver.ErrStorage) {
		return fmt.Errorf("catalog: apply %q: %w", name, err)
	}
	if err != nil {
		c.log.Error("catalog-record-not-applied", zap.String("topic", name), zap.Error(err))
	}
	return nil
}

// applyDelete deletes the local topic, if any.
func (c *Catalog) applyDelete(name string) error {
	if resolver.IsInternalTopic(name) {
		return nil
	}
	err := c.r.DeleteTopic(name)
	switch {
	case err == nil, errors.Is(err, resolver.ErrUnknownTopic):
		return nil
	case errors.Is(err, resolver.ErrStorage):
		return fmt.Errorf("catalog: delete %q: %w", name, err)
	}
	c.log.Error("catalog-delete-not-applied", zap.String("topic", name), zap.Error(err))
	return nil
}

// etcdErr wraps an etcd failure; one past the request's deadline wraps
// the context's error (REQUEST_TIMED_OUT).
func etcdErr(ctx context.Context, op string, err error) error {
	if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		return fmt.Errorf("%w: catalog: %s: %v", ctx.Err(), op, err)
	}
	return fmt.Errorf("catalog: %s: %w", op, err)
}

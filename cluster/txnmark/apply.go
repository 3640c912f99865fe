package txnmark

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/kgateway/kgateway/cluster/owner"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// The partition side: every node watches every record and applies those
// of the partitions it serves (leader-applied records).

// watch keeps r.mu.recs equal to the records in etcd: a full load, then
// the changes; a watch that ends (etcd restarted, the revision
// compacted) starts over with a load.
func (r *Relay) watch(ctx context.Context) {
	for ctx.Err() == nil {
		rev, err := r.load(ctx)
		if err != nil {
			r.log.Debug("txnmark-load-failed", zap.Error(err))
			select {
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
			continue
		}
		r.Kick() // a load: every key
		wc := r.cli.Watch(clientv3.WithRequireLeader(ctx), r.dir, clientv3.WithPrefix(), clientv3.WithRev(rev+1))
		for resp := range wc {
			if resp.Err() != nil || resp.Canceled {
				break
			}
			r.mu.Lock()
			for _, ev := range resp.Events {
				r.setLocked(string(ev.Kv.Key), ev.Kv, ev.Type == mvccpb.DELETE)
			}
			r.mu.rev = max(r.mu.rev, resp.Header.Revision)
			r.wakeLocked()
			r.mu.Unlock()
			r.wake()
		}
	}
}

func (r *Relay) load(ctx context.Context) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	resp, err := r.cli.Get(ctx, r.dir, clientv3.WithPrefix())
	if err != nil {
		return 0, err
	}
	seen := make(map[string]bool, len(resp.Kvs))
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, kv := range resp.Kvs {
		seen[string(kv.Key)] = true
		r.setLocked(string(kv.Key), kv, false)
	}
	for k := range r.mu.recs {
		if !seen[r.dir+k] {
			delete(r.mu.recs, k)
		}
	}
	r.mu.rev = resp.Header.Revision
	r.wakeLocked()
	return resp.Header.Revision, nil
}

// wakeLocked releases the waiters whose key is gone as of the revision
// recs reflect.
func (r *Relay) wakeLocked() {
	for k, f := range r.mu.floors {
		if f <= r.mu.rev {
			delete(r.mu.floors, k) // recs reflect the deletion
		}
	}
	for w := range r.mu.waiters {
		if r.mu.rev >= w.rev && r.mu.recs[w.key] == nil {
			close(w.gone)
			delete(r.mu.waiters, w)
		}
	}
}

// setLocked records one key's new state; an entry being applied keeps its
// progress (appliedRev says which revision it was).
func (r *Relay) setLocked(key string, kv *mvccpb.KeyValue, deleted bool) {
	k := strings.TrimPrefix(key, r.dir)
	if deleted {
		delete(r.mu.recs, k)
		delete(r.mu.dirty, k)
		return
	}
	r.mu.dirty[k] = struct{}{}
	topic, partition, pid, ok := parseKey(k)
	var rec record
	if !ok || json.Unmarshal(kv.Value, &rec) != nil {
		r.log.Warn("txnmark-bad-record", zap.String("key", key))
		return
	}
	e := r.mu.recs[k]
	if e == nil {
		e = &entry{topic: topic, partition: partition, pid: pid}
		r.mu.recs[k] = e
	}
	if e.rev != kv.ModRevision {
		e.rec, e.rev, e.retryAt = rec, kv.ModRevision, time.Time{}
	}
}

// applyLoop applies the records that changed whenever some do, and looks
// at every record every Retry (the failed ones are retried then) and
// when asked to (Kick).
func (r *Relay) applyLoop(ctx context.Context) {
	tick := time.NewTicker(r.opts.Retry)
	defer tick.Stop()
	for {
		all := false
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
		case <-tick.C:
			all = true
		}
		r.applyDue(ctx, all)
	}
}

// job is one record to apply, copied out of its entry.
type job struct {
	key string
	e   *entry
	rec record
	rev int64
	o   owner.Ownership
}

// applyDue starts an applier for every record of a served partition that
// is not applied, not being applied and not waiting for a retry: among
// the records changed since the last pass, or all of them. A pass over
// the changed ones only keeps a busy relay's work proportional to the
// changes, not to every open transaction's partitions.
func (r *Relay) applyDue(ctx context.Context, all bool) {
	now := time.Now()
	var jobs []job
	r.mu.Lock()
	keys := r.mu.dirty
	if all || r.mu.all {
		keys = nil
		for k := range r.mu.recs {
			if keys == nil {
				keys = make(map[string]struct{}, len(r.mu.recs))
			}
			keys[k] = struct{}{}
		}
	}
	r.mu.dirty, r.mu.all = map[string]struct{}{}, false
	for k := range keys {
		e := r.mu.recs[k]
		if e == nil || e.busy || now.Before(e.retryAt) {
			continue
		}
		o, ok := r.serving(e.topic, e.partition)
		if !ok || (e.rec.Decision == "" && e.appliedRev == e.rev && e.appliedEpoch == o.Epoch) {
			continue
		}
		e.busy = true
		jobs = append(jobs, job{key: r.dir + k, e: e, rec: e.rec, rev: e.rev, o: o})
	}
	r.mu.Unlock()
	for _, j := range jobs {
		select {
		case <-ctx.Done():
			r.finish(j, false)
			continue
		case r.sem <- struct{}{}:
		}
		r.wg.Add(1)
		go func() {
			defer func() { <-r.sem; r.wg.Done() }()
			r.finish(j, r.apply(ctx, j))
		}()
	}
}

// finish records an applier's outcome. A record that changed while it
// was applied is looked at again at once.
func (r *Relay) finish(j job, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j.e.busy = false
	if j.e.rev != j.rev && r.mu.recs[strings.TrimPrefix(j.key, r.dir)] == j.e {
		r.mu.dirty[strings.TrimPrefix(j.key, r.dir)] = struct{}{}
		r.wake()
	}
	switch {
	case !ok:
		j.e.retryAt = time.Now().Add(r.opts.Retry)
	case j.rec.Decision == "":
		j.e.appliedRev, j.e.appliedEpoch = j.rev, j.o.Epoch
	}
}

// apply hands one record to the resolver (leader-applied records): a registration, or a
// marker followed by the record's guarded deletion.
func (r *Relay) apply(ctx context.Context, j job) bool {
	e := j.e
	k := r.rel(j.key)
	defer r.locks.lock(k)()
	if r.superseded(k, j) {
		return true
	}
	if j.rec.Decision == "" {
		if err := r.parts.AddTxnPartition(e.topic, e.partition, e.pid, j.rec.Epoch); err != nil {
			// A registration older than the partition's epoch is
			// fenced for good: nothing to retry.
			r.log.Debug("txnmark-register-failed", zap.String("topic", e.topic), zap.Int32("partition", e.partition),
				zap.Int64("producer-id", e.pid), zap.Error(err))
		}
		return true
	}
	err := r.parts.WriteTxnMarker(e.topic, e.partition, e.pid, j.rec.Epoch, j.rec.Decision == "commit", 0)
	if err != nil {
		r.log.Info("txnmark-marker-failed", zap.String("topic", e.topic), zap.Int32("partition", e.partition),
			zap.Int64("producer-id", e.pid), zap.Error(err))
		return false
	}
	cctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	cmp := append(r.owners().Guard(j.o), clientv3.Compare(clientv3.ModRevision(j.key), "=", j.rev))
	if _, err := r.cli.Txn(cctx).If(cmp...).Then(clientv3.OpDelete(j.key)).Commit(); err != nil {
		return false // written; the deletion is retried (the marker again is a no-op)
	}
	// Not succeeded: a newer record (the watch brings it) or a lost
	// ownership (the new leader applies it): either way not ours now.
	return true
}

// superseded tells whether j's record is gone, or was deleted by a
// direct marker (markers.go), since j was taken: nothing to apply. The
// caller holds the key's lock.
func (r *Relay) superseded(k string, j job) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.recs[k] != j.e || r.mu.floors[k] > j.rev
}

// Verify is KIP-890 part 1's check for a transactional batch the local
// resolver refused as not registered (verification across nodes): true when the coordinator
// registered the partition in pid's transaction at epoch and has not
// decided it yet, in which case the registration is applied locally
// first. The read is linearizable: a registration the coordinator
// acknowledged before the batch was sent is seen.
func (r *Relay) Verify(ctx context.Context, topic string, partition int32, pid int64, epoch int16) (bool, error) {
	key := r.key(topic, partition, pid)
	// Under the key's lock: a direct marker deleting the record is
	// either before the read (nothing found) or after the registration.
	defer r.locks.lock(r.rel(key))()
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	resp, err := r.cli.Get(ctx, key)
	if err != nil {
		return false, err
	}
	if len(resp.Kvs) == 0 {
		return false, nil
	}
	var rec record
	if err := json.Unmarshal(resp.Kvs[0].Value, &rec); err != nil {
		return false, err
	}
	if rec.Decision != "" || rec.Epoch != epoch {
		return false, nil
	}
	if err := r.parts.AddTxnPartition(topic, partition, pid, epoch); err != nil {
		return false, err
	}
	return true, nil
}

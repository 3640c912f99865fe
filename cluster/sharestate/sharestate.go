package sharestate

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kgateway/kgateway/cluster/owner"
	"github.com/kgateway/kgateway/offsets"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrRefused is a Put refused by its guard (fenced share-state writes): the node no longer serves
// the partition under that epoch, or the state changed since it was read.
var ErrRefused = errors.New("sharestate: write refused")

// opTimeout bounds one etcd operation; past it the outcome is unknown.
const opTimeout = 10 * time.Second

// maxTxnOps keeps a transaction under etcd's default max-txn-ops (128),
// with room for the guard's comparisons.
const maxTxnOps = 100

// configsTTL is how long a group's configs read from the coordinator's
// mirror are reused.
const configsTTL = time.Second

// Topics maps partitions to their pkeys and back (the resolver's topic
// ids, cluster/node PKey).
type Topics interface {
	PKey(topic string, partition int32) (string, bool)
	Partition(pkey string) (offsets.TopicPartition, bool)
}

// Options wire a Store.
type Options struct {
	Client *clientv3.Client
	Owners *owner.Manager
	Prefix string // the cluster prefix P
	// Serving is this node's ownership of a pkey while it serves it
	// (cluster/node Serving).
	Serving func(pkey string) (owner.Ownership, bool)
	Topics  Topics
	// CoordinatorKey is the pkey of the coordinator role (the share-state admin reset).
	CoordinatorKey string
}

// Store is the etcd store of share-partition states; it implements
// kafka/share States.
type Store struct {
	o  Options
	mu struct {
		sync.Mutex
		configs map[string]cachedConfigs
	}
}

type cachedConfigs struct {
	at  time.Time
	cfg map[string]string
}

// New returns a Store over o.
func New(o Options) *Store {
	s := &Store{o: o}
	s.mu.configs = map[string]cachedConfigs{}
	return s
}

func ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), opTimeout)
}

func (s *Store) groupDir(group string) string {
	return s.o.Prefix + "share/" + hex.EncodeToString([]byte(group)) + "/"
}

func (s *Store) key(group string, tp offsets.TopicPartition) (string, error) {
	pk, ok := s.o.Topics.PKey(tp.Topic, tp.Partition)
	if !ok {
		return "", fmt.Errorf("sharestate: unknown partition %s", tp)
	}
	return s.groupDir(group) + pk, nil
}

// Serving is the epoch this node serves tp under.
func (s *Store) Serving(tp offsets.TopicPartition) (int32, bool) {
	pk, ok := s.o.Topics.PKey(tp.Topic, tp.Partition)
	if !ok {
		return 0, false
	}
	o, ok := s.o.Serving(pk)
	return int32(o.Epoch), ok
}

// Load reads the state of tp in group and its mod revision (0: none).
func (s *Store) Load(group string, tp offsets.TopicPartition) (offsets.SharePartition, int64, error) {
	k, err := s.key(group, tp)
	if err != nil {
		return offsets.SharePartition{}, 0, err
	}
	c, cancel := ctx()
	defer cancel()
	resp, err := s.o.Client.Get(c, k)
	if err != nil {
		return offsets.SharePartition{}, 0, fmt.Errorf("sharestate: load: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return offsets.SharePartition{TopicPartition: tp}, 0, nil
	}
	sp, err := offsets.DecodeSharePartition(tp, resp.Kvs[0].Value)
	if err != nil {
		return offsets.SharePartition{}, 0, err
	}
	return sp, resp.Kvs[0].ModRevision, nil
}

// Put writes sp under the guard of fenced share-state writes and returns the key's new mod revision.
func (s *Store) Put(group string, sp offsets.SharePartition, epoch int32, version int64) (int64, error) {
	pk, ok := s.o.Topics.PKey(sp.Topic, sp.Partition)
	if !ok {
		return 0, fmt.Errorf("sharestate: unknown partition %s", sp.TopicPartition)
	}
	o, ok := s.o.Serving(pk)
	if !ok || int32(o.Epoch) != epoch {
		return 0, fmt.Errorf("%w: %s not served at epoch %d", ErrRefused, pk, epoch)
	}
	v, err := offsets.EncodeSharePartition(sp)
	if err != nil {
		return 0, err
	}
	k := s.groupDir(group) + pk
	guard := append(s.o.Owners.Guard(o), clientv3.Compare(clientv3.ModRevision(k), "=", version))
	c, cancel := ctx()
	defer cancel()
	resp, err := s.o.Client.Txn(c).If(guard...).Then(clientv3.OpPut(k, string(v))).Commit()
	switch {
	case err != nil:
		return 0, fmt.Errorf("sharestate: put: %w", err) // unknown: the caller reads again (fenced share-state writes)
	case !resp.Succeeded:
		return 0, fmt.Errorf("%w: %s of group %q", ErrRefused, pk, group)
	}
	return resp.Header.Revision, nil
}

// coordinatorGuard is the guard of the share-state admin reset: this node holds the coordinator role.
func (s *Store) coordinatorGuard() ([]clientv3.Cmp, error) {
	o, ok := s.o.Serving(s.o.CoordinatorKey)
	if !ok {
		return nil, fmt.Errorf("%w: not the coordinator", ErrRefused)
	}
	return s.o.Owners.Guard(o), nil
}

// Reset writes put and deletes del for the offsets admin (the share-state admin reset), in
// transactions of at most maxTxnOps operations.
func (s *Store) Reset(group string, put []offsets.SharePartition, del []offsets.TopicPartition) error {
	guard, err := s.coordinatorGuard()
	if err != nil {
		return err
	}
	var ops []clientv3.Op
	for _, sp := range put {
		k, err := s.key(group, sp.TopicPartition)
		if err != nil {
			return err
		}
		v, err := offsets.EncodeSharePartition(sp)
		if err != nil {
			return err
		}
		ops = append(ops, clientv3.OpPut(k, string(v)))
	}
	for _, tp := range del {
		k, err := s.key(group, tp)
		if err != nil {
			return err
		}
		ops = append(ops, clientv3.OpDelete(k))
	}
	for len(ops) > 0 {
		n := min(len(ops), maxTxnOps)
		if err := s.guarded(guard, ops[:n]...); err != nil {
			return err
		}
		ops = ops[n:]
	}
	return nil
}

func (s *Store) guarded(guard []clientv3.Cmp, ops ...clientv3.Op) error {
	c, cancel := ctx()
	defer cancel()
	resp, err := s.o.Client.Txn(c).If(guard...).Then(ops...).Commit()
	switch {
	case err != nil:
		return fmt.Errorf("sharestate: %w", err)
	case !resp.Succeeded:
		return fmt.Errorf("%w: the coordinator role moved", ErrRefused)
	}
	return nil
}

// List returns every state of group whose partition still exists.
func (s *Store) List(group string) ([]offsets.SharePartition, error) {
	dir := s.groupDir(group)
	c, cancel := ctx()
	defer cancel()
	resp, err := s.o.Client.Get(c, dir, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("sharestate: list: %w", err)
	}
	var out []offsets.SharePartition
	for _, kv := range resp.Kvs {
		tp, ok := s.o.Topics.Partition(strings.TrimPrefix(string(kv.Key), dir))
		if !ok {
			continue // a deleted topic's
		}
		sp, err := offsets.DecodeSharePartition(tp, kv.Value)
		if err != nil {
			return nil, err
		}
		out = append(out, sp)
	}
	return out, nil
}

// DeleteGroup removes every state of group (the share-state admin reset).
func (s *Store) DeleteGroup(group string) error {
	guard, err := s.coordinatorGuard()
	if err != nil {
		return err
	}
	return s.guarded(guard, clientv3.OpDelete(s.groupDir(group), clientv3.WithPrefix()))
}

// GroupConfigs reads group's dynamic configs from the coordinator's
// mirror (cluster/coord: P kv/<hex of the store key>), reused for
// configsTTL; none when they cannot be read.
func (s *Store) GroupConfigs(group string) map[string]string {
	now := time.Now()
	s.mu.Lock()
	cc, ok := s.mu.configs[group]
	s.mu.Unlock()
	if ok && now.Sub(cc.at) < configsTTL {
		return cc.cfg
	}
	c, cancel := ctx()
	defer cancel()
	var cfg map[string]string
	resp, err := s.o.Client.Get(c, s.o.Prefix+"kv/"+hex.EncodeToString(offsets.GroupConfigKey(group)))
	if err == nil && len(resp.Kvs) > 0 {
		cfg, _ = offsets.DecodeGroupConfigs(resp.Kvs[0].Value)
	}
	s.mu.Lock()
	if len(s.mu.configs) >= 10000 {
		clear(s.mu.configs) // bounded (the share bounds)
	}
	s.mu.configs[group] = cachedConfigs{at: now, cfg: cfg}
	s.mu.Unlock()
	return cfg
}

// DeletePartitions removes every group's state of the partitions pkeys, of
// a deleted topic (its id is never reused, so nothing reads them again):
// etcd keeps no state of a partition that is gone (the share-state admin reset). It reads keys
// only, and deletes in transactions of at most maxTxnOps.
func (s *Store) DeletePartitions(c context.Context, pkeys []string) error {
	gone := make(map[string]bool, len(pkeys))
	for _, pk := range pkeys {
		gone[pk] = true
	}
	dir := s.o.Prefix + "share/"
	resp, err := s.o.Client.Get(c, dir, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return fmt.Errorf("sharestate: list: %w", err)
	}
	var ops []clientv3.Op
	for _, kv := range resp.Kvs {
		k := string(kv.Key)
		if gone[k[strings.LastIndexByte(k, '/')+1:]] {
			ops = append(ops, clientv3.OpDelete(k))
		}
	}
	for len(ops) > 0 {
		n := min(len(ops), maxTxnOps)
		if _, err := s.o.Client.Txn(c).Then(ops[:n]...).Commit(); err != nil {
			return fmt.Errorf("sharestate: delete: %w", err)
		}
		ops = ops[n:]
	}
	return nil
}

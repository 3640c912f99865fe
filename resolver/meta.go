package resolver

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kgateway/kgateway/resolver/producerid"
	"github.com/kgateway/kgateway/resolver/txnstate"
	"github.com/kgateway/kgateway/storage"
)

// The resolver's durable state lives in the store's metadata keyspace,
// under the "resolver/" prefix:
//
//	resolver/next-log                 next LogID to allocate (uint64)
//	resolver/topic/<name>             topic binding (JSON topicRecord)
//	resolver/producer-state/<log>     producer-state checkpoint of a log
//	resolver/producer/<log><id>       one producer's state on a log (incremental producer checkpoints)
//	resolver/deleting/<log>           a log whose topic is being deleted
//	resolver/txn-open/<log><pid>      an open transaction on a log (the aborted-transaction index)
//	resolver/aborted/<log><offset>    an aborted transaction on a log (the aborted-transaction index)
//
// the cluster's identity (package identity: resolver/cluster-id and
// resolver/internal-topic/<name>), and the producer-id counter and bumped
// epochs (package producerid: resolver/next-pid and
// resolver/producer-epoch/<pid>).
//
// A topic's binding and the counter its logs came from are written in one
// atomic ApplyMeta; a deletion removes the binding and records the logs to
// delete in one ApplyMeta, so Open can finish an interrupted deletion.

var (
	keyNextLog       = []byte("resolver/next-log")
	prefixTopic      = []byte("resolver/topic/")
	prefixCheckpoint = []byte("resolver/producer-state/")
	prefixProducer   = []byte("resolver/producer/")
	prefixDeleting   = []byte("resolver/deleting/")
)

func topicKey(name string) []byte { return append(append([]byte{}, prefixTopic...), name...) }

func idKey(prefix []byte, id uint64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte{}, prefix...), id)
}

func putCounter(key []byte, v uint64) storage.MetaOp {
	return storage.MetaOp{Key: key, Value: binary.BigEndian.AppendUint64(nil, v)}
}

// getUint64 reads a counter, def when it was never written.
func (r *Resolver) getUint64(key []byte, def uint64) (uint64, error) {
	v, err := r.store.GetMeta(key)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return def, nil
	case err != nil:
		return 0, storageErr(fmt.Sprintf("read %s", key), err)
	case len(v) != 8:
		return 0, storageErr(fmt.Sprintf("read %s", key), fmt.Errorf("%d-byte counter", len(v)))
	}
	return binary.BigEndian.Uint64(v), nil
}

func (r *Resolver) loadCounters() error {
	nl, err := r.getUint64(keyNextLog, 1)
	if err != nil {
		return err
	}
	r.nextLog = storage.LogID(nl)
	r.pids, err = producerid.Open(r.store, r.cfg.ProducerIDs, storageErr)
	return err
}

// topicRecord is the durable form of a binding.
type topicRecord struct {
	Name    string            `json:"name"`
	ID      string            `json:"id"`
	Logs    []storage.LogID   `json:"logs"` // partition i is Logs[i]
	Configs map[string]string `json:"configs,omitempty"`
	Creator string            `json:"creator,omitempty"` // Topic.Creator
}

func encodeTopic(name string, id TopicID, logs []storage.LogID, configs map[string]string, creator string) storage.MetaOp {
	v, _ := json.Marshal(topicRecord{Name: name, ID: hex.EncodeToString(id[:]), Logs: logs, Configs: configs, Creator: creator})
	return storage.MetaOp{Key: topicKey(name), Value: v}
}

func decodeTopic(v []byte) (topicRecord, TopicID, error) {
	var rec topicRecord
	var id TopicID
	if err := json.Unmarshal(v, &rec); err != nil {
		return rec, id, err
	}
	b, err := hex.DecodeString(rec.ID)
	if err != nil || len(b) != len(id) {
		return rec, id, fmt.Errorf("bad topic id %q", rec.ID)
	}
	copy(id[:], b)
	if len(rec.Logs) == 0 {
		return rec, id, errors.New("no partitions")
	}
	return rec, id, nil
}

// loadTopics opens every bound topic.
func (r *Resolver) loadTopics() error {
	var recs [][]byte
	err := r.store.ScanMeta(prefixTopic, func(_, v []byte) error {
		recs = append(recs, append([]byte{}, v...))
		return nil
	})
	if err != nil {
		return storageErr("scan topics", err)
	}
	for _, v := range recs {
		rec, id, err := decodeTopic(v)
		if err != nil {
			return storageErr("decode topic", err)
		}
		t, err := r.openTopic(rec.Name, id, rec.Logs, rec.Configs)
		if err != nil {
			return err
		}
		t.creator = rec.Creator
		r.mu.Lock()
		r.mu.publishLocked(t)
		r.mu.Unlock()
	}
	return nil
}

// finishDeletes deletes the logs of topics whose deletion was interrupted.
func (r *Resolver) finishDeletes() error {
	var logs []storage.LogID
	err := r.store.ScanMeta(prefixDeleting, func(k, _ []byte) error {
		if len(k) == len(prefixDeleting)+8 {
			logs = append(logs, storage.LogID(binary.BigEndian.Uint64(k[len(prefixDeleting):])))
		}
		return nil
	})
	if err != nil {
		return storageErr("scan deletions", err)
	}
	return r.deleteLogs(logs)
}

// deleteLogs removes logs and then their deletion markers and checkpoints.
func (r *Resolver) deleteLogs(logs []storage.LogID) error {
	if len(logs) == 0 {
		return nil
	}
	var ops []storage.MetaOp
	for _, l := range logs {
		if err := r.store.DeleteLog(l); err != nil && !errors.Is(err, storage.ErrNoLog) {
			return storageErr(fmt.Sprintf("delete %s", l), err)
		}
		ops = append(ops,
			storage.MetaOp{Key: idKey(prefixDeleting, uint64(l)), Delete: true},
			storage.MetaOp{Key: idKey(prefixCheckpoint, uint64(l)), Delete: true})
		keys, err := r.states.producerKeys(l)
		if err != nil {
			return storageErr(fmt.Sprintf("list producers of %s", l), err)
		}
		ops = append(ops, keys...)
		if keys, err = txnstate.Keys(r.store, l); err != nil {
			return storageErr(fmt.Sprintf("list transactions of %s", l), err)
		}
		ops = append(ops, keys...)
	}
	if err := r.store.ApplyMeta(ops...); err != nil {
		return storageErr("finish deletion", err)
	}
	return nil
}

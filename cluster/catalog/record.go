package catalog

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kgateway/kgateway/resolver"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// record is a topic's value at <prefix>topics/<name> (the name is the
// key's last part).
type record struct {
	ID         string            `json:"id"` // 32 hex digits
	Partitions int32             `json:"partitions"`
	Configs    map[string]string `json:"configs,omitempty"`
	// Creator is the principal whose request created the topic
	// (resolver.Topic.Creator); a change of the record keeps it.
	Creator string `json:"creator,omitempty"`
}

func newRecord(t resolver.Topic) record {
	return record{ID: hex.EncodeToString(t.ID[:]), Partitions: t.Partitions, Configs: t.Configs, Creator: t.Creator}
}

func (r record) encode() string {
	b, _ := json.Marshal(r)
	return string(b)
}

// topicID parses the record's id.
func (r record) topicID() (resolver.TopicID, error) {
	var id resolver.TopicID
	b, err := hex.DecodeString(r.ID)
	if err != nil || len(b) != len(id) {
		return id, fmt.Errorf("catalog: bad topic id %q", r.ID)
	}
	copy(id[:], b)
	return id, nil
}

func decodeRecord(v []byte) (record, resolver.TopicID, error) {
	var r record
	if err := json.Unmarshal(v, &r); err != nil {
		return r, resolver.TopicID{}, fmt.Errorf("catalog: bad record: %w", err)
	}
	id, err := r.topicID()
	return r, id, err
}

// TopicRecord is a topic as the catalog holds it, for readers that do
// not apply it (kgateway cluster status).
type TopicRecord struct {
	Name       string
	ID         resolver.TopicID
	Partitions int32
}

// ReadTopics reads every topic record under prefix, in name order.
func ReadTopics(ctx context.Context, cli *clientv3.Client, prefix string) ([]TopicRecord, error) {
	dir := prefix + "topics/"
	resp, err := cli.Get(ctx, dir, clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return nil, fmt.Errorf("catalog: read topics: %w", err)
	}
	out := make([]TopicRecord, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		r, id, err := decodeRecord(kv.Value)
		if err != nil {
			return nil, fmt.Errorf("catalog: %s: %w", kv.Key, err)
		}
		out = append(out, TopicRecord{Name: strings.TrimPrefix(string(kv.Key), dir), ID: id, Partitions: r.Partitions})
	}
	return out, nil
}

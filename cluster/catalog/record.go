package catalog

import (
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/kgateway/kgateway/resolver"
)

// record is a topic's value at <prefix>topics/<name> (the name is the
// key's last part).
type record struct {
	ID         string            `json:"id"` // 32 hex digits
	Partitions int32             `json:"partitions"`
	Configs    map[string]string `json:"configs,omitempty"`
}

func newRecord(id resolver.TopicID, partitions int32, configs map[string]string) record {
	return record{ID: hex.EncodeToString(id[:]), Partitions: partitions, Configs: configs}
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

package identity

import (
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/kgateway/kgateway/storage"
)

var (
	keyClusterID          = []byte("resolver/cluster-id")
	prefixInternalTopicID = []byte("resolver/internal-topic/")
)

// Identity is a data directory's cluster id and its internal topics' ids.
type Identity struct {
	ClusterID string
	TopicIDs  map[string][16]byte // by internal topic name
}

// Load reads the cluster id and the ids of the internal topics named,
// making (newID: a random version 4 UUID) and durably storing, in one
// synced write, whichever is missing. wrap reports a storage fault.
func Load(store *storage.Store, internal []string, newID func() [16]byte, wrap func(op string, err error) error) (Identity, error) {
	var ops []storage.MetaOp
	var out Identity
	v, err := store.GetMeta(keyClusterID)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		out.ClusterID = clusterID(newID)
		ops = append(ops, storage.MetaOp{Key: keyClusterID, Value: []byte(out.ClusterID)})
	case err != nil:
		return Identity{}, wrap("read cluster id", err)
	case len(v) == 0:
		return Identity{}, wrap("read cluster id", errors.New("empty cluster id"))
	default:
		out.ClusterID = string(v)
	}
	out.TopicIDs = make(map[string][16]byte, len(internal))
	for _, name := range internal {
		key := append(append([]byte{}, prefixInternalTopicID...), name...)
		v, err := store.GetMeta(key)
		var id [16]byte
		switch {
		case errors.Is(err, storage.ErrNotFound):
			id = newID()
			ops = append(ops, storage.MetaOp{Key: key, Value: append([]byte{}, id[:]...)})
		case err != nil:
			return Identity{}, wrap("read internal topic id", err)
		case len(v) != len(id):
			return Identity{}, wrap("read internal topic id", fmt.Errorf("%s: %d-byte id", name, len(v)))
		default:
			copy(id[:], v)
		}
		out.TopicIDs[name] = id
	}
	if len(ops) == 0 {
		return out, nil
	}
	if err := store.ApplyMeta(ops...); err != nil {
		return Identity{}, wrap("persist cluster identity", err)
	}
	return out, nil
}

// clusterID returns a random id in Kafka's form: a version 4 UUID as 22
// characters of unpadded base64url. Like Kafka's Uuid.randomUuid it
// never starts with '-', which a command line would take for a flag.
func clusterID(newID func() [16]byte) string {
	for {
		id := newID()
		s := base64.RawURLEncoding.EncodeToString(id[:])
		if s[0] != '-' {
			return s
		}
	}
}

package resolver

// Read-only inspection: the live partitions for metrics, and the
// bindings as stored, over a storage.ReadOnly view (`kgateway inspect`,
// package explain's read plans).

import (
	"fmt"
	"sort"

	"github.com/kgateway/kgateway/storage"
)

// PartitionInfo is one live partition's binding and storage bounds, for
// metrics (computed at scrape time, never on the produce or fetch path).
type PartitionInfo struct {
	Topic     string
	Partition int32
	Log       storage.LogID
	Info      storage.LogInfo // Start = log start, End = high watermark
}

// PartitionInfos returns every partition of every topic, sorted by topic
// and partition. A partition whose log cannot be read (being deleted) is
// left out.
func (r *Resolver) PartitionInfos() []PartitionInfo {
	var out []PartitionInfo
	for _, t := range r.Topics() {
		for i := range t.Partitions {
			p, err := r.mu.partition(t.Name, i)
			if err != nil {
				continue
			}
			info, err := r.store.Info(p.log)
			if err != nil {
				continue
			}
			out = append(out, PartitionInfo{Topic: t.Name, Partition: i, Log: p.log, Info: info})
		}
	}
	return out
}

// Binding is one stored topic binding: partition i is Logs[i].
type Binding struct {
	Topic
	Logs []storage.LogID
}

// ReadBindings lists the stored topic bindings, sorted by name.
func ReadBindings(ro *storage.ReadOnly) ([]Binding, error) {
	var out []Binding
	err := ro.ScanMeta(prefixTopic, func(_, v []byte) error {
		rec, id, err := decodeTopic(v)
		if err != nil {
			return fmt.Errorf("%w: decode topic: %v", ErrStorage, err)
		}
		out = append(out, Binding{
			Topic: Topic{Name: rec.Name, ID: id, Partitions: int32(len(rec.Logs)), Configs: rec.Configs},
			Logs:  rec.Logs,
		})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

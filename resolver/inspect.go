package resolver

import "github.com/kgateway/kgateway/storage"

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

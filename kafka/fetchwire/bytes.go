package fetchwire

import "github.com/twmb/franz-go/pkg/kmsg"

// RecordBytes is the record batch bytes per topic of a fetch response
// whose record batches may be markers of w (nil: none), markers resolved
// (for observers and the fetch quota).
func RecordBytes(fr *kmsg.FetchResponse, w *Batches) map[string]int {
	perTopic := make(map[string]int)
	for i := range fr.Topics {
		t := &fr.Topics[i]
		for j := range t.Partitions {
			rb := t.Partitions[j].RecordBatches
			n := len(rb)
			if _, size, ok := w.BatchesOf(rb); ok {
				n = size
			}
			perTopic[t.Topic] += n
		}
	}
	return perTopic
}

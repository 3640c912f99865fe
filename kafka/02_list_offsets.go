package kafka

// ListOffsets (key 2), versions 1–11: an offset per partition by
// timestamp, or latest, earliest, max timestamp, earliest local, latest
// tiered, earliest pending upload, under either isolation level
// (kafka/logoffsets).

import (
	"github.com/kgateway/kgateway/kafka/logoffsets"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The ListOffsets timestamps internal topics answer (internal_topics.go).
const (
	listLatest        = logoffsets.Latest
	listEarliest      = logoffsets.Earliest
	listEarliestLocal = logoffsets.EarliestLocal
)

func handleListOffsets(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	return logoffsets.List(offsetLog{s}, req.(*kmsg.ListOffsetsRequest)), nil
}

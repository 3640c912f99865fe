package share

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A ShareFetch partition answered without records (only an error or an
// acknowledgement result) carries empty records on the wire, not null:
// Records is not nullable in Kafka's ShareFetchResponse, and the Java
// client fails the whole response on a null.
func TestAnswerRecordsNeverNull(t *testing.T) {
	sp := sessPart{id: [16]byte{1}, partition: 0}
	topics := (&Coordinator{}).answer(map[sessPart]*partResult{sp: {acked: true}}, []sessPart{sp}, nil, nil)
	for v := int16(0); v <= 2; v++ {
		resp := kmsg.NewShareFetchResponse()
		resp.Version = v
		resp.Topics = topics
		wire := resp.AppendTo(nil)
		back := kmsg.NewShareFetchResponse()
		back.Version = v
		if err := back.ReadFrom(wire); err != nil {
			t.Fatalf("v%d: decode: %v", v, err)
		}
		if len(back.Topics) != 1 || len(back.Topics[0].Partitions) != 1 {
			t.Fatalf("v%d: topics %+v", v, back.Topics)
		}
		if back.Topics[0].Partitions[0].Records == nil {
			t.Fatalf("v%d: records encoded as null", v)
		}
	}
}

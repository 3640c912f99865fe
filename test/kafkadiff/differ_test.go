package kafkadiff

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// These tests run in every `go test` (no broker): the normaliser and the
// differ the differential run relies on.

// Keyed arrays compare by key whatever their order; node ids, hosts,
// ports, topic ids and cluster ids become placeholders; a zero topic id
// stays distinct from a set one; error codes carry their names.
func TestFlattenNormalises(t *testing.T) {
	mk := func(order []string, node int32, host string, id byte) *kmsg.MetadataResponse {
		r := kmsg.NewPtrMetadataResponse()
		r.ClusterID = kmsg.StringPtr("cluster-" + host)
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host, b.Port = node, host, 9000+node
		r.Brokers = append(r.Brokers, b)
		for _, name := range order {
			tp := kmsg.NewMetadataResponseTopic()
			tp.Topic, tp.TopicID = kmsg.StringPtr(name), [16]byte{id}
			p := kmsg.NewMetadataResponseTopicPartition()
			p.Leader, p.Replicas, p.ISR = node, []int32{node}, []int32{node}
			tp.Partitions = append(tp.Partitions, p)
			r.Topics = append(r.Topics, tp)
		}
		r.ThrottleMillis = int32(node)
		return r
	}
	a := Flatten(mk([]string{"x", "y"}, 0, "127.0.0.1", 1))
	b := Flatten(mk([]string{"y", "x"}, 1, "localhost", 9))
	if d := Compare("c", "s", a, b); len(d) != 0 {
		t.Fatalf("equal after normalising, got %v", d)
	}
	if got := a["Topics[Topic=x].TopicID"]; got != "<uuid>" {
		t.Errorf("topic id %q", got)
	}
	zero := Flatten(mk([]string{"x", "y"}, 0, "h", 0))
	if d := Compare("c", "s", a, zero); len(d) != 2 || !strings.Contains(d[0].String(), "<zero-uuid>") {
		t.Errorf("set against zero topic ids: %v", d)
	}
	e := kmsg.NewPtrProduceResponse()
	tp := kmsg.NewProduceResponseTopic()
	tp.Topic = "t"
	p := kmsg.NewProduceResponseTopicPartition()
	p.ErrorCode = 3
	tp.Partitions = append(tp.Partitions, p)
	e.Topics = append(e.Topics, tp)
	if got := Flatten(e)["Topics[Topic=t].Partitions[Partition=0].ErrorCode"]; got != "3 UNKNOWN_TOPIC_OR_PARTITION" {
		t.Errorf("error code %q", got)
	}
}

// A keyed element one side lacks is one difference at its root; a
// differing leaf is one difference at its path.
func TestCompareCollapsesAbsentElements(t *testing.T) {
	kg := map[string]string{"A[k=1].X": "1", "A[k=1].Y": "2", "A[k=2].X": "1", "B": "x"}
	ak := map[string]string{"A[k=1].X": "1", "A[k=1].Y": "3", "B": "x", "C[0].Z": "z"}
	d := Compare("c", "01 s", kg, ak)
	want := []string{
		"c | 01 s/A[k=1].Y | kgateway=2 kafka=3",
		"c | 01 s/A[k=2] | kgateway=(1 fields) kafka=(absent)",
		"c | 01 s/C | kgateway=(absent) kafka=(1 fields)",
	}
	if len(d) != len(want) {
		t.Fatalf("got %v", d)
	}
	for i := range want {
		if d[i].String() != want[i] {
			t.Errorf("difference %d: %q, want %q", i, d[i], want[i])
		}
	}
}

// Fetched record bytes are decoded into batches and records, a trailing
// partial batch kept as such.
func TestFlattenDecodesRecords(t *testing.T) {
	raw := Batch{Records: Recs("v", 2)}.Bytes()
	raw = append(raw, Batch{Records: Recs("w", 1)}.Bytes()[:30]...)
	bs := decodeBatches(raw)
	if len(bs) != 2 || len(bs[0].Records) != 2 || bs[0].Records[1].Value != "v-1" || !bs[1].Partial {
		t.Fatalf("decoded %+v", bs)
	}
	z := decodeBatches(Batch{Records: Recs("z", 3), Zstd: true}.Bytes())
	if len(z) != 1 || len(z[0].Records) != 3 || z[0].Records[2].Value != "z-2" {
		t.Fatalf("zstd decoded %+v", z)
	}
}

// An accepted list names case and path globs with a reason; * spans dots
// and brackets, and an entry without a reason is refused.
func TestAcceptedList(t *testing.T) {
	list, err := ParseAccepted(strings.NewReader("# c\n\nfetch-* | *Partitions[*].HighWatermark | why\n* | *ErrorMessage | free text\n"))
	if err != nil || len(list) != 2 {
		t.Fatalf("parse: %v %v", list, err)
	}
	d := Difference{Case: "fetch-kip74", Path: "03 f/Topics[Topic=t].Partitions[Partition=0].HighWatermark"}
	if a := Match(list, d); a == nil || a.Line != 3 {
		t.Errorf("match %+v", a)
	}
	if a := Match(list, Difference{Case: "other", Path: "01 x/Topics[Topic=t].HighWatermark"}); a != nil {
		t.Errorf("matched %+v", a)
	}
	if list[0].Sometimes {
		t.Error("an entry without \"sometimes:\" marked as timing-dependent")
	}
	if l, err := ParseAccepted(strings.NewReader("a | b | sometimes: Kafka's timing\n")); err != nil || !l[0].Sometimes {
		t.Errorf("a \"sometimes:\" entry: %v %v", l, err)
	}
	if _, err := ParseAccepted(strings.NewReader("a | b |  \n")); err == nil {
		t.Error("an entry without a reason was accepted")
	}
}

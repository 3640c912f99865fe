package test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
)

// A librdkafka consumer whose offset fell below the log start (after
// DeleteRecords, as after retention) gets OFFSET_OUT_OF_RANGE and resets
// by auto.offset.reset. That needs the error partition to carry an empty
// record set, as Kafka's does: librdkafka refuses a whole response with a
// null one ("invalid MessageSetSize -1"), never sees the error and spins.
func TestKcatResetsBelowLogStart(t *testing.T) {
	g := newGateway(t)
	g.createTopic("kc-reset", 1)
	var in strings.Builder
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&in, "v%d\n", i)
	}
	kcat(t, g.addr, in.String(), "-P", "-t", "kc-reset", "-p", "0")
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "kc-reset", Partition: 0, At: 6})
	resp, err := g.admin().DeleteRecords(testCtx(t), offs)
	if err != nil || resp.Error() != nil {
		t.Fatalf("delete records: %v %v", err, resp.Error())
	}
	out := kcat(t, g.addr, "", "-C", "-t", "kc-reset", "-p", "0", "-o", "2", "-c", "4",
		"-X", "auto.offset.reset=earliest", "-f", "%o %s\n")
	if want := "6 v6\n7 v7\n8 v8\n9 v9\n"; out != want {
		t.Fatalf("kcat from below the log start printed %q, want %q", out, want)
	}
}

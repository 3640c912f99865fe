package ledger

import (
	"testing"

	"github.com/kgateway/kgateway/storage"
)

// V1, V2: the view is chosen before any entry. TopicCompacted reads the
// view log below its end (each entry spanning from the end of the one
// before it, so an offset the view dropped reads from the next entry)
// and the log's tail from there; Committed, or no view, reads the log.
func TestReadViewCompacted(t *testing.T) {
	e := newEnv(t, Config{})
	build3x2(e) // entries at 0, 2, ..., 16; End 18
	const viewLog LogID = 1000
	if err := e.store.CreateLog(viewLog); err != nil {
		t.Fatal(err)
	}
	for _, span := range []int{6, 6} { // [0, 6), [6, 12)
		if _, err := e.store.Append(viewLog, span, []byte("view"), storage.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e.m.SetCompactedView(viewLog, true)
	for _, tc := range []struct {
		v    View
		from Offset
		want string
		end  Offset // ViewEnd
	}{
		{TopicCompacted, 0, "0 6 ", 12},
		{TopicCompacted, 7, "6 ", 12},         // in a dropped range: the entry holding it
		{TopicCompacted, 12, "12 14 16 ", 12}, // the tail, from the log
		{TopicCompacted, 18, "", 12},
		{Committed, 0, "0 2 4 6 8 10 12 14 16 ", 0},
	} {
		sn, es, err := e.m.ReadEntries(tc.v, tc.from, NoLimit, 100, 1<<20, nil)
		if err != nil || offsets(es) != tc.want || sn != (Snapshot{Start: 0, End: 18, ViewEnd: tc.end}) {
			t.Fatalf("ReadView(%d, %d) = %+v %q %v, want %q with ViewEnd %d", tc.v, tc.from, sn, offsets(es), err, tc.want, tc.end)
		}
	}
	if sn, err := e.m.SnapshotView(TopicCompacted); err != nil || sn.ViewEnd != 12 || sn.End != 18 {
		t.Fatalf("SnapshotView = %+v %v", sn, err)
	}
	// Removed: the log again, also when the view log is gone first.
	if err := e.store.DeleteLog(viewLog); err != nil {
		t.Fatal(err)
	}
	if _, es, err := e.m.ReadEntries(TopicCompacted, 0, NoLimit, 100, 1<<20, nil); err != nil || offsets(es) != "0 2 4 6 8 10 12 14 16 " {
		t.Fatalf("view log deleted: %q %v", offsets(es), err)
	}
	e.m.SetCompactedView(0, false)
	if sn, es, err := e.m.ReadEntries(TopicCompacted, 0, NoLimit, 100, 1<<20, nil); err != nil || sn.ViewEnd != 0 || offsets(es) != "0 2 4 6 8 10 12 14 16 " {
		t.Fatalf("no view: %+v %q %v", sn, offsets(es), err)
	}
}

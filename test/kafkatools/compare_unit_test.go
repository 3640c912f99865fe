package kafkatools

import (
	"slices"
	"testing"
)

// TestNormalise: addresses, times, ids and column padding are masked;
// stack frames are dropped; what the tool says stays.
func TestNormalise(t *testing.T) {
	tg := target{name: "kgateway", addr: "127.0.0.1:4242"}
	r := result{exit: 1,
		stdout: "GROUP    COORDINATOR (ID)\nreaders  127.0.0.1:4242  (1)\n" +
			"Topic: orders\tTopicId: Ph_Mw42EQkGbxTvID-WVeA\tPartitionCount: 3\n" +
			"readers reader-1-b5841608-2ca6-4e5d-9eb7-8a6b0319d8fb /127.0.0.1\n" +
			"1 \thanging-tx \t2\t0 Ongoing 120000 \t1796519381431   \t19733 payments-0\n" +
			"workers K5yoF13QT8CeG7rnpQBhHQ /127.0.0.1 console-share-consumer 2\n" +
			"workers KRQixbRzSPGKXzaMKVEzUA /127.0.0.1 console-share-consumer 2\n",
		stderr: "[2026-12-06 01:04:44,156] ERROR boom (x)\n\tat a.b.C.d(C.java:1)\n"}
	got := normalise("txn describe", tg, r)
	want := []string{"exit 1", "GROUP COORDINATOR (ID)", "readers {broker} (1)",
		"Topic: orders TopicId: {topic-id} PartitionCount: 3",
		"readers reader-1-{uuid} /127.0.0.1",
		"1 hanging-tx 2 0 Ongoing 120000 {ts} {duration} payments-0",
		"workers {member-id} /127.0.0.1 console-share-consumer 2",
		"workers {member-id} /127.0.0.1 console-share-consumer 2",
		"stderr: [{time}] ERROR boom (x)"}
	if !slices.Equal(got, want) {
		t.Fatalf("normalise:\n got %q\nwant %q", got, want)
	}
	perf := normalise("producer perf", tg, result{stdout: "20000 records sent, 8186.655751 records/sec (0.78 MB/sec)\n"})
	if want := []string{"exit 0", "N records sent, N records/sec (N MB/sec)"}; !slices.Equal(perf, want) {
		t.Fatalf("perf: got %q, want %q", perf, want)
	}
}

// TestTriage: a difference no entry accepts is reported, an entry that
// accepts nothing is stale, and lines equal on both sides, in any order,
// are no difference.
func TestTriage(t *testing.T) {
	diffs := diffLines("s", [2]string{"kafka", "kgateway"},
		[]string{"exit 0", "a", "b", "b"}, []string{"b", "exit 0", "c", "a"})
	if len(diffs) != 2 || diffs[0] != (difference{"s", "kafka", "b"}) || diffs[1] != (difference{"s", "kgateway", "c"}) {
		t.Fatalf("diffLines: %v", diffs)
	}
	list := []accepted{{Step: "s", Side: "kgateway", Line: "c", Reason: "r"}, {Step: "s", Side: "kafka", Line: "zz", Reason: "r"}}
	un, stale := triage(diffs, list)
	if len(un) != 1 || un[0].line != "b" || len(stale) != 1 || stale[0].Line != "zz" {
		t.Fatalf("triage: unaccepted %v, stale %v", un, stale)
	}
	// The pattern must match the whole line.
	if un, _ := triage([]difference{{"s", "kgateway", "cc"}}, list[:1]); len(un) != 1 {
		t.Fatalf("a partial match accepted %v", un)
	}
}

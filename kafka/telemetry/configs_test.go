package telemetry

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Every selector is matched against the whole value (Java's
// Matcher.matches), all of a subscription's selectors must match, and a
// subscription without selectors matches every client.
func TestSelectorMatching(t *testing.T) {
	c := Client{InstanceID: "AAAAAAAAAAAAAAAAAAAAAQ", ClientID: "orders-producer", SoftwareName: "apache-kafka-java",
		SoftwareVersion: "4.4.0", SourceAddress: "127.0.0.1", SourcePort: "53412"}
	for _, tc := range []struct {
		match string
		want  bool
	}{
		{"", true},
		{"client_id=orders-producer", true},
		{"client_id=orders", false}, // whole value, not a prefix
		{"client_id=orders.*", true},
		{"client_id=.*producer", true},
		{"client_software_name=apache-kafka-java", true},
		{"client_software_name=librdkafka", false},
		{"client_software_version=4\\.4\\..*", true},
		{"client_software_version=3\\..*", false},
		{"client_source_address=127\\.0\\.0\\.1", true},
		{"client_source_address=10\\..*", false},
		{"client_source_port=534\\d+", true},
		{"client_source_port=1", false},
		{"client_instance_id=AAAAAAAAAAAAAAAAAAAAAQ", true},
		{"client_instance_id=other", false},
		{"client_id=orders.*,client_software_name=apache-kafka-java", true},
		{"client_id=orders.*,client_software_name=librdkafka", false}, // all must match
		{" client_id = orders-producer ", true},                       // trimmed
		{"client_id=nope,client_id=orders.*", true},                   // the last one of a name counts
	} {
		sub, _, err := Parse("s", map[string]string{ConfigMatch: tc.match})
		if err != nil {
			t.Fatalf("match %q: %v", tc.match, err)
		}
		if got := sub.Matches(c); got != tc.want {
			t.Errorf("match %q: %v, want %v", tc.match, got, tc.want)
		}
	}
}

// Parse refuses what Kafka's ClientMetricsConfigs.validate refuses, with
// Kafka's error codes, and normalises what it accepts.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		configs map[string]string
		want    *kerr.Error
	}{
		{"", map[string]string{ConfigMetrics: "a"}, kerr.InvalidRequest},
		{"s", map[string]string{"unknown": "1"}, kerr.InvalidRequest},
		{"s", map[string]string{ConfigInterval: "99"}, kerr.InvalidRequest},
		{"s", map[string]string{ConfigInterval: "3600001"}, kerr.InvalidRequest},
		{"s", map[string]string{ConfigInterval: "abc"}, kerr.InvalidConfig},
		{"s", map[string]string{ConfigMetrics: "a,b,a"}, nil}, // Kafka 4.4 takes duplicates
		{"s", map[string]string{ConfigMatch: "client_id"}, kerr.InvalidConfig},
		{"s", map[string]string{ConfigMatch: "client_id="}, kerr.InvalidConfig},
		{"s", map[string]string{ConfigMatch: "client_id=a=b"}, kerr.InvalidConfig},
		{"s", map[string]string{ConfigMatch: "principal=a"}, kerr.InvalidConfig},
		{"s", map[string]string{ConfigMatch: "client_id=("}, kerr.InvalidConfig},
		{"s", map[string]string{ConfigInterval: "100", ConfigMetrics: "a", ConfigMatch: "client_id=x"}, nil},
		{"s", map[string]string{ConfigInterval: "3600000"}, nil},
		{"s", map[string]string{}, nil},
	} {
		_, _, err := Parse(tc.name, tc.configs)
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("Parse(%q, %v) = %v, want %v", tc.name, tc.configs, err, tc.want)
		}
	}
	_, norm, err := Parse("s", map[string]string{ConfigMetrics: " a , b.c,d ", ConfigInterval: " 1000 "})
	if err != nil || norm[ConfigMetrics] != "a,b.c,d" || norm[ConfigInterval] != "1000" {
		t.Errorf("normalised %v, %v", norm, err)
	}
}

// The subscriptions survive a reopen of the store, and deleting every
// config removes the resource.
func TestStoreDurable(t *testing.T) {
	dir := t.TempDir()
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	set := func(m map[string]string) func(map[string]string) (map[string]string, error) {
		return func(map[string]string) (map[string]string, error) { return m, nil }
	}
	if err := st.Alter("a", set(map[string]string{ConfigMetrics: "x", ConfigInterval: "500"}), false); err != nil {
		t.Fatal(err)
	}
	if err := st.Alter("b", set(map[string]string{ConfigMetrics: "y"}), true); err != nil { // validate only
		t.Fatal(err)
	}
	if err := st.Alter("c", set(map[string]string{ConfigInterval: "1"}), false); !errors.Is(err, kerr.InvalidRequest) {
		t.Fatalf("invalid interval: %v", err)
	}
	st2, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := st2.Names(); len(got) != 1 || got[0] != "a" {
		t.Fatalf("names after reopen %v, want [a]", got)
	}
	subs, _ := st2.Snapshot()
	if subs["a"].IntervalMs != 500 || len(subs["a"].Metrics) != 1 {
		t.Fatalf("subscription a after reopen: %+v", subs["a"])
	}
	if err := st2.Alter("a", func(cur map[string]string) (map[string]string, error) {
		return ApplyOps(cur, []ConfigOp{{Name: ConfigMetrics, Op: OpDelete}, {Name: ConfigInterval, Op: OpDelete}})
	}, false); err != nil {
		t.Fatal(err)
	}
	st3, _ := OpenStore(dir)
	if got := st3.Names(); len(got) != 0 {
		t.Fatalf("names after deleting every config %v", got)
	}
}

// APPEND and SUBTRACT are refused on every config, as Kafka 4.4 does.
func TestApplyOps(t *testing.T) {
	out, err := ApplyOps(map[string]string{ConfigMetrics: "a,b"}, []ConfigOp{
		{Name: ConfigInterval, Op: OpSet, Value: "1000"},
		{Name: ConfigMetrics, Op: OpDelete},
	})
	if err != nil || out[ConfigInterval] != "1000" || len(out) != 1 {
		t.Fatalf("set/delete: %v, %v", out, err)
	}
	for _, op := range []int8{OpAppend, OpSubtract} {
		if _, err := ApplyOps(nil, []ConfigOp{{Name: ConfigMetrics, Op: op, Value: "c"}}); !errors.Is(err, kerr.InvalidConfig) {
			t.Fatalf("op %d on metrics: %v", op, err)
		}
	}
}

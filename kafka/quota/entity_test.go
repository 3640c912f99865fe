package quota

import (
	"os"
	"path/filepath"
	"testing"
)

func s(v string) *string { return &v }

func alt(ops []Op, cs ...Component) Alteration { return Alteration{Entity: cs, Ops: ops} }

func set(k string, v float64) Op { return Op{Key: k, Value: v} }

func TestAlterValidation(t *testing.T) {
	user := func(n *string) Component { return Component{TypeUser, n} }
	client := func(n *string) Component { return Component{TypeClientID, n} }
	ip := func(n *string) Component { return Component{TypeIP, n} }
	cases := []struct {
		name string
		a    Alteration
		msg  string // "" accepted
	}{
		{"user", alt([]Op{set(ProducerByteRate, 1024)}, user(s("alice"))), ""},
		{"default user", alt([]Op{set(ConsumerByteRate, 10)}, user(nil)), ""},
		{"user and default client", alt([]Op{set(RequestPercentage, 12.5)}, user(s("a")), client(nil)), ""},
		{"ip", alt([]Op{set(ConnectionCreationRate, 5)}, ip(s("10.0.0.1"))), ""},
		{"empty entity", alt([]Op{set(ProducerByteRate, 1)}), "Invalid empty client quota entity"},
		{"unknown type", alt([]Op{set(ProducerByteRate, 1)}, Component{"group", s("g")}), "Unhandled client quota entity type: group"},
		{"empty name", alt([]Op{set(ProducerByteRate, 1)}, user(s(""))), "Empty user not supported"},
		{"ip with user", alt([]Op{set(ProducerByteRate, 1)}, user(s("a")), ip(s("1.2.3.4"))), "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"},
		{"bad ip", alt([]Op{set(ConnectionCreationRate, 1)}, ip(s("not an ip"))), "not an ip is not a valid IP or resolvable host."},
		{"ip key on user", alt([]Op{set(ConnectionCreationRate, 1)}, user(s("a"))), "Invalid configuration key connection_creation_rate"},
		{"unknown key", alt([]Op{set("nope", 1)}, user(s("a"))), "Invalid configuration key nope"},
		{"zero", alt([]Op{set(ProducerByteRate, 0)}, user(s("a"))), "Quota producer_byte_rate must be greater than 0"},
		{"fraction of a long", alt([]Op{set(ProducerByteRate, 1.5)}, user(s("a"))), "producer_byte_rate cannot be a fractional value."},
		{"too large", alt([]Op{set(ProducerByteRate, 1e300)}, user(s("a"))), "Proposed value for producer_byte_rate is too large for a LONG."},
		{"too large int", alt([]Op{set(ConnectionCreationRate, 1e10)}, ip(nil)), "Proposed value for connection_creation_rate is too large for an INT."},
		{"duplicate key", alt([]Op{set(ProducerByteRate, 1), set(ProducerByteRate, 2)}, user(s("a"))), "Ignoring duplicate entity ClientQuotaEntity(entries={user=a})"},
		{"remove of an unknown key", alt([]Op{{Key: "nope", Remove: true}}, user(s("a"))), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			next, res := Quotas{}.apply([]Alteration{c.a})
			if len(res) != 1 {
				t.Fatalf("%d results", len(res))
			}
			got := ""
			if res[0].Err != nil {
				got = res[0].Err.Msg
				if res[0].Err.Code != codeInvalidRequest {
					t.Fatalf("code %d", res[0].Err.Code)
				}
				if len(next) != 0 {
					t.Fatalf("refused alteration applied: %v", next)
				}
			}
			if got != c.msg {
				t.Fatalf("got %q, want %q", got, c.msg)
			}
		})
	}
}

func TestAlterSameEntityTwiceKeepsTheFirst(t *testing.T) {
	a := alt([]Op{set(ProducerByteRate, 5)}, Component{TypeUser, s("x")})
	b := alt([]Op{set(ConsumerByteRate, 9)}, Component{TypeUser, s("x")})
	next, res := Quotas{}.apply([]Alteration{a, b})
	if len(res) != 1 || res[0].Err == nil {
		t.Fatalf("results %+v", res)
	}
	want := Values{ProducerByteRate: 5}
	if got := next[Entity{User: Named("x")}]; len(got) != 1 || got[ProducerByteRate] != 5 {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestRemoveLastKeyDropsEntity(t *testing.T) {
	e := Component{TypeClientID, nil}
	q, _ := Quotas{}.apply([]Alteration{alt([]Op{set(ConsumerByteRate, 1)}, e)})
	q, _ = q.apply([]Alteration{alt([]Op{{Key: ConsumerByteRate, Remove: true}}, e)})
	if len(q) != 0 {
		t.Fatalf("left %v", q)
	}
}

func TestDescribeFilters(t *testing.T) {
	q := Quotas{
		{User: Named("alice")}:                         {ProducerByteRate: 1},
		{User: Named("alice"), ClientID: Named("app")}: {RequestPercentage: 2},
		{User: DefaultPart()}:                          {ProducerByteRate: 3},
		{User: DefaultPart(), ClientID: DefaultPart()}: {ControllerMutationRate: 4},
		{ClientID: Named("app")}:                       {ProducerByteRate: 5},
		{IP: DefaultPart()}:                            {ConnectionCreationRate: 6},
	}
	count := func(strict bool, cs ...FilterComponent) int {
		f, err := ParseFilter(cs, strict)
		if err != nil {
			t.Fatal(err)
		}
		return len(q.Describe(f))
	}
	checks := []struct {
		name string
		got  int
		want int
	}{
		{"all", count(false), 6},
		{"all strict", count(true), 0},
		{"any user", count(false, FilterComponent{TypeUser, MatchAny, nil}), 4},
		{"any user strict", count(true, FilterComponent{TypeUser, MatchAny, nil}), 2},
		{"exact alice", count(false, FilterComponent{TypeUser, MatchExact, s("alice")}), 2},
		{"exact alice strict", count(true, FilterComponent{TypeUser, MatchExact, s("alice")}), 1},
		{"default user", count(false, FilterComponent{TypeUser, MatchDefault, nil}), 2},
		{"any client", count(false, FilterComponent{TypeClientID, MatchAny, nil}), 3},
		{"ip default", count(false, FilterComponent{TypeIP, MatchDefault, nil}), 1},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %d entries, want %d", c.name, c.got, c.want)
		}
	}
	for _, bad := range [][]FilterComponent{
		{{TypeUser, MatchDefault, s("x")}},
		{{TypeUser, MatchExact, nil}},
		{{TypeUser, 7, nil}},
		{{TypeUser, MatchAny, nil}, {TypeUser, MatchAny, nil}},
		{{TypeIP, MatchAny, nil}, {TypeUser, MatchAny, nil}},
	} {
		if _, err := ParseFilter(bad, false); err == nil || err.Code != codeInvalidRequest {
			t.Errorf("filter %+v: %v, want INVALID_REQUEST", bad, err)
		}
	}
	if _, err := ParseFilter([]FilterComponent{{"group", MatchAny, nil}}, false); err == nil || err.Code != codeUnsupportedVersion {
		t.Errorf("unknown type: %v, want UNSUPPORTED_VERSION", err)
	}
}

// TestResolveOrder removes the levels one by one, most specific first, and
// checks each time that the next one in Kafka's order applies, with the
// sensor tags of its level.
func TestResolveOrder(t *testing.T) {
	u, c := Named("alice"), Named("app")
	d := DefaultPart()
	levels := []struct {
		e    Entity
		tags Tags
	}{
		{Entity{User: u, ClientID: c}, Tags{"alice", "app"}},
		{Entity{User: u, ClientID: d}, Tags{"alice", "app"}},
		{Entity{User: u}, Tags{"alice", ""}},
		{Entity{User: d, ClientID: c}, Tags{"alice", "app"}},
		{Entity{User: d, ClientID: d}, Tags{"alice", "app"}},
		{Entity{User: d}, Tags{"alice", ""}},
		{Entity{ClientID: c}, Tags{"", "app"}},
		{Entity{ClientID: d}, Tags{"", "app"}},
	}
	q := Quotas{}
	for i, l := range levels {
		q[l.e] = Values{ProducerByteRate: float64(i + 1)}
	}
	q[Entity{User: u}][ConsumerByteRate] = 99 // another key does not count
	for i, l := range levels {
		limit, tags, ok := q.Resolve(ProducerByteRate, "alice", "app")
		if !ok || limit != float64(i+1) || tags != l.tags {
			t.Fatalf("level %d: got %v %+v %v, want %d %+v", i+1, limit, tags, ok, i+1, l.tags)
		}
		delete(q[l.e], ProducerByteRate)
	}
	if _, _, ok := q.Resolve(ProducerByteRate, "alice", "app"); ok {
		t.Fatal("no level left, yet a quota")
	}
	if v, _, _ := q.Resolve(ConsumerByteRate, "alice", "other"); v != 99 {
		t.Fatalf("consumer quota %v", v)
	}
}

func TestStorePersists(t *testing.T) {
	dir := t.TempDir()
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	alts := []Alteration{
		alt([]Op{set(ProducerByteRate, 1<<20)}, Component{TypeUser, s("alice")}),
		alt([]Op{set(ConsumerByteRate, 7)}, Component{TypeUser, nil}, Component{TypeClientID, nil}),
	}
	if _, err := st.Alter(alts, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, File)); err == nil {
		t.Fatal("validate-only wrote the file")
	}
	if _, err := st.Alter(alts, false); err != nil {
		t.Fatal(err)
	}
	again, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	q := again.Quotas()
	if q[Entity{User: Named("alice")}][ProducerByteRate] != 1<<20 || q[Entity{User: DefaultPart(), ClientID: DefaultPart()}][ConsumerByteRate] != 7 {
		t.Fatalf("reopened: %v", q)
	}
}

func TestManagerSharesUserLevelSensor(t *testing.T) {
	q := Quotas{{User: Named("alice")}: {ProducerByteRate: 1000}}
	m := NewManager(DefaultWindow, func() Quotas { return q })
	// Two clients of alice share one sensor: together they exceed it.
	if o := m.Record(KindProduce, "alice", "a", 6000, 0); o.ThrottleMs != 0 {
		t.Fatalf("first client throttled %d", o.ThrottleMs)
	}
	o := m.Record(KindProduce, "alice", "b", 6000, 0)
	if o.ThrottleMs != 2000 || o.Tags != (Tags{"alice", ""}) {
		t.Fatalf("second client: %+v, want 2000 ms on alice's sensor", o)
	}
	if o := m.Record(KindProduce, "bob", "a", 1e9, 0); o.OK || o.ThrottleMs != 0 {
		t.Fatalf("bob has no quota: %+v", o)
	}
}

// request_percentage's throttle is bounded by one window (Kafka bounds
// request-time throttles, not bandwidth ones).
func TestRequestThrottleBounded(t *testing.T) {
	q := Quotas{{ClientID: DefaultPart()}: {RequestPercentage: 10, ProducerByteRate: 10}}
	m := NewManager(DefaultWindow, func() Quotas { return q })
	// 5 s of handler time (500 percent-seconds) at once: 50 %/s over 10 s.
	o := m.Record(KindRequest, "u", "c", 500, 0)
	if o.ThrottleMs != DefaultWindow.SizeMs || o.Tags != (Tags{"", "c"}) {
		t.Fatalf("request throttle %+v, want one window on the client's sensor", o)
	}
	if o := m.Record(KindProduce, "u", "c", 500, 0); o.ThrottleMs != 40_000 {
		t.Fatalf("byte throttle %d, want the unbounded (50-10)/10 × 10 s", o.ThrottleMs)
	}
}

// Kafka answers an entity's quotas in its hash table's order, which
// kafka-configs prints (checked against a real broker).
func TestDescribeKeyOrder(t *testing.T) {
	q := Quotas{{User: Named("a")}: {ProducerByteRate: 1, ConsumerByteRate: 2, RequestPercentage: 3, ControllerMutationRate: 4}}
	en := q.Describe(Filter{})[0]
	want := []string{RequestPercentage, ProducerByteRate, ConsumerByteRate, ControllerMutationRate}
	for i, k := range want {
		if en.Keys[i] != k {
			t.Fatalf("keys %v, want %v", en.Keys, want)
		}
	}
}

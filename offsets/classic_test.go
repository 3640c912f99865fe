package offsets

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

func classicFixture(now time.Time) ClassicGroup {
	inst := "static-a"
	return ClassicGroup{
		Group: Group{ID: "g", ProtocolType: "consumer", Protocol: "range", Generation: 7,
			State: GroupActive, StateTime: now},
		Leader: "m1",
		Members: []ClassicMember{
			{ID: "m1", InstanceID: &inst, ClientID: "c1", ClientHost: "/127.0.0.1",
				SessionTimeout: 10 * time.Second, RebalanceTimeout: time.Minute, ProtocolType: "consumer",
				Protocols:  []Protocol{{Name: "range", Metadata: []byte{1, 2}}, {Name: "sticky", Metadata: []byte{}}},
				Assignment: []byte("a1")},
			{ID: "m2", ClientID: "c2", ClientHost: "/10.0.0.1", SessionTimeout: 45 * time.Second,
				RebalanceTimeout: 45 * time.Second, ProtocolType: "consumer",
				Protocols: []Protocol{{Name: "range", Metadata: []byte{3}}}, Assignment: []byte{}},
		},
	}
}

// The durable classic membership, memberships kept across restarts: a membership survives a crash right after PutClassicGroup
// returns (it was synced), and Open keeps such a group active.
func TestClassicGroupDurableAcrossCrash(t *testing.T) {
	fs := vfs.NewCrashableMem()
	clk := newClock()
	s, err := Open("db", Options{PebbleFS: fs, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	// An active group without a membership (a crash in its first
	// rebalance) still comes back empty.
	if err := s.PutGroup(Group{ID: "forming", ProtocolType: "consumer", State: GroupActive, StateTime: clk.Now()}); err != nil {
		t.Fatal(err)
	}
	want := classicFixture(clk.Now())
	if err := s.PutClassicGroup(want, 0); err != nil {
		t.Fatal(err)
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	_ = s.Close()

	clk.advance(time.Hour)
	s = open(t, "db", Options{PebbleFS: crashed, Now: clk.Now})
	got, err := s.ClassicGroups()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !reflect.DeepEqual(got["g"], want) {
		t.Fatalf("after crash\n got %+v\nwant %+v", got, want)
	}
	groups, err := s.Groups()
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]GroupState{}
	for _, g := range groups {
		states[g.ID] = g.State
	}
	if states["g"] != GroupActive || states["forming"] != GroupEmpty {
		t.Fatalf("states after reopen %v, want g active and forming empty", states)
	}
}

// The durable classic membership: writing the group with no members removes its membership; the
// bound refuses an oversized membership and writes nothing; DeleteGroup
// removes the membership.
func TestClassicGroupEmptyBoundAndDelete(t *testing.T) {
	clk := newClock()
	s := open(t, t.TempDir(), Options{Now: clk.Now})
	g := classicFixture(clk.Now())
	if err := s.PutClassicGroup(g, 0); err != nil {
		t.Fatal(err)
	}
	big := g
	big.Generation = 8
	big.Members = append([]ClassicMember(nil), g.Members...)
	big.Members[1].Assignment = make([]byte, 2000)
	if err := s.PutClassicGroup(big, 1000); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversized membership: %v, want ErrTooLarge", err)
	}
	if got, _ := s.ClassicGroups(); got["g"].Generation != 7 {
		t.Fatalf("a refused write changed the group: %+v", got["g"])
	}

	empty := ClassicGroup{Group: g.Group}
	empty.Generation, empty.State = 8, GroupEmpty
	if err := s.PutClassicGroup(empty, 0); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ClassicGroups(); len(got) != 0 {
		t.Fatalf("membership after the group emptied: %+v", got)
	}
	if err := s.PutClassicGroup(g, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteGroup("g"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ClassicGroups(); len(got) != 0 {
		t.Fatalf("membership after DeleteGroup: %+v", got)
	}
}

// A damaged membership record is reported, not half-loaded, and a count
// larger than the record cannot make the decoder allocate.
func TestClassicGroupCorrupt(t *testing.T) {
	enc := encodeClassic(classicFixture(time.UnixMilli(0)))
	for i := 1; i < len(enc); i++ {
		if _, err := decodeClassic("g", enc[:i]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated at %d: %v", i, err)
		}
	}
	huge := []byte{recordVersion, 0, 0xff, 0xff, 0xff, 0xff, 0x0f}
	if _, err := decodeClassic("g", huge); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("huge count: %v", err)
	}
}

// FuzzDecodeClassic: whatever bytes a damaged disk holds under a
// membership key, decoding never panics nor allocates past the record,
// and what decodes comes back the same through an encode.
func FuzzDecodeClassic(f *testing.F) {
	f.Add(encodeClassic(classicFixture(time.UnixMilli(1_700_000_000_000))))
	f.Add([]byte{recordVersion})
	f.Fuzz(func(t *testing.T, v []byte) {
		g, err := decodeClassic("g", v)
		if err != nil {
			return
		}
		again, err := decodeClassic("g", encodeClassic(g))
		if err != nil || !reflect.DeepEqual(again, g) {
			t.Fatalf("decoded %+v, through an encode %+v (%v)", g, again, err)
		}
	})
}

package offsets

import (
	"errors"
	"reflect"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Streams groups: the state survives a crash right after
// PutStreamsGroup returns and Open keeps the group active; a streams
// write removes a consumer state of the id and a classic or consumer
// write removes the streams state; DeleteGroup removes it; the bound
// writes nothing.
func TestStreamsGroupDurableAcrossCrash(t *testing.T) {
	fs := vfs.NewCrashableMem()
	clk := newClock()
	s, err := Open("db", Options{PebbleFS: fs, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	want := StreamsGroup{
		Group: Group{ID: "sg", ProtocolType: StreamsProtocolType, Generation: 4, State: GroupActive, StateTime: clk.Now()},
		State: []byte(`{"id":"sg"}`),
	}
	if err := s.PutConsumerGroup(consumerFixture(clk.Now()), 0); err != nil {
		t.Fatal(err)
	}
	cg := consumerFixture(clk.Now())
	cg.ID = "sg"
	if err := s.PutConsumerGroup(cg, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.PutStreamsGroup(want, 0); err != nil {
		t.Fatal(err)
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	_ = s.Close()
	s = open(t, "db", Options{PebbleFS: crashed, Now: clk.Now})
	got, err := s.StreamsGroups()
	if err != nil {
		t.Fatal(err)
	}
	// The state and its time come back; epochs and members are in the
	// state (the metadata record keeps the rest, listed by Groups).
	if g := got["sg"]; !reflect.DeepEqual(g.State, want.State) || !g.StateTime.Equal(want.StateTime.Truncate(1e6)) {
		t.Fatalf("after crash\n got %+v\nwant %+v", g, want)
	}
	if cons, _ := s.ConsumerGroups(); len(cons) != 1 || cons["cg"].ID != "cg" {
		t.Fatalf("the streams write kept the id's consumer state: %v", cons)
	}
	groups, _ := s.Groups()
	found := false
	for _, g := range groups {
		if g.ID == "sg" {
			found = g.State == GroupActive && g.ProtocolType == StreamsProtocolType && g.Generation == 4
		}
	}
	if !found {
		t.Fatalf("groups after reopen %+v: want sg active, streams, generation 4", groups)
	}
	if err := s.PutStreamsGroup(want, 5); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("bound: %v", err)
	}
	if err := s.PutClassicGroup(ClassicGroup{Group: Group{ID: "sg", State: GroupEmpty, StateTime: clk.Now()}}, 0); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.StreamsGroups(); len(got) != 0 {
		t.Fatalf("classic write kept the streams state: %v", got)
	}
	if err := s.PutStreamsGroup(want, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteGroup("sg"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.StreamsGroups(); len(got) != 0 {
		t.Fatalf("DeleteGroup kept the streams state: %v", got)
	}
}

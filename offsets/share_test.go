package offsets

import (
	"errors"
	"reflect"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

func shareFixture() []SharePartition {
	return []SharePartition{
		{TopicPartition: TopicPartition{Topic: "t", Partition: 0}, StartOffset: 10, Runs: []ShareRun{
			{First: 10, Last: 12, State: ShareAvailable, DeliveryCount: 2},
			{First: 13, Last: 13, State: ShareAcknowledged, DeliveryCount: 1},
			{First: 14, Last: 20, State: ShareArchived, DeliveryCount: 5},
		}},
		{TopicPartition: TopicPartition{Topic: "t", Partition: 1}, StartOffset: 7},
	}
}

// The durable share-partition state, the share group record: share state, the share group record and group configs
// survive a crash right after their writes return (they were synced), and
// DeleteShareGroup removes all of them and nothing of another group.
func TestShareStateDurableAcrossCrash(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s, err := Open("db", Options{PebbleFS: fs})
	if err != nil {
		t.Fatal(err)
	}
	want := shareFixture()
	for _, g := range []string{"sg", "sg2"} {
		if err := s.PutShareGroup(ShareGroup{ID: g, Epoch: 3}); err != nil {
			t.Fatal(err)
		}
		if err := s.PutShareState(g, want); err != nil {
			t.Fatal(err)
		}
		if err := s.PutGroupConfigs(g, map[string]string{"share.auto.offset.reset": "earliest"}); err != nil {
			t.Fatal(err)
		}
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	_ = s.Close()

	s = open(t, "db", Options{PebbleFS: crashed})
	got, err := s.ShareState("sg")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("share state after crash:\n got %+v\nwant %+v", got, want)
	}
	groups, err := s.ShareGroups()
	if err != nil || len(groups) != 2 || groups[0] != (ShareGroup{ID: "sg", Epoch: 3}) {
		t.Errorf("share groups after crash: %+v, %v", groups, err)
	}
	if err := s.DeleteShareGroup("sg"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ShareState("sg"); len(got) != 0 {
		t.Errorf("share state after DeleteShareGroup: %+v", got)
	}
	cfgs, _ := s.GroupConfigs()
	if _, ok := cfgs["sg"]; ok || cfgs["sg2"]["share.auto.offset.reset"] != "earliest" {
		t.Errorf("group configs after deleting sg: %v", cfgs)
	}
	if got, _ := s.ShareState("sg2"); !reflect.DeepEqual(got, want) {
		t.Errorf("another group's state after DeleteShareGroup: %+v", got)
	}
	// O3: share state is no consumer group: classic listings do not see it.
	if all, _ := s.Groups(); len(all) != 0 {
		t.Errorf("Groups lists share state: %+v", all)
	}
}

// PutShareState refuses runs that do not cover the window from its start
// contiguously, and a corrupt record is reported, not decoded.
func TestShareStateValidation(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	tp := TopicPartition{Topic: "t"}
	for _, bad := range []SharePartition{
		{TopicPartition: tp, StartOffset: 5, Runs: []ShareRun{{First: 6, Last: 6}}},
		{TopicPartition: tp, StartOffset: 5, Runs: []ShareRun{{First: 5, Last: 4}}},
		{TopicPartition: tp, StartOffset: 5, Runs: []ShareRun{{First: 5, Last: 5, State: 1}}},
	} {
		if err := s.PutShareState("g", []SharePartition{bad}); !errors.Is(err, ErrInvalid) {
			t.Errorf("PutShareState(%+v) = %v, want ErrInvalid", bad, err)
		}
	}
	enc := encodeSharePart(shareFixture()[0])
	for i := 1; i < len(enc); i++ {
		if _, err := decodeSharePart(tp, enc[:i]); !errors.Is(err, ErrCorrupt) {
			t.Errorf("decode of %d of %d bytes: %v, want ErrCorrupt", i, len(enc), err)
		}
	}
}

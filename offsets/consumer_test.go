package offsets

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

func consumerFixture(now time.Time) ConsumerGroup {
	inst, rack := "i1", "r1"
	return ConsumerGroup{
		Group:           Group{ID: "cg", ProtocolType: ConsumerProtocolType, Generation: 9, State: GroupActive, StateTime: now},
		AssignmentEpoch: 9, Assignor: "uniform",
		Topics: []ConsumerTopic{{ID: [16]byte{1}, Name: "t", Partitions: 3}},
		Members: []ConsumerMember{
			{ID: "a", InstanceID: &inst, RackID: &rack, ClientID: "c", ClientHost: "/127.0.0.1", Epoch: 9, PreviousEpoch: 8,
				State: 1, RebalanceTimeout: time.Minute, Topics: []string{"t"}, Regex: "t.*", Assignor: "uniform",
				Assigned: []TopicPartitions{{TopicID: [16]byte{1}, Partitions: []int32{0}}},
				Revoking: []TopicPartitions{{TopicID: [16]byte{1}, Partitions: []int32{1}}},
				Target:   []TopicPartitions{{TopicID: [16]byte{1}, Partitions: []int32{0, 2}}}},
		},
	}
}

// The durable consumer group state, consumer group state kept across restarts: a consumer group's state survives a crash right after
// PutConsumerGroup returns; Open keeps the group active; writing a
// classic membership for the id replaces it; DeleteGroup removes it; the
// bound writes nothing.
func TestConsumerGroupDurableAcrossCrash(t *testing.T) {
	fs := vfs.NewCrashableMem()
	clk := newClock()
	s, err := Open("db", Options{PebbleFS: fs, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	want := consumerFixture(clk.Now())
	if err := s.PutConsumerGroup(want, 0); err != nil {
		t.Fatal(err)
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	_ = s.Close()
	s = open(t, "db", Options{PebbleFS: crashed, Now: clk.Now})
	got, err := s.ConsumerGroups()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got["cg"], want) {
		t.Fatalf("after crash\n got %+v\nwant %+v", got["cg"], want)
	}
	groups, _ := s.Groups()
	if len(groups) != 1 || groups[0].State != GroupActive {
		t.Fatalf("groups after reopen %+v", groups)
	}
	if err := s.PutConsumerGroup(want, 10); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("bound: %v", err)
	}
	if err := s.PutClassicGroup(ClassicGroup{Group: Group{ID: "cg", State: GroupEmpty, StateTime: clk.Now()}}, 0); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ConsumerGroups(); len(got) != 0 {
		t.Fatalf("classic write kept the consumer state: %v", got)
	}
	if err := s.PutConsumerGroup(want, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteGroup("cg"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ConsumerGroups(); len(got) != 0 {
		t.Fatalf("DeleteGroup kept the consumer state: %v", got)
	}
}

// A consumer group whose members include classic-protocol members (an
// online upgrade) keeps their session timeouts and JoinGroup protocols;
// a group without them still encodes as the first record version.
func TestConsumerGroupClassicMembersRoundTrip(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	g := consumerFixture(now)
	if v := EncodeConsumerGroup(g); v[0] != recordVersion {
		t.Fatalf("a group without classic members encodes as version %d", v[0])
	}
	classic := g.Members[0]
	classic.ID, classic.InstanceID = "b", nil
	classic.Classic = &ClassicMemberMetadata{SessionTimeout: 45 * time.Second,
		Protocols: []Protocol{{Name: "range", Metadata: []byte{0, 3, 1}}, {Name: "cooperative-sticky", Metadata: nil}}}
	g.Members = append(g.Members, classic)
	enc := EncodeConsumerGroup(g)
	if enc[0] != consumerClassicVersion {
		t.Fatalf("version %d", enc[0])
	}
	got, err := decodeConsumer("cg", enc)
	if err != nil {
		t.Fatal(err)
	}
	want := g
	want.ProtocolType = ConsumerProtocolType
	want.Members[1].Classic.Protocols[1].Metadata = []byte{}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip\n got %+v\nwant %+v", got, want)
	}
	if _, err := decodeConsumer("cg", enc[:len(enc)-1]); err == nil {
		t.Fatal("a truncated record decoded")
	}
}

package logdirs

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestByTopic(t *testing.T) {
	got := ByTopic([]Partition{{"b", 1, 1}, {"a", 2, 2}, {"b", 0, 3}, {"a", 0, 4}})
	if len(got) != 2 || got[0].Name != "a" || got[0].Partitions[0].Partition != 0 || got[1].Partitions[1].Partition != 1 {
		t.Errorf("%+v", got)
	}
}

// Move's answers, in Kafka's order.
func TestMove(t *testing.T) {
	here := Hosting{Exists: true, Local: true}
	for _, tc := range []struct {
		logDir, dir, topic string
		h                  Hosting
		want               int16
	}{
		{"/d", "/d", "t", here, 0},
		{"/d", "/e", "t", here, kerr.LogDirNotFound.Code},
		{"", "", "t", here, kerr.LogDirNotFound.Code},
		{"/d", "/d", strings.Repeat("t", 220), Hosting{}, kerr.InvalidTopicException.Code},
		{"/d", "/e", "t", Hosting{}, kerr.LogDirNotFound.Code},
		{"/d", "/d", "t", Hosting{}, kerr.UnknownTopicOrPartition.Code},
		{"/d", "/d", "t", Hosting{Exists: true}, kerr.ReplicaNotAvailable.Code},
	} {
		if got := Move(tc.logDir, tc.dir, tc.topic, 0, tc.h); got != tc.want {
			t.Errorf("%q -> %q %s %+v: %d, want %d", tc.logDir, tc.dir, tc.topic[:1], tc.h, got, tc.want)
		}
	}
}

func TestStat(t *testing.T) {
	u, err := Stat(t.TempDir())
	if err != nil || (u.Total != -1 && (u.Total <= 0 || u.Usable < 0 || u.Usable > u.Total)) {
		t.Errorf("%+v %v", u, err)
	}
	if _, err := Stat(t.TempDir() + "/gone"); err == nil {
		t.Error("a missing dir has a usage")
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// With fetch.sendfile.enable a ShareFetch's batches read from segment
// files go by file reference only after their read checked them: a byte
// flipped in a segment file fails the partition with KAFKA_STORAGE_ERROR
// and acquires nothing, as the copy path does, where sendfile of the
// file's range would have sent the flipped byte.
func TestShareFetchCorruptBatchSendfile(t *testing.T) {
	for _, sendfile := range []bool{false, true} {
		dir := t.TempDir()
		g := startTestWith(t, dir, func(c *Config) { c.TailCacheBytes, c.FetchSendfile = 0, sendfile })
		cl := newClient(t, g)
		produce(t, cl, "shared", "x") // the topic, so that the member is assigned it
		m := shareJoin(t, cl, "g", "shared")
		if code, acquired := m.fetch(t); code != 0 || acquired != 0 {
			t.Fatalf("sendfile %v: first fetch: error %d, %d acquired", sendfile, code, acquired) // starts at the end
		}
		produce(t, cl, "shared", strings.Repeat("v", 40000)) // a batch sendfile would send
		flipLastSegmentByte(t, dir, 20000)
		if code, acquired := m.fetch(t); code != kerr.KafkaStorageError.Code || acquired != 0 {
			t.Fatalf("sendfile %v: fetch of a corrupt batch: error %d, %d acquired; want KAFKA_STORAGE_ERROR, none", sendfile, code, acquired)
		}
	}
}

// shareMember fetches partition 0 of its group's one topic on the seed
// broker's connection (a share session is its connection's).
type shareMember struct {
	cl            *kgo.Client
	group, member string
	topic         [16]byte
	epoch         int32
}

func shareJoin(t *testing.T, cl *kgo.Client, group, topic string) *shareMember {
	t.Helper()
	m := &shareMember{cl: cl, group: group, member: group + "-m"}
	hb := kmsg.NewPtrShareGroupHeartbeatRequest()
	hb.GroupID, hb.MemberID, hb.SubscribedTopicNames = group, m.member, []string{topic}
	raw, err := cl.SeedBrokers()[0].Request(testCtx(t), hb)
	if err != nil {
		t.Fatal(err)
	}
	resp := raw.(*kmsg.ShareGroupHeartbeatResponse)
	if resp.ErrorCode != 0 || resp.Assignment == nil || len(resp.Assignment.TopicPartitions) != 1 {
		t.Fatalf("join: error %d, assignment %+v", resp.ErrorCode, resp.Assignment)
	}
	m.topic = resp.Assignment.TopicPartitions[0].TopicID
	return m
}

// fetch is the member's next ShareFetch, answered at once: partition 0's
// error code and the records it acquired.
func (m *shareMember) fetch(t *testing.T) (code int16, acquired int64) {
	t.Helper()
	req := kmsg.NewPtrShareFetchRequest()
	req.GroupID, req.MemberID, req.ShareSessionEpoch = &m.group, &m.member, m.epoch
	req.MaxWaitMillis, req.MaxBytes, req.MaxRecords = 0, 1<<20, 500
	if m.epoch == 0 {
		rt := kmsg.NewShareFetchRequestTopic()
		rt.TopicID = m.topic
		rt.Partitions = append(rt.Partitions, kmsg.NewShareFetchRequestTopicPartition())
		req.Topics = append(req.Topics, rt)
	}
	raw, err := m.cl.SeedBrokers()[0].Request(testCtx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	resp := raw.(*kmsg.ShareFetchResponse)
	if resp.ErrorCode != 0 {
		t.Fatalf("share fetch: error %d", resp.ErrorCode)
	}
	m.epoch++
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			code = p.ErrorCode
			for _, ar := range p.AcquiredRecords {
				acquired += ar.LastOffset - ar.FirstOffset + 1
			}
		}
	}
	return code, acquired
}

// flipLastSegmentByte flips the byte back bytes before the end of the
// biggest segment file of dir (not the journal's), which ends with the
// batch written last.
func flipLastSegmentByte(t *testing.T, dir string, back int64) {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(dir, "segments", "*.seg"))
	var seg string
	var size int64
	for _, s := range segs {
		if st, err := os.Stat(s); err == nil && st.Size() > size {
			seg, size = s, st.Size()
		}
	}
	f, err := os.OpenFile(seg, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, size-back); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, size-back); err != nil {
		t.Fatal(err)
	}
}

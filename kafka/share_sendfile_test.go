package kafka

import (
	"crypto/tls"
	"net"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/auth/authtest"
	"github.com/kgateway/kgateway/kafka/connection"
	"github.com/kgateway/kgateway/kafka/fetchwire"
	"github.com/kgateway/kgateway/kafka/sendfile"
	"github.com/kgateway/kgateway/offsets"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/resolver/resolvertest"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// With fetch.sendfile.enable a ShareFetch on a plaintext connection
// answers its acquired batches read from segment files by file reference
// (sendfile), and answers exactly what the copy path answers: two share
// groups of one topic, one fetching over plaintext, one over TLS (whose
// batches are written from the checked buffers), get the same records
// and the same acquired ranges fetch after fetch — batches acquired in
// part (record-limit mode) and whole (batch-optimized), released and
// delivered again. Every response's lease, with its pins, is given back
// once the response is written.
func TestShareFetchSendfile(t *testing.T) {
	ca := authtest.NewCA(t, "ca")
	rig := startShareSendfile(t, serverTLS(t, ca, "none"))
	tlsConn, err := tls.Dial("tcp", rig.tls.String(), ca.ClientTLS(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	tlsConn.SetDeadline(time.Now().Add(testDeadline))
	t.Cleanup(func() { tlsConn.Close() })
	members := []*shareSendfileMember{
		rig.join(dialRaw(t, rig.plain), "over-plaintext"),
		rig.join(&rawConn{t: t, nc: tlsConn}, "over-tls"),
	}
	for _, m := range members {
		m.fetch(kmsg.NewPtrShareFetchRequest()) // the share-partition starts at the empty log's end
	}
	rig.produce()
	steps := []func(*kmsg.ShareFetchRequest){
		func(r *kmsg.ShareFetchRequest) { r.ShareAcquireMode, r.MaxRecords = 1, 3 },
		func(r *kmsg.ShareFetchRequest) { r.ShareAcquireMode, r.MaxRecords = 0, 3 },
		func(r *kmsg.ShareFetchRequest) { r.ShareAcquireMode, r.MaxRecords = 1, 2; release(r, 0, 2) },
		func(r *kmsg.ShareFetchRequest) { r.ShareAcquireMode, r.MaxRecords = 0, 500 },
		func(r *kmsg.ShareFetchRequest) { r.ShareAcquireMode, r.MaxRecords = 0, 500 },
	}
	got := 0
	for i, step := range steps {
		var answers [2]sharePartAnswer
		for j, m := range members {
			req := kmsg.NewPtrShareFetchRequest()
			step(req)
			answers[j] = m.fetch(req)
		}
		if !reflect.DeepEqual(answers[0], answers[1]) {
			t.Fatalf("step %d: plaintext (sendfile) answered %+v, TLS (copied) %+v", i, answers[0].Acquired, answers[1].Acquired)
		}
		got += len(answers[0].Records)
	}
	if got == 0 {
		t.Fatal("nothing acquired")
	}
	files := rig.written(t)
	if files[true] == 0 {
		t.Fatal("no batch of a plaintext ShareFetch went by file reference")
	}
	if files[false] != 0 {
		t.Fatalf("%d batches of a TLS ShareFetch went by file reference", files[false])
	}
}

// shareSendfileRig is a server over real storage without a tail cache
// (every batch read from its segment file), with fetch.sendfile.enable, a
// PLAINTEXT and an SSL listener and topic "sf"; its ShareFetch handler
// notes, per response, whether its connection sends files and how many of
// its batches name a file range, and keeps the response's batches.
type shareSendfileRig struct {
	t          *testing.T
	res        *resolver.Resolver
	plain, tls net.Addr

	mu    sync.Mutex
	files map[bool]int
	wires []*fetchwire.Batches
}

func startShareSendfile(t *testing.T, tc *tls.Config) *shareSendfileRig {
	t.Helper()
	rig := &shareSendfileRig{t: t, files: map[bool]int{}}
	a, _ := lookupAPI(int16(78))
	real := a.handle
	a.handle = func(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
		resp, err := real(s, rc, req)
		if sr, ok := resp.(*shareResponse); ok {
			rig.note(rc.conn.sendfile(), sr, req.GetVersion())
		}
		return resp, err
	}
	replaceAPI(t, a)
	rig.res = resolvertest.OpenTailCache(t, resolver.Config{NumPartitions: 1}, -1)
	if _, err := rig.res.CreateTopic("sf", 1, 1, nil, false); err != nil {
		t.Fatal(err)
	}
	offs, err := offsets.Open(filepath.Join(t.TempDir(), "offsets"), offsets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { offs.Close() }) // after the server's close (LIFO)
	s, err := NewServer(Config{Resolver: rig.res, Offsets: offs, FetchSendfile: true, Telemetry: testTelemetry(t),
		SASL: SASLConfig{Credentials: auth.OpenStore(t.TempDir())}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	rig.plain = rig.listen(s, Listener{Name: "PLAINTEXT", Protocol: Plaintext})
	rig.tls = rig.listen(s, Listener{Name: "SSL", Protocol: SSL, TLS: tc})
	return rig
}

func (rig *shareSendfileRig) listen(s *Server, l Listener) net.Addr {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		rig.t.Fatal(err)
	}
	if err := s.StartListener(ln, l); err != nil {
		rig.t.Fatal(err)
	}
	return ln.Addr()
}

// note counts the batches of a response that go by file reference, with
// sendfile where the connection allows: its pieces as the connection
// writer gets them (Encode's) that name a file range and are big enough.
func (rig *shareSendfileRig) note(files bool, sr *shareResponse, version int16) {
	enc := appendResponse(nil, &connection.Slot{Key: int16(78), Version: version, Resp: sr})
	pieces, _ := sr.wire.Segments(enc, true)
	n := 0
	for _, p := range pieces {
		if p.File != nil && len(p.Bytes) >= sendfile.MinFileBytes {
			n++
		}
	}
	rig.mu.Lock()
	defer rig.mu.Unlock()
	rig.files[files] += n
	rig.wires = append(rig.wires, sr.wire)
}

// written waits for every noted response's lease to be given back and
// returns the file-backed batches counted per kind of connection.
func (rig *shareSendfileRig) written(t *testing.T) map[bool]int {
	rig.mu.Lock()
	defer rig.mu.Unlock()
	for _, w := range rig.wires {
		waitFor(t, "a written ShareFetch response's lease given back", w.Lease().Released)
	}
	return rig.files
}

// produce writes batches of "sf" with franz-go: big ones (at least
// sendfile.MinFileBytes, sent from the file) and small ones (sent from
// memory), several records each where the client batches them.
func (rig *shareSendfileRig) produce() {
	cl, err := kgo.NewClient(kgo.SeedBrokers(rig.plain.String()), kgo.ProducerLinger(0), kgo.RecordRetries(1),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		rig.t.Fatal(err)
	}
	defer cl.Close()
	for i, sizes := range [][]int{{10000, 10000, 10000, 10000, 10000}, {100, 100, 100}, {40000}, {2000, 2000, 2000, 2000, 30000}} {
		var recs []*kgo.Record
		for j, n := range sizes {
			recs = append(recs, &kgo.Record{Topic: "sf", Value: []byte(strings.Repeat(string(rune('a'+i)), n+j))})
		}
		if err := cl.ProduceSync(testCtx(rig.t), recs...).FirstErr(); err != nil {
			rig.t.Fatal(err)
		}
	}
}

// shareSendfileMember is a share-group member of its own group on "sf",
// fetching partition 0 by hand on one connection.
type shareSendfileMember struct {
	c             *rawConn
	group, member string
	topic         [16]byte
	epoch         int32
}

func (rig *shareSendfileRig) join(c *rawConn, group string) *shareSendfileMember {
	m := &shareSendfileMember{c: c, group: group, member: group + "-m"}
	hb := kmsg.NewPtrShareGroupHeartbeatRequest()
	hb.SetVersion(1)
	hb.GroupID, hb.MemberID, hb.SubscribedTopicNames = m.group, m.member, []string{"sf"}
	resp := ask(c, hb).(*kmsg.ShareGroupHeartbeatResponse)
	if resp.ErrorCode != 0 || resp.Assignment == nil || len(resp.Assignment.TopicPartitions) != 1 {
		rig.t.Fatalf("join %s: error %d, assignment %+v", group, resp.ErrorCode, resp.Assignment)
	}
	m.topic = resp.Assignment.TopicPartitions[0].TopicID
	return m
}

// sharePartAnswer is what a ShareFetch answered for partition 0.
type sharePartAnswer struct {
	Code, AckCode int16
	Records       []byte
	Acquired      []kmsg.ShareFetchResponseTopicPartitionAcquiredRecord
}

// fetch sends req (its mode, limits and acknowledgements set) as the
// member's next ShareFetch of partition 0, answered at once.
func (m *shareSendfileMember) fetch(req *kmsg.ShareFetchRequest) sharePartAnswer {
	req.SetVersion(2)
	req.GroupID, req.MemberID, req.ShareSessionEpoch = &m.group, &m.member, m.epoch
	req.MaxWaitMillis, req.MaxBytes = 0, 1<<20
	if len(req.Topics) == 0 && m.epoch == 0 {
		rt := kmsg.NewShareFetchRequestTopic()
		rt.Partitions = append(rt.Partitions, kmsg.NewShareFetchRequestTopicPartition())
		req.Topics = append(req.Topics, rt)
	}
	for i := range req.Topics {
		req.Topics[i].TopicID = m.topic
	}
	resp := ask(m.c, req).(*kmsg.ShareFetchResponse)
	if resp.ErrorCode != 0 {
		m.c.t.Fatalf("%s: share fetch error %d", m.group, resp.ErrorCode)
	}
	m.epoch++
	var a sharePartAnswer
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			a = sharePartAnswer{p.ErrorCode, p.AcknowledgeErrorCode, p.Records, p.AcquiredRecords}
		}
	}
	return a
}

// release adds to r the release (acknowledge type 2) of offsets first to
// last of partition 0.
func release(r *kmsg.ShareFetchRequest, first, last int64) {
	rt, rp := kmsg.NewShareFetchRequestTopic(), kmsg.NewShareFetchRequestTopicPartition()
	ab := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
	ab.FirstOffset, ab.LastOffset, ab.AcknowledgeTypes = first, last, []int8{2}
	rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, ab)
	rt.Partitions = append(rt.Partitions, rp)
	r.Topics = append(r.Topics, rt)
}

package kafka

import (
	"context"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kgateway/kgateway/offsets"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/resolver/resolvertest"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// tooManyPartitions reports whether req (CreateTopics, CreatePartitions)
// would create more partitions than a fuzzing run should: each is a log
// and a file, up to 10,000 per request, which would fill the disk rather
// than find bugs. Small ones run; the topics they make are deleted after
// each input.
func tooManyPartitions(req kmsg.Request) bool {
	const limit = 8
	n := 0
	switch q := req.(type) {
	case *kmsg.CreateTopicsRequest:
		for _, t := range q.Topics {
			if t.NumPartitions > limit || len(t.ReplicaAssignment) > limit {
				return true
			}
			n += max(int(t.NumPartitions), len(t.ReplicaAssignment), 1)
		}
	case *kmsg.StreamsGroupHeartbeatRequest: // the internal topics a topology makes the broker create
		if q.Topology != nil {
			for _, st := range q.Topology.Subtopologies {
				for _, ti := range append(append([]kmsg.TopicInfo{}, st.RepartitionSourceTopics...), st.StateChangelogTopics...) {
					if ti.NumPartitions > limit {
						return true
					}
					n += max(int(ti.NumPartitions), 1)
				}
			}
		}
	case *kmsg.CreatePartitionsRequest:
		for _, t := range q.Topics {
			if t.Count > limit || len(t.Assignment) > limit {
				return true
			}
			n += max(int(t.Count), 1)
		}
	}
	return n > 2*limit
}

// FuzzRequestHandle decodes arbitrary bodies for every advertised (key,
// version), as FuzzRequestDecode does, and then runs the real handler
// against a real resolver and offset store (topic "t" exists; the
// connection's context is already cancelled so that no handler waits). No
// handler may panic: conn.handle would turn a panic into a closed
// connection, so this is where such bugs show. The response must pass
// checkResponse: its key and version, valid Kafka error codes, and for
// keys that answer item by item (CreateTopics and CreatePartitions
// included) exactly the items asked.
func FuzzRequestHandle(f *testing.F) {
	for i, a := range apis {
		for v := a.min; v <= a.max; v++ {
			req := kmsg.RequestForKey(a.key)
			req.SetVersion(v)
			f.Add(uint8(i), uint8(v-a.min), req.AppendTo(nil))
		}
	}
	addRichSeeds(f)
	s, res := fuzzServer(f)
	// Handlers ask the connection for its peer's address, nothing more.
	nc, peer := net.Pipe()
	f.Cleanup(func() { nc.Close(); peer.Close() })
	f.Fuzz(func(t *testing.T, idx, ver uint8, body []byte) {
		a := apis[int(idx)%len(apis)]
		v := a.min + int16(ver)%(a.max-a.min+1)
		req := kmsg.RequestForKey(a.key) // the oracle's own copy
		req.SetVersion(v)
		if req.ReadFrom(body) == nil && tooManyPartitions(req) {
			return
		}
		defer dropFuzzTopics(t, res)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		c := &conn{s: s, nc: nc, log: zap.NewNop(), host: "127.0.0.1", port: 9092}
		c.startLoop(ctx)
		sl, r, err := c.loop.Dispatch(requestFrameBody(a.key, v, 42, body), 0)
		if err != nil || r == nil {
			return
		}
		s.conns.Add(1) // as the read loop does before a handler
		done := make(chan struct{})
		go func() { defer close(done); r.Run() }()
		select {
		case <-done:
		case <-time.After(testDeadline):
			buf := make([]byte, 1<<20)
			t.Fatalf("key %d v%d: handler still running after %v with its connection gone:\n%s", a.key, v, testDeadline, buf[:runtime.Stack(buf, true)])
		}
		if sl.Err != nil && strings.Contains(sl.Err.Error(), "handler panic") {
			t.Fatalf("key %d v%d: %v", a.key, v, sl.Err)
		}
		if sl.Err == nil && sl.Resp != nil {
			if err := checkResponse(req, sl.Resp); err != nil {
				t.Fatalf("key %d v%d: %v\nrequest %+v\nresponse %+v", a.key, v, err, req, sl.Resp)
			}
		}
	})
}

// dropFuzzTopics deletes every topic but "t" (made by CreateTopics inputs).
func dropFuzzTopics(t *testing.T, res *resolver.Resolver) {
	for _, tp := range res.Topics() {
		if tp.Name != "t" {
			if err := res.DeleteTopic(tp.Name); err != nil {
				t.Fatalf("delete %s: %v", tp.Name, err)
			}
		}
	}
}

// fuzzServer is a server over a real store, resolver and offset store in
// f's temp dir, with topic "t" (2 partitions).
func fuzzServer(f *testing.F) (*Server, *resolver.Resolver) {
	dir := f.TempDir()
	res := resolvertest.Open(f, resolver.Config{NumPartitions: 1, RetentionCheckInterval: -1})
	if _, err := res.CreateTopic("t", 2, 1, nil, false); err != nil {
		f.Fatal(err)
	}
	offs, err := offsets.Open(filepath.Join(dir, "offsets"), offsets.Options{})
	if err != nil {
		f.Fatal(err)
	}
	s, err := NewServer(Config{Resolver: res, Offsets: offs, Telemetry: testTelemetry(f)})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		s.Close()
		offs.Close()
	})
	return s, res
}

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
	"github.com/kgateway/kgateway/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// handleFuzzSkip are the keys whose handlers FuzzRequestHandle does not
// run: they create partitions (a log and a file each, up to 10,000 per
// request), which would fill the disk over a fuzzing run rather than find
// bugs. Their decoding is still fuzzed by FuzzRequestDecode.
var handleFuzzSkip = map[int16]bool{19: true, 37: true}

// FuzzRequestHandle decodes arbitrary bodies for every advertised (key,
// version), as FuzzRequestDecode does, and then runs the real handler
// against a real resolver and offset store (topic "t" exists; the
// connection's context is already cancelled so that no handler waits). No
// handler may panic: conn.handle would turn a panic into a closed
// connection, so this is where such bugs show.
func FuzzRequestHandle(f *testing.F) {
	for i, a := range apis {
		for v := a.min; v <= a.max; v++ {
			req := kmsg.RequestForKey(a.key)
			req.SetVersion(v)
			f.Add(uint8(i), uint8(v-a.min), req.AppendTo(nil))
		}
	}
	s := fuzzServer(f)
	// Handlers ask the connection for its peer's address, nothing more.
	nc, peer := net.Pipe()
	f.Cleanup(func() { nc.Close(); peer.Close() })
	f.Fuzz(func(t *testing.T, idx, ver uint8, body []byte) {
		a := apis[int(idx)%len(apis)]
		if handleFuzzSkip[a.key] {
			return
		}
		v := a.min + int16(ver)%(a.max-a.min+1)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		c := &conn{s: s, nc: nc, ctx: ctx, cancel: cancel, log: zap.NewNop(), host: "127.0.0.1", port: 9092}
		sl, start, err := c.dispatch(requestFrameBody(a.key, v, 42, body), 0)
		if err != nil || start == nil {
			return
		}
		s.conns.Add(1) // as readLoop does before a handler
		done := make(chan struct{})
		go func() { defer close(done); start() }()
		select {
		case <-done:
		case <-time.After(testDeadline):
			buf := make([]byte, 1<<20)
			t.Fatalf("key %d v%d: handler still running after %v with its connection gone:\n%s", a.key, v, testDeadline, buf[:runtime.Stack(buf, true)])
		}
		if sl.err != nil && strings.Contains(sl.err.Error(), "handler panic") {
			t.Fatalf("key %d v%d: %v", a.key, v, sl.err)
		}
	})
}

// fuzzServer is a server over a real store, resolver and offset store in
// f's temp dir, with topic "t" (2 partitions).
func fuzzServer(f *testing.F) *Server {
	dir := f.TempDir()
	st, err := storage.Open(filepath.Join(dir, "data"), storage.Options{})
	if err != nil {
		f.Fatal(err)
	}
	res, err := resolver.Open(st, resolver.Config{NumPartitions: 1, RetentionCheckInterval: -1})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := res.CreateTopic("t", 2, 1, nil, false); err != nil {
		f.Fatal(err)
	}
	offs, err := offsets.Open(filepath.Join(dir, "offsets"), offsets.Options{})
	if err != nil {
		f.Fatal(err)
	}
	s, err := NewServer(Config{Resolver: res, Offsets: offs})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		s.Close()
		offs.Close()
		res.Close()
		st.Close()
	})
	return s
}

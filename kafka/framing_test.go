package kafka

import (
	"encoding/binary"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgateway/kgateway/kafka/topicadmin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// replaceAPI swaps one row of the dispatch table for the test (fault
// injection: a handler that blocks or fails on demand). Call it before
// startServer so that the row is restored only after the server closed.
func replaceAPI(t *testing.T, a api) {
	old, had := apiIndex[a.key]
	apiIndex[a.key] = a
	t.Cleanup(func() {
		if had {
			apiIndex[a.key] = old
		} else {
			delete(apiIndex, a.key)
		}
	})
}

func apiVersionsReq(v int16) *kmsg.ApiVersionsRequest {
	r := kmsg.NewPtrApiVersionsRequest()
	r.SetVersion(v)
	r.ClientSoftwareName, r.ClientSoftwareVersion = "test", "1"
	return r
}

// From v3 the client software name and version must match KIP-511's
// pattern; otherwise INVALID_REQUEST and no keys, as Apache Kafka 4.4
// answers (test/kafkadiff). v0–v2 carry neither.
func TestApiVersionsSoftwareName(t *testing.T) {
	s := startServer(t, Config{})
	c := dialRaw(t, s.Addr())
	for i, tc := range []struct {
		v             int16
		name, version string
		ok            bool
	}{
		{3, "kgo", "1.2.3", true}, {4, "apache-kafka-java", "4.4.0", true}, {3, "a", "1", true},
		{3, "bad name!", "1.0", false}, {4, "", "1", false}, {3, "x", "", false},
		{3, "-x", "1", false}, {3, "x", "1.", false}, {2, "", "", true},
	} {
		req := apiVersionsReq(tc.v)
		req.ClientSoftwareName, req.ClientSoftwareVersion = tc.name, tc.version
		c.send(int32(i), req)
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.SetVersion(tc.v)
		c.recv(resp)
		if ok := resp.ErrorCode == 0 && len(resp.ApiKeys) > 0; ok != tc.ok {
			t.Errorf("v%d %q %q: error %d with %d keys, want accepted %v", tc.v, tc.name, tc.version, resp.ErrorCode, len(resp.ApiKeys), tc.ok)
		}
		if !tc.ok && (resp.ErrorCode != kerr.InvalidRequest.Code || len(resp.ApiKeys) != 0) {
			t.Errorf("v%d %q %q: error %d with %d keys, want INVALID_REQUEST and none", tc.v, tc.name, tc.version, resp.ErrorCode, len(resp.ApiKeys))
		}
	}
}

func TestApiVersionsEveryVersion(t *testing.T) {
	s := startServer(t, Config{Telemetry: testTelemetry(t)})
	c := dialRaw(t, s.Addr())
	for v := int16(0); v <= 3; v++ {
		c.send(int32(v), apiVersionsReq(v))
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.SetVersion(v)
		if corr := c.recv(resp); corr != int32(v) {
			t.Fatalf("v%d: correlation %d", v, corr)
		}
		if resp.ErrorCode != 0 || len(resp.ApiKeys) != len(apis) {
			t.Fatalf("v%d: error %d, %d keys", v, resp.ErrorCode, len(resp.ApiKeys))
		}
		for i, k := range resp.ApiKeys {
			if a := apis[i]; k.ApiKey != a.key || k.MinVersion != a.min || k.MaxVersion != a.max {
				t.Fatalf("v%d: key %+v, table %+v", v, k, a)
			}
		}
	}
}

// A too-new ApiVersions gets a v0-format UNSUPPORTED_VERSION with the
// ApiVersions key alone, as Kafka's (the body is not even parsed), and the
// connection stays usable.
func TestApiVersionsFutureVersion(t *testing.T) {
	s := startServer(t, Config{})
	c := dialRaw(t, s.Addr())
	frame := []byte{0, 0, 0, 0}
	frame = binary.BigEndian.AppendUint16(frame, uint16(apiKeyApiVersions))
	frame = binary.BigEndian.AppendUint16(frame, 99)
	frame = binary.BigEndian.AppendUint32(frame, 7)
	frame = append(frame, 0xff, 0xff, 0, 0xde, 0xad) // null client id, tags, junk
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	c.write(frame)
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(0)
	if corr := c.recv(resp); corr != 7 {
		t.Fatalf("correlation %d", corr)
	}
	if resp.ErrorCode != kerr.UnsupportedVersion.Code || len(resp.ApiKeys) != 1 ||
		resp.ApiKeys[0].ApiKey != apiKeyApiVersions || resp.ApiKeys[0].MaxVersion != 5 {
		t.Fatalf("error %d, keys %+v", resp.ErrorCode, resp.ApiKeys)
	}
	c.send(8, apiVersionsReq(3))
	resp = kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(3)
	if corr := c.recv(resp); corr != 8 || resp.ErrorCode != 0 {
		t.Fatalf("retry at v3: correlation %d error %d", corr, resp.ErrorCode)
	}
}

// The frame size limit: a declared size above socket.request.max.bytes closes the connection
// before the body is allocated.
func TestOversizeFrameClosesBeforeAllocating(t *testing.T) {
	const limit = 64 << 20
	s := startServer(t, Config{MaxRequestBytes: limit})
	c := dialRaw(t, s.Addr())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c.write(binary.BigEndian.AppendUint32(nil, limit+1))
	c.expectClosed()
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > limit/2 {
		t.Fatalf("allocated %d bytes for a rejected frame", grew)
	}
}

func TestMalformedFramesClose(t *testing.T) {
	s := startServer(t, Config{})
	frames := map[string][]byte{
		"negative size":         binary.BigEndian.AppendUint32(nil, 0xffffffff),
		"shorter than a header": {0, 0, 0, 3, 0, 18, 0},
		"unknown key":           {0, 0, 0, 10, 0x7f, 0x00, 0, 0, 0, 0, 0, 1, 0xff, 0xff},
		"unsupported version":   {0, 0, 0, 10, 0, 3, 0, 99, 0, 0, 0, 1, 0xff, 0xff},
		// Metadata v1 whose topic array claims more than the frame holds.
		"truncated body": {0, 0, 0, 14, 0, 3, 0, 1, 0, 0, 0, 1, 0xff, 0xff, 0, 0, 0, 9},
		// client id longer than the frame
		"bad header": {0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0, 1, 0, 50},
	}
	for name, frame := range frames {
		t.Run(strings.ReplaceAll(name, " ", "-"), func(t *testing.T) {
			c := dialRaw(t, s.Addr())
			c.write(frame)
			c.expectClosed()
		})
	}
}

// Responses in request order, requests in effect one at a time: pipelined requests of one connection are handled one at a time,
// in request order, and answered in that order: the second request's
// handler does not start while the first's runs. (The first handler gives
// the second a moment to start; a server that handles concurrently starts
// it within microseconds. The pause cannot fail a correct server.)
func TestPipelinedRequestsInOrder(t *testing.T) {
	secondStarted := make(chan struct{})
	var overlapped atomic.Bool
	replaceAPI(t, api{key: 3, min: 0, max: 12, handle: func(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
		select {
		case <-secondStarted:
			overlapped.Store(true)
		case <-time.After(300 * time.Millisecond):
		}
		return req.ResponseKind(), nil
	}})
	replaceAPI(t, api{key: 60, min: 0, max: 1, handle: func(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
		close(secondStarted)
		return req.ResponseKind(), nil
	}})
	s := startServer(t, Config{}) // after replaceAPI: restored after Close
	c := dialRaw(t, s.Addr())
	meta := kmsg.NewPtrMetadataRequest()
	meta.SetVersion(1)
	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.SetVersion(0)
	c.send(1, meta)
	c.send(2, dc)
	for i := int32(3); i < 20; i++ {
		c.send(i, apiVersionsReq(3))
	}
	mresp := kmsg.NewPtrMetadataResponse()
	mresp.SetVersion(1)
	if corr := c.recv(mresp); corr != 1 {
		t.Fatalf("first response has correlation %d", corr)
	}
	if overlapped.Load() {
		t.Fatal("the second request ran while the first was being handled")
	}
	dresp := kmsg.NewPtrDescribeClusterResponse()
	dresp.SetVersion(0)
	if corr := c.recv(dresp); corr != 2 {
		t.Fatalf("second response has correlation %d", corr)
	}
	for i := int32(3); i < 20; i++ {
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.SetVersion(3)
		if corr := c.recv(resp); corr != i {
			t.Fatalf("response %d has correlation %d", i, corr)
		}
	}
}

// A Go error closes the connection: a handler's Go error closes the connection.
func TestHandlerErrorCloses(t *testing.T) {
	replaceAPI(t, api{key: 60, min: 0, max: 1, handle: func(*Server, *reqCtx, kmsg.Request) (kmsg.Response, error) {
		return nil, errors.New("injected")
	}})
	s := startServer(t, Config{}) // after replaceAPI: restored after Close
	c := dialRaw(t, s.Addr())
	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.SetVersion(0)
	c.send(1, dc)
	c.expectClosed()
}

// Close lets an in-flight request finish and its response be written.
func TestCloseFinishesInFlight(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	replaceAPI(t, api{key: 60, min: 0, max: 1, handle: func(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
		close(started)
		<-release
		return req.ResponseKind(), nil
	}})
	s := startServer(t, Config{}) // after replaceAPI: restored after Close
	c := dialRaw(t, s.Addr())
	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.SetVersion(0)
	c.send(1, dc)
	<-started
	closed := make(chan error)
	go func() { closed <- s.Close() }()
	close(release)
	resp := kmsg.NewPtrDescribeClusterResponse()
	resp.SetVersion(0)
	if corr := c.recv(resp); corr != 1 {
		t.Fatalf("correlation %d", corr)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	c.expectClosed()
}

func TestValidTopicName(t *testing.T) {
	for name, want := range map[string]bool{
		"a": true, "A-b_c.9": true, ".": false, "..": false, "": false,
		"a b": false, "a/b": false, strings.Repeat("x", 249): true, strings.Repeat("x", 250): false,
	} {
		if got := topicadmin.ValidName(name); got != want {
			t.Errorf("topicadmin.ValidName(%q) = %v", name, got)
		}
	}
}

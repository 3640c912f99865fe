package kafka

import (
	"encoding/binary"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgateway/kgateway/kafka/wire"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// openConns is how many connections the server has registered.
func (s *Server) openConns() int { return s.open.Len() }

// The idle connection timeout: a connection that sends nothing, starts a frame and stops, or
// trickles a frame too slowly, is closed after connections.max.idle.ms.
func TestIdleConnectionsClosed(t *testing.T) {
	s := startServer(t, Config{ConnectionsMaxIdle: 100 * time.Millisecond})
	silent := dialRaw(t, s.Addr())
	partial := dialRaw(t, s.Addr())
	partial.write([]byte{0, 0, 0, 100, 0, 18, 0}) // 7 of 104 bytes
	// A trickle: one byte of a 104-byte frame every 10ms is activity, but
	// the frame is not complete within the idle time.
	trickle := dialRaw(t, s.Addr())
	trickle.write([]byte{0, 0, 0, 100, 0, 18, 0})
	trickled := make(chan struct{})
	go func() {
		defer close(trickled)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for range tick.C {
			if _, err := trickle.nc.Write([]byte{0}); err != nil {
				return // closed by the server
			}
		}
	}()
	silent.expectClosed()
	partial.expectClosed()
	trickle.expectClosed()
	<-trickled
	waitFor(t, "budget returned", func() bool { return s.budget.InUse() == 0 })
}

// The idle connection timeout: a connection waiting for a response (a long poll) is busy, not idle.
func TestLongPollIsNotIdle(t *testing.T) {
	res := openResolver(t)
	if _, err := res.CreateTopic("idle", 1, 1, nil, false); err != nil {
		t.Fatal(err)
	}
	// The connection is idle from the accept until the request arrives, so
	// the request is built before the dial and the idle time leaves room
	// for a stalled test goroutine on a loaded machine; the long poll
	// still waits five times the idle time.
	const idle, maxWait = 200 * time.Millisecond, 1000 * time.Millisecond
	s := startServer(t, Config{Resolver: res, ConnectionsMaxIdle: idle})
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(12)
	req.MaxWaitMillis, req.MinBytes = int32(maxWait/time.Millisecond), 1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "idle"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	c := dialRaw(t, s.Addr())
	start := time.Now()
	c.send(3, req)
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(12)
	if corr := c.recv(resp); corr != 3 {
		t.Fatalf("correlation %d", corr)
	}
	// A timer never fires early: the answer comes at MaxWait at the soonest.
	if waited := time.Since(start); waited < maxWait-100*time.Millisecond {
		t.Fatalf("fetch answered after %v, before its max wait", waited)
	}
	c.expectClosed() // idle again once answered
}

// The connection limit: connections beyond max.connections are closed at once; a slot freed
// by a closed connection is usable again.
func TestMaxConnections(t *testing.T) {
	s := startServer(t, Config{MaxConnections: 2})
	var open []*rawConn
	for i := range 2 {
		c := dialRaw(t, s.Addr())
		c.send(int32(i), apiVersionsReq(3))
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.SetVersion(3)
		c.recv(resp)
		open = append(open, c)
	}
	extra := dialRaw(t, s.Addr())
	extra.expectClosed()
	open[0].nc.Close()
	waitFor(t, "a closed connection unregistered", func() bool { return s.openConns() < 2 })
	c := dialRaw(t, s.Addr())
	c.send(9, apiVersionsReq(3))
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(3)
	if corr := c.recv(resp); corr != 9 || resp.ErrorCode != 0 {
		t.Fatalf("after a slot freed: correlation %d error %d", corr, resp.ErrorCode)
	}
}

// The request memory budget: while queued.max.request.bytes is taken, other connections' frames
// are not read; they are once the bytes are returned. A frame holds the
// budget only as its bytes arrive.
func TestQueuedBytesBoundStopsReading(t *testing.T) {
	const limit = 1 << 20
	s := startServer(t, Config{MaxRequestBytes: limit, QueuedMaxRequestBytes: limit})
	big := dialRaw(t, s.Addr())
	frame := binary.BigEndian.AppendUint32(nil, limit)
	frame = append(frame, 0x7f, 0x00, 0, 0) // an unknown key: closes once read
	big.write(frame)
	// Declared, not sent: the header alone holds nothing.
	waitFor(t, "the big frame's first bytes charged", func() bool { return s.budget.InUse() > 0 })
	if n := s.budget.InUse(); n > 2*wire.MinBodyGrow {
		t.Fatalf("4 bytes of a %d-byte frame hold %d bytes of budget", limit, n)
	}
	big.write(make([]byte, limit-5)) // all but the last byte
	waitFor(t, "the big frame holds the budget", func() bool { return s.budget.InUse() == limit })

	small := dialRaw(t, s.Addr())
	small.send(5, apiVersionsReq(3))
	waitFor(t, "the small frame waits for the budget", func() bool { return s.budget.Waiting() == 1 })

	big.write([]byte{0}) // the rest of the big frame
	big.expectClosed()
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(3)
	if corr := small.recv(resp); corr != 5 || resp.ErrorCode != 0 {
		t.Fatalf("after the budget freed: correlation %d error %d", corr, resp.ErrorCode)
	}
	waitFor(t, "budget returned", func() bool { return s.budget.InUse() == 0 })
}

// Bad bodies of every kind get a clean answer or close the connection
// (the frame size limit, a Go error closes the connection): no panic, no allocation of a declared count, and the byte
// budget (the request memory budget) returned. (A negative array length other than -1 decodes as
// null, as franz-go's kmsg does, and gets an answer.)
func TestMalformedBodiesCloseCleanly(t *testing.T) {
	s := startServer(t, Config{Resolver: openResolver(t)})
	frame := func(key, version int16, body ...byte) []byte {
		b := requestFrameBody(key, version, 1, body)
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
	}
	cases := map[string][]byte{
		// Metadata v4: topics array length -5 (only -1, null, is valid).
		"negative array length": frame(3, 4, 0xff, 0xff, 0xff, 0xfb, 0),
		// Metadata v4: topics array claiming 2^31-1 entries in a tiny body.
		"huge array length": frame(3, 4, 0x7f, 0xff, 0xff, 0xff, 0),
		// Produce v7: transactional id whose length runs past the frame.
		"string past the end": frame(apiKeyProduce, 7, 0x00, 0x40, 'x'),
		// Fetch v12 (flexible): a compact array length varint never ending.
		"endless varint": frame(1, 12, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff),
		"unknown key":    frame(0x7ff0, 0),
		"empty body":     frame(apiKeyProduce, 9),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			c := dialRaw(t, s.Addr())
			c.write(b)
			var size [4]byte
			if _, err := io.ReadFull(c.nc, size[:]); err != nil {
				if wire.IsTimeout(err) {
					t.Fatal("neither answered nor closed")
				}
				return // closed
			}
			body := make([]byte, binary.BigEndian.Uint32(size[:]))
			if _, err := io.ReadFull(c.nc, body); err != nil || binary.BigEndian.Uint32(body) != 1 {
				t.Fatalf("a response of %d bytes, correlation %x: %v", len(body), body[:min(4, len(body))], err)
			}
		})
	}
	// The server is fine: a well-formed request on a new connection works.
	c := dialRaw(t, s.Addr())
	c.send(3, apiVersionsReq(3))
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(3)
	if corr := c.recv(resp); corr != 3 || resp.ErrorCode != 0 {
		t.Fatalf("after bad frames: correlation %d error %d", corr, resp.ErrorCode)
	}
	waitFor(t, "budget returned", func() bool { return s.budget.InUse() == 0 })
}

// The request memory budget: every way a connection ends returns its requests' bytes to the
// budget: the client leaving with its request still being handled, and a
// handler error closing the connection with later requests queued.
func TestBudgetReturnedWhenConnectionsDie(t *testing.T) {
	var failNext atomic.Bool
	replaceAPI(t, api{key: 60, min: 0, max: 1, handle: func(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
		if failNext.Load() {
			return nil, errors.New("injected")
		}
		<-rc.ctx.Done() // held until the connection dies
		return req.ResponseKind(), nil
	}})
	s := startServer(t, Config{})
	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.SetVersion(0)

	c := dialRaw(t, s.Addr())
	c.send(0, dc)
	waitFor(t, "a request held", func() bool { return s.budget.InUse() > 0 && s.handling.Load() == 1 })
	c.nc.Close()
	waitFor(t, "budget returned after the client left", func() bool { return s.budget.InUse() == 0 })

	failNext.Store(true)
	c = dialRaw(t, s.Addr())
	var frames []byte // one write: the first failure closes the connection
	for i := range 5 {
		b := requestFrameBody(60, 0, int32(i), dc.AppendTo(nil))
		frames = append(binary.BigEndian.AppendUint32(frames, uint32(len(b))), b...)
	}
	c.write(frames)
	c.expectClosed()
	waitFor(t, "budget returned after a handler error", func() bool { return s.budget.InUse() == 0 })
	waitFor(t, "connections unregistered", func() bool { return s.openConns() == 0 })
}

// The decoded-request bound: a request other than Produce is charged decodeFactor times its bytes
// before it is decoded; one whose charge exceeds queued.max.request.bytes
// closes the connection, a smaller one is answered, and Metadata answers a
// topic named many times once.
func TestDecodedRequestsBounded(t *testing.T) {
	const limit = 1 << 20
	res := openResolver(t)
	if _, err := res.CreateTopic("named", 1, 1, nil, false); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, Config{Resolver: res, MaxRequestBytes: limit, QueuedMaxRequestBytes: limit})
	meta := func(n int) *kmsg.MetadataRequest {
		req := kmsg.NewPtrMetadataRequest()
		req.SetVersion(4)
		for range n {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr("named")
			req.Topics = append(req.Topics, rt)
		}
		return req
	}
	big := meta(2400) // 7 wire bytes a name: 16.8 kB, over 1 MiB charged 64 times
	c := dialRaw(t, s.Addr())
	c.send(1, big)
	c.expectClosed()

	small := meta(1000)
	c = dialRaw(t, s.Addr())
	c.send(2, small)
	resp := kmsg.NewPtrMetadataResponse()
	resp.SetVersion(4)
	if corr := c.recv(resp); corr != 2 || len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("correlation %d, %d topics for one named 1000 times", corr, len(resp.Topics))
	}
	waitFor(t, "budget returned", func() bool { return s.budget.InUse() == 0 })
}

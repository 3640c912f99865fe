package kafka

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// minFrame is the smallest request body: api key, version, correlation id
// and the client id's length.
const minFrame = 2 + 2 + 4 + 2

// errFrame marks a frame that cannot be a Kafka request (K2).
var errFrame = errors.New("kafka: malformed frame")

// conn is one client connection. The reader goroutine parses frames and
// starts a handler per request; the writer goroutine writes responses in
// the order of queue, which is request order (K1).
type conn struct {
	s   *Server
	nc  net.Conn
	log *zap.Logger

	// ctx is cancelled when the connection dies; handlers that wait
	// (long-poll fetch) stop waiting.
	ctx    context.Context
	cancel context.CancelFunc

	// queue carries slots from reader to writer in request order; its
	// capacity is the in-flight window.
	queue chan *slot

	// host and port are what this connection's client is told to dial.
	host string
	port int32

	// lastProduce is closed when the previous produce request of this
	// connection has appended (K4). Touched only by the reader goroutine.
	lastProduce chan struct{}

	// inFlight counts slots queued and not yet finished by the writer; a
	// connection with requests in flight is never idle (K7).
	inFlight atomic.Int64
	// active is when a byte was last read or written (unix nanoseconds).
	active atomic.Int64
	// frameStart is when the body of the frame being read started to be
	// read (zero between frames); a frame must complete within
	// connections.max.idle.ms of it (K7). Reader goroutine only.
	frameStart time.Time

	closeOnce sync.Once
}

// touch records activity for the idle check (K7).
func (c *conn) touch() { c.active.Store(time.Now().UnixNano()) }

func (c *conn) lastActive() time.Time { return time.Unix(0, c.active.Load()) }

// slot is one request's place in the response order.
type slot struct {
	done    chan struct{} // closed when resp/err are set
	key     int16
	version int16
	corrID  int32
	resp    kmsg.Response // nil: send nothing (acks=0)
	err     error         // non-nil: close the connection (K3)
	// bytes is the frame size taken from the server's byte budget (K6),
	// returned when the slot is finished: its response written or dropped.
	bytes int64
}

// reqCtx is what a handler knows about its request.
type reqCtx struct {
	ctx      context.Context // done when the connection dies
	conn     *conn
	version  int16
	clientID *string
	// produceAfter/produceDone order the appends of one connection's
	// produce requests (K4); nil for other keys.
	produceAfter <-chan struct{}
	produceDone  chan struct{}
	appendedOnce sync.Once
	stats        reqStats // observe.go
}

// appended lets the connection's next produce request append (K4). A
// produce handler calls it as soon as its batches are written, before
// waiting for them to be durable, so the next request's writes join the
// same group commit; handle calls it in any case when the handler ends.
func (rc *reqCtx) appended() {
	if rc.produceDone != nil {
		rc.appendedOnce.Do(func() { close(rc.produceDone) })
	}
}

func newConn(s *Server, nc net.Conn) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	c := &conn{
		s: s, nc: nc, ctx: ctx, cancel: cancel,
		log:   s.log.With(zap.Stringer("remote", nc.RemoteAddr())),
		queue: make(chan *slot, s.cfg.MaxInFlightPerConn),
	}
	c.host, c.port = s.advertisedFor(nc)
	c.touch()
	return c
}

// advertisedFor returns the host and port clients of nc should dial:
// the configured advertised address, else the address nc was reached on.
func (s *Server) advertisedFor(nc net.Conn) (string, int32) {
	addr := s.cfg.AdvertisedAddr
	if addr == "" {
		addr = nc.LocalAddr().String()
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, 0
	}
	p, _ := strconv.Atoi(port)
	return host, int32(p)
}

// stopReading makes the reader stop taking requests (graceful shutdown);
// the writer still writes every queued response.
func (c *conn) stopReading() { c.nc.SetReadDeadline(time.Now()) }

// kill closes the connection at once.
func (c *conn) kill() {
	c.closeOnce.Do(func() {
		c.cancel()
		c.nc.Close()
	})
}

func (c *conn) readLoop() {
	defer c.s.conns.Done()
	defer close(c.queue)
	br := bufio.NewReaderSize(&idleReader{c: c}, 32<<10)
	for {
		body, err := c.readFrame(br)
		if err != nil {
			if !c.s.isClosing() {
				// Peer gone, idle or bad frame: nobody will read responses.
				c.logReadErr(err)
				c.kill()
			}
			return
		}
		sl, start, err := c.dispatch(body)
		if err != nil {
			c.s.budget.release(int64(len(body)))
			c.log.Info("request-rejected", zap.Error(err))
			c.kill()
			return
		}
		sl.bytes = int64(len(body))
		c.inFlight.Add(1)
		select {
		case c.queue <- sl:
		case <-c.ctx.Done():
			c.finish(sl)
			return
		}
		if start != nil {
			c.s.conns.Add(1)
			go start()
		}
	}
}

func (c *conn) logReadErr(err error) {
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		return
	}
	if errors.Is(err, errIdle) {
		c.log.Debug("connection-idle-closed")
		return
	}
	c.log.Info("connection-read-failed", zap.Error(err))
}

// readFrame reads one size-prefixed frame. K2: the size is checked before
// the body is allocated. K6: the size is taken from the server's byte
// budget before the body is read (waiting, not reading, while it is
// spent); on success the caller owns those bytes of budget, on error they
// are already returned.
func (c *conn) readFrame(br *bufio.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return nil, err
	}
	size := int32(binary.BigEndian.Uint32(hdr[:]))
	if size < minFrame || size > c.s.cfg.MaxRequestBytes {
		return nil, fmt.Errorf("%w: size %d outside [%d, %d]", errFrame, size, minFrame, c.s.cfg.MaxRequestBytes)
	}
	if err := c.s.budget.acquire(c.ctx, c.s.closing, int64(size)); err != nil {
		return nil, err
	}
	c.frameStart = time.Now()
	body, err := readBody(br, int(size))
	c.frameStart = time.Time{}
	if err != nil {
		c.s.budget.release(int64(size))
	}
	return body, err
}

// wholeBody is how much of a frame is allocated before its bytes arrive:
// a frame up to this size is allocated whole, so the usual produce frame
// (a few MiB of batches) is read straight into its final buffer with no
// regrowth (regrowing by doubling from 1 MiB was 14% of the server's CPU
// producing to 32 partitions). A larger frame takes its declared size once
// this much has arrived: a client that has sent 8 MiB is sending, and one
// that declares a huge frame and trickles it holds at most this much
// beyond what it sent.
const wholeBody = 8 << 20

// readBody reads size bytes. Declared sizes are paid for from
// queued.max.request.bytes (K6) before the body is read, so this never
// holds more than the budget allows.
func readBody(br *bufio.Reader, size int) ([]byte, error) {
	first := min(size, wholeBody)
	body := make([]byte, first, first)
	if _, err := io.ReadFull(br, body); err != nil {
		return nil, err
	}
	if first == size {
		return body, nil
	}
	// One copy of wholeBody bytes instead of a chain of outgrown buffers.
	whole := make([]byte, size)
	copy(whole, body)
	if _, err := io.ReadFull(br, whole[first:]); err != nil {
		return nil, err
	}
	return whole, nil
}

// dispatch parses a request and returns its slot and the function that
// handles it (nil when the slot is already complete).
func (c *conn) dispatch(body []byte) (*slot, func(), error) {
	key := int16(binary.BigEndian.Uint16(body[0:]))
	version := int16(binary.BigEndian.Uint16(body[2:]))
	sl := &slot{done: make(chan struct{}), key: key, version: version,
		corrID: int32(binary.BigEndian.Uint32(body[4:]))}
	a, ok := lookupAPI(key)
	if !ok {
		return nil, nil, fmt.Errorf("%w: api key %d not supported", errFrame, key)
	}
	if version < a.min || version > a.max {
		if key == apiKeyApiVersions && version > a.max {
			// The client learns our versions from a v0 answer and retries.
			sl.version = 0
			sl.resp = apiVersionsUnsupported()
			close(sl.done)
			return sl, nil, nil
		}
		return nil, nil, fmt.Errorf("%w: api key %d version %d outside [%d, %d]", errFrame, key, version, a.min, a.max)
	}
	req := kmsg.RequestForKey(key)
	req.SetVersion(version)
	rc := &reqCtx{ctx: c.ctx, conn: c, version: version}
	rc.stats.size, rc.stats.arrived = len(body), time.Now()
	rest, clientID, err := parseHeaderRest(body[8:], req.IsFlexible())
	if err != nil {
		return nil, nil, err
	}
	rc.clientID = clientID
	if err := req.ReadFrom(rest); err != nil {
		return nil, nil, fmt.Errorf("%w: api key %d v%d: %v", errFrame, key, version, err)
	}
	if key == apiKeyProduce {
		rc.produceAfter, rc.produceDone = c.lastProduce, make(chan struct{})
		c.lastProduce = rc.produceDone
	}
	return sl, func() { c.handle(sl, a, rc, req) }, nil
}

// parseHeaderRest parses the request header after the correlation id:
// client id, and tagged fields for a flexible (v2) header.
func parseHeaderRest(b []byte, flexible bool) (rest []byte, clientID *string, err error) {
	r := kbin.Reader{Src: b}
	clientID = r.NullableString()
	if flexible {
		for n := r.Uvarint(); n > 0 && r.Ok(); n-- {
			r.Uvarint() // tag
			r.Span(int(r.Uvarint()))
		}
	}
	if err := r.Complete(); err != nil {
		return nil, nil, fmt.Errorf("%w: request header: %v", errFrame, err)
	}
	return r.Src, clientID, nil
}

// handle runs one handler. A panic is turned into a connection-closing
// error rather than taking the process down.
func (c *conn) handle(sl *slot, a api, rc *reqCtx, req kmsg.Request) {
	defer c.s.conns.Done()
	defer close(sl.done)
	defer c.s.observe(sl, rc, req) // after the handler and recover, before done
	c.s.handling.Add(1)
	defer c.s.handling.Add(-1)
	// K4: never leave the next produce waiting, whatever happens.
	defer rc.appended()
	defer func() {
		if p := recover(); p != nil {
			sl.resp, sl.err = nil, fmt.Errorf("kafka: handler panic: %v", p)
			c.log.Error("handler-panic", zap.Int16("api-key", sl.key),
				zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
		}
	}()
	sl.resp, sl.err = a.handle(c.s, rc, req)
}

func (c *conn) writeLoop() {
	defer c.s.conns.Done()
	defer c.s.connDone(c)
	var buf []byte
	for sl := range c.queue {
		ok := c.writeSlot(sl, &buf)
		if !ok {
			c.kill()
			<-sl.done // the handler still owns the request's bytes
		}
		c.finish(sl)
		if !ok {
			c.drain()
			return
		}
		if cap(buf) > 1<<20 {
			buf = nil // do not pin a large response's buffer
		}
	}
	c.kill()
}

// writeSlot waits for one slot's response and writes it; false means the
// connection is done (dead, or a handler error closes it: K3).
func (c *conn) writeSlot(sl *slot, buf *[]byte) bool {
	select {
	case <-sl.done:
	case <-c.ctx.Done():
		return false
	}
	if sl.err != nil {
		c.log.Info("request-failed", zap.Int16("api-key", sl.key),
			zap.Int16("api-version", sl.version), zap.Error(sl.err))
		return false
	}
	if sl.resp == nil {
		return true // K5
	}
	var out net.Buffers
	n := 0
	if br, ok := sl.resp.(*batchResponse); ok {
		// Fetch: record batches by reference, one writev (fetch_wire.go).
		*buf, out, n = br.appendSegments((*buf)[:0], sl)
	} else {
		*buf = appendResponse((*buf)[:0], sl)
		out, n = net.Buffers{*buf}, len(*buf)
	}
	// K7: a client that reads nothing for connections.max.idle.ms is gone.
	c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.ConnectionsMaxIdle))
	if _, err := out.WriteTo(c.nc); err != nil {
		c.log.Debug("connection-write-failed", zap.Error(err))
		return false
	}
	c.s.observeResponse(sl.key, n)
	c.touch()
	return true
}

// finish returns a finished slot's bytes to the budget (K6).
func (c *conn) finish(sl *slot) {
	c.s.budget.release(sl.bytes)
	sl.bytes = 0
	c.inFlight.Add(-1)
}

// drain finishes every slot still queued on a dead connection, each once
// its handler is done (the connection's context is cancelled, so waiting
// handlers return promptly), so that their bytes return to the budget.
func (c *conn) drain() {
	for sl := range c.queue {
		<-sl.done
		c.finish(sl)
	}
}

// appendResponse frames one response: size, correlation id, tagged fields
// for a flexible (v1) header — except ApiVersions, whose response header is
// always v0 so that a client can parse it before it knows our versions.
func appendResponse(dst []byte, sl *slot) []byte {
	dst = append(dst, 0, 0, 0, 0)
	dst = kbin.AppendInt32(dst, sl.corrID)
	sl.resp.SetVersion(sl.version)
	if sl.resp.IsFlexible() && sl.key != apiKeyApiVersions {
		dst = append(dst, 0)
	}
	dst = sl.resp.AppendTo(dst)
	binary.BigEndian.PutUint32(dst, uint32(len(dst)-4))
	return dst
}

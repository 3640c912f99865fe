package kafka

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgateway/kgateway/kafka/connauth"
	"github.com/kgateway/kgateway/kafka/sendfile"
	"github.com/kgateway/kgateway/kafka/wire"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// minFrame is the smallest request body (kafka/wire).
const minFrame = wire.MinRequest

// errFrame marks a frame that cannot be a Kafka request (the frame size limit).
var errFrame = errors.New("kafka: malformed frame")

// conn is one client connection. The reader goroutine parses frames and
// starts a handler per request; each handler waits for its turn (the
// previous request has taken effect, requests in effect one at a time), and the writer goroutine writes
// responses in the order of queue, which is request order (responses in request order).
type conn struct {
	s   *Server
	nc  net.Conn // a *tls.Conn on an SSL or SASL_SSL listener
	log *zap.Logger
	// lis is the listener the connection came in on (the per-listener advertised address).
	lis *Listener
	// auth is the connection's TLS principal and SASL state (sasl.go).
	auth connauth.State

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
	// ip is the client's address, as max.connections.per.ip counts it.
	ip string

	// last is the connection's latest request with a handler: the next
	// one starts when it has taken effect (requests in effect one at a time). Reader goroutine only.
	last *reqCtx

	// inFlight counts slots queued and not yet finished by the writer; a
	// connection with requests in flight is never idle (the idle connection timeout).
	inFlight atomic.Int64
	// active is when a byte was last read or written (unix nanoseconds).
	active atomic.Int64
	// frameStart is when the body of the frame being read started to be
	// read (zero between frames); a frame must complete within
	// connections.max.idle.ms of it (the idle connection timeout). Reader goroutine only.
	frameStart time.Time

	// muted is when a throttled connection may be read again (KIP-219):
	// set by the writer, waited for by the reader.
	muted wire.Mute
	// quotaLimited is set once a quota applies to the connection's
	// client: from then on, as in Kafka, a frame is read only once the
	// request before it is answered, so that its throttle (and mute) is
	// known before the next request is taken (readAhead).
	quotaLimited atomic.Bool

	closeOnce sync.Once

	// software is the client software name and version of the
	// connection's ApiVersions v3+ (KIP-511; nil: not sent), for the
	// client telemetry selectors (KIP-714).
	software atomic.Pointer[[2]string]
}

// touch records activity for the idle check (the idle connection timeout).
func (c *conn) touch() { c.active.Store(time.Now().UnixNano()) }

func (c *conn) lastActive() time.Time { return time.Unix(0, c.active.Load()) }

// idleConn is a connection as its wire.IdleReader sees it (the idle connection timeout).
type idleConn struct{ c *conn }

func (i idleConn) Read(p []byte) (int, error)        { return i.c.nc.Read(p) }
func (i idleConn) SetReadDeadline(t time.Time) error { return i.c.nc.SetReadDeadline(t) }
func (i idleConn) FrameStart() time.Time             { return i.c.frameStart }
func (i idleConn) Touch()                            { i.c.touch() }
func (i idleConn) LastActive() time.Time             { return i.c.lastActive() }
func (i idleConn) Busy() bool                        { return i.c.inFlight.Load() > 0 }
func (i idleConn) Closing() bool                     { return i.c.s.isClosing() }

// slot is one request's place in the response order.
type slot struct {
	done    chan struct{} // closed when resp/err are set
	key     int16
	version int16
	corrID  int32
	resp    kmsg.Response // nil: send nothing (acks=0)
	err     error         // non-nil: close the connection (a Go error closes the connection)
	// closeAfter closes the connection once resp is written (the pre-authentication gate, the failed-authentication delay).
	closeAfter bool
	// raw: resp is a SaslAuthenticate answer to a bare token, written
	// as a bare frame (SaslHandshake v0).
	raw bool
	// throttle is the client's quota throttle time (quotas.go): the
	// connection is muted that long once resp is written, or, when the
	// client does not throttle itself (selfThrottle false, before
	// KIP-219), resp is written only after it.
	throttle     time.Duration
	selfThrottle bool
}

// reqCtx is what a handler knows about its request.
type reqCtx struct {
	ctx      context.Context // done when the connection dies
	conn     *conn
	version  int16
	clientID *string
	key      int16
	// turn is its place in the connection's order (requests in effect
	// one at a time): it starts once its predecessor has taken effect;
	// its answer is the slot's done.
	turn wire.Turn
	// charge is what the request holds of queued.max.request.bytes (the request memory budget):
	// its frame, and for a decoded request the memory decoding and
	// answering it may take (the decoded-request bound). Returned by release.
	charge int64
	stats  reqStats // observe.go
	// closeAfter is set by a handler whose answer ends the connection.
	closeAfter bool
}

// appended is release for a produce handler: it calls it as soon as its
// batches are written, before waiting for them to be durable, so that the
// connection's next request starts now and a next produce's writes join
// the same group commit (requests in effect one at a time).
func (rc *reqCtx) appended() { rc.release() }

// release marks the request as having taken effect: the connection's next
// request may start (requests in effect one at a time), and the request's bytes go back to the budget
// (the request memory budget): the handler is done with its frame. handle calls it in any case
// when the handler ends.
func (rc *reqCtx) release() {
	rc.turn.Release(func() { rc.conn.s.budget.Release(rc.charge) })
}

// waitTurn waits until the request's predecessor on the connection has
// taken effect (requests in effect one at a time); the wait counts as
// waiting, not handling.
func (rc *reqCtx) waitTurn() { rc.stats.waited += rc.turn.Wait() }

func newConn(s *Server, nc net.Conn, l *Listener) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	c := &conn{
		s: s, nc: nc, ctx: ctx, cancel: cancel, lis: l,
		log:   s.log.With(zap.Stringer("remote", nc.RemoteAddr())),
		queue: make(chan *slot, s.cfg.MaxInFlightPerConn),
	}
	c.host, c.port = wire.AdvertisedFor(nc, l.Advertised)
	if l.Protocol.UsesTLS() {
		// The handshake runs on the reader goroutine (handshakeTLS).
		c.nc = tls.Server(nc, l.TLS)
	}
	c.touch()
	return c
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
	if err := c.handshakeTLS(); err != nil { // TLS handshake timeouts and certificate reloads
		c.log.Info("connection-tls-failed", zap.String("listener", c.lis.Name), zap.Error(err))
		c.kill()
		return
	}
	br := bufio.NewReaderSize(&wire.IdleReader{C: idleConn{c}, Idle: c.s.cfg.ConnectionsMaxIdle}, 32<<10)
	for {
		// Wait for the next frame to begin (or the peer to leave: a
		// handler waiting for this connection's death must learn of it),
		// then for its turn to be read.
		_, err := br.Peek(1)
		if err == nil && (!c.readAhead() || !c.muted.Wait(c.ctx.Done(), c.s.closing)) {
			return
		}
		var body []byte
		var charge int64
		if err == nil {
			body, charge, err = c.readFrame(br)
		}
		if err != nil {
			if !c.s.isClosing() {
				// Peer gone, idle or bad frame: nobody will read responses.
				c.logReadErr(err)
				c.kill()
			}
			return
		}
		sl, start, err := c.dispatch(body, charge)
		if err != nil {
			c.log.Info("request-rejected", zap.Error(err))
			c.kill()
			return
		}
		c.inFlight.Add(1)
		if start != nil {
			// Started before it is queued: a handler always runs, so its
			// bytes return to the budget and its successor gets its turn
			// even if the connection dies now.
			c.s.conns.Add(1)
			go start()
		}
		select {
		case c.queue <- sl:
		case <-c.ctx.Done():
			c.finish(sl)
			return
		}
	}
}

// readAhead waits until the reader may read the next frame, false if the
// connection died first (wire.ReadAfter). A frame is read only once the
// latest request has taken effect, so that nothing a client pipelines
// behind a long wait (a long-poll Fetch, a JoinGroup) holds
// queued.max.request.bytes meanwhile (the request memory budget). One exception keeps pipelined
// produce fast: behind a Produce that has started, the next frame is read
// (and waits its turn decoded), so it appends the moment the Produce
// before it has written its batches (requests in effect one at a time). A connection thus holds at most
// two frames.
func (c *conn) readAhead() bool {
	if c.last == nil {
		return true
	}
	return wire.ReadAfter(&c.last.turn, c.ctx.Done(), c.quotaLimited.Load(), c.last.key == apiKeyProduce)
}

func (c *conn) logReadErr(err error) {
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		return
	}
	if errors.Is(err, wire.ErrIdle) {
		c.log.Debug("connection-idle-closed")
		return
	}
	c.log.Info("connection-read-failed", zap.Error(err))
}

// dispatch parses a request and returns its slot and the function that
// handles it (nil when the slot is already complete). charge is what the
// frame holds of the budget: on success the request owns it, on error it
// is returned.
func (c *conn) dispatch(body []byte, charge int64) (*slot, func(), error) {
	sl, rc, req, a, err := c.parse(body, charge)
	if err != nil || rc == nil {
		c.s.budget.Release(charge) // parse returned anything it took beyond
		return sl, nil, err
	}
	if c.last != nil {
		rc.turn.Follow(&c.last.turn)
	}
	c.last = rc
	return sl, func() { c.handle(sl, a, rc, req) }, nil
}

// parse decodes a frame: its slot, and its request context, request and
// API (all nil when the slot is already complete).
func (c *conn) parse(body []byte, charge int64) (*slot, *reqCtx, kmsg.Request, api, error) {
	if c.rawToken() {
		return c.parseRawToken(body, charge)
	}
	h := wire.ParseRequestHeader(body)
	key, version := h.Key, h.Version
	if err := c.admit(key); err != nil { // The pre-authentication gate, KIP-368 re-authentication
		return nil, nil, nil, api{}, err
	}
	sl := &slot{done: make(chan struct{}), key: key, version: version, corrID: h.CorrID}
	a, ok := c.s.lookupAPI(key) // No share groups without States: what this server advertises
	if !ok {
		return nil, nil, nil, a, fmt.Errorf("%w: api key %d not supported", errFrame, key)
	}
	if version < a.min || version > a.max {
		if key == apiKeyApiVersions && version > a.max {
			// The client learns our versions from a v0 answer and retries.
			sl.version = 0
			sl.resp = apiVersionsUnsupported()
			close(sl.done)
			return sl, nil, nil, a, nil
		}
		return nil, nil, nil, a, fmt.Errorf("%w: api key %d version %d outside [%d, %d]", errFrame, key, version, a.min, a.max)
	}
	req := kmsg.RequestForKey(key)
	req.SetVersion(version)
	rc := &reqCtx{ctx: c.ctx, conn: c, version: version, key: key}
	rc.turn.Init(sl.done)
	rc.stats.size, rc.stats.arrived = len(body), time.Now()
	rest, clientID, err := wire.ParseHeaderRest(body[8:], req.IsFlexible())
	if err != nil {
		return nil, nil, nil, a, fmt.Errorf("%w: request header: %v", errFrame, err)
	}
	rc.clientID = clientID
	rc.charge = charge
	if key != apiKeyProduce { // The decoded-request bound: charged before it is decoded
		extra, err := c.chargeDecode(charge, len(body))
		if err != nil {
			return nil, nil, nil, a, err
		}
		rc.charge += extra
	}
	if err := req.ReadFrom(rest); err != nil {
		c.s.budget.Release(rc.charge - charge)
		return nil, nil, nil, a, fmt.Errorf("%w: api key %d v%d: %v", errFrame, key, version, err)
	}
	if r, ok := req.(*kmsg.ProduceRequest); ok {
		extra, err := c.chargeProduce(charge, r, len(body))
		if err != nil {
			return nil, nil, nil, a, err
		}
		rc.charge += extra
	}
	return sl, rc, req, a, nil
}

// parseRawToken makes a bare SASL token (after SaslHandshake v0) a
// SaslAuthenticate request whose answer is written bare.
func (c *conn) parseRawToken(body []byte, charge int64) (*slot, *reqCtx, kmsg.Request, api, error) {
	a, _ := lookupAPI(apiKeySaslAuthenticate)
	sl := &slot{done: make(chan struct{}), key: apiKeySaslAuthenticate, raw: true}
	rc := &reqCtx{ctx: c.ctx, conn: c, key: apiKeySaslAuthenticate, charge: charge}
	rc.turn.Init(sl.done)
	rc.stats.size, rc.stats.arrived = len(body), time.Now()
	return sl, rc, rawAuthenticate(body), a, nil
}

// handle runs one handler once its turn has come (requests in effect one at a time). A panic is turned
// into a connection-closing error rather than taking the process down.
func (c *conn) handle(sl *slot, a api, rc *reqCtx, req kmsg.Request) {
	defer c.s.conns.Done()
	defer close(sl.done)
	defer c.s.observe(sl, rc, req) // after the handler and recover, before done
	// Requests in effect one at a time: never leave the next request waiting, whatever happens.
	defer rc.release()
	rc.waitTurn()
	c.s.handling.Add(1)
	defer c.s.handling.Add(-1)
	defer func() {
		if p := recover(); p != nil {
			sl.resp, sl.err = nil, fmt.Errorf("kafka: handler panic: %v", p)
			c.log.Error("handler-panic", zap.Int16("api-key", sl.key),
				zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
		}
	}()
	c.s.beforeQuotas(rc, req)
	sl.resp, sl.err = c.s.authorizedHandle(a, rc, req) // Per-API authorization
	sl.closeAfter = rc.closeAfter
	if sl.err == nil {
		sl.throttle, sl.selfThrottle = c.s.applyQuotas(rc, req, sl.resp)
		if sl.throttle > 0 && sl.selfThrottle {
			// Muted now, before the write too: the client may answer the
			// response before the writer runs again (which mutes again
			// from the end of the write, KIP-219).
			c.muted.For(sl.throttle)
		}
	}
}

func (c *conn) writeLoop() {
	defer c.s.conns.Done()
	defer c.s.connDone(c)
	var buf []byte
	for sl := range c.queue {
		ok := c.writeSlot(sl, &buf)
		if !ok {
			c.kill()
			<-sl.done // let the handler end before the slot is finished
		}
		releaseResp(sl)
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
// connection is done (dead, or a handler error closes it: a Go error closes the connection).
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
	if sl.throttle > 0 && !sl.selfThrottle && !wire.Delay(sl.throttle, c.ctx.Done()) {
		return false
	}
	if sl.resp == nil {
		c.muted.For(sl.throttle) // No response for acks=0; acks=0 is muted as Kafka does
		return true
	}
	var out net.Buffers
	n := 0
	if br, ok := sl.resp.(*batchResponse); ok {
		// Fetch: record batches by reference, from their files with
		// sendfile where the connection allows (kafka/fetchwire).
		var pieces []sendfile.Piece
		*buf, pieces, n = br.appendSegments((*buf)[:0], sl)
		c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.ConnectionsMaxIdle)) // The idle connection timeout
		if _, err := sendfile.Write(c.nc, pieces, c.sendfile()); err != nil {
			c.log.Debug("connection-write-failed", zap.Error(err))
			return false
		}
		c.s.observeResponse(sl.key, n)
		c.touch()
		return !sl.closeAfter
	}
	if sl.raw {
		r := sl.resp.(*kmsg.SASLAuthenticateResponse)
		if r.ErrorCode != 0 {
			return false // a bare exchange has no way to say why (the failed-authentication delay)
		}
		*buf = wire.AppendRaw((*buf)[:0], r.SASLAuthBytes)
		out, n = net.Buffers{*buf}, len(*buf)
	} else {
		*buf = appendResponse((*buf)[:0], sl)
		out, n = net.Buffers{*buf}, len(*buf)
	}
	// The idle connection timeout: a client that reads nothing for connections.max.idle.ms is gone.
	c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.ConnectionsMaxIdle))
	if _, err := out.WriteTo(c.nc); err != nil {
		c.log.Debug("connection-write-failed", zap.Error(err))
		return false
	}
	c.s.observeResponse(sl.key, n)
	c.touch()
	if sl.throttle > 0 && sl.selfThrottle {
		c.muted.For(sl.throttle) // KIP-219: respond first, then mute
	}
	return !sl.closeAfter
}

// finish counts a slot out of the connection's in-flight requests (the idle connection timeout).
// Its budget bytes were returned when its handler released them (the request memory budget).
func (c *conn) finish(sl *slot) {
	c.inFlight.Add(-1)
}

// drain finishes every slot still queued on a dead connection, each once
// its handler is done (the connection's context is cancelled, so waiting
// handlers return promptly).
func (c *conn) drain() {
	for sl := range c.queue {
		<-sl.done
		releaseResp(sl)
		c.finish(sl)
	}
}

// sendfile reports whether fetch responses send file-backed batches with
// sendfile: fetch.sendfile.enable, on a connection that can (plaintext
// TCP on Linux).
func (c *conn) sendfile() bool { return c.s.cfg.FetchSendfile && sendfile.Supported(c.nc) }

// releaseResp frees what a written (or dropped) response still holds: a
// fetch's leased reads (kafka/fetchwire). Only once its handler is done.
func releaseResp(sl *slot) {
	if br, ok := sl.resp.(*batchResponse); ok {
		br.wire.Release()
	}
}

// appendResponse frames one response (kafka/wire); ApiVersions' response
// header is always v0.
func appendResponse(dst []byte, sl *slot) []byte {
	return wire.AppendResponse(dst, sl.corrID, sl.version, sl.resp, sl.key == apiKeyApiVersions)
}

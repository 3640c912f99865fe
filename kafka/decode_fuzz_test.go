package kafka

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"reflect"
	"testing"

	"github.com/kgateway/kgateway/kafka/wire"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// fuzzConn is a connection with no socket: enough for readFrame and
// dispatch, the server's whole decode path (the frame size limit, a Go error closes the connection).
func fuzzConn(t testing.TB, maxRequest int32) *conn {
	s, err := NewServer(Config{Resolver: new(resolver.Resolver), MaxRequestBytes: maxRequest, Telemetry: testTelemetry(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c := &conn{s: s, log: zap.NewNop()}
	c.startLoop(ctx)
	return c
}

// requestFrameBody is a request frame's body: header v1 (or v2 when
// flexible) then the request.
func requestFrameBody(key, version int16, corrID int32, body []byte) []byte {
	b := kbin.AppendInt16(nil, key)
	b = kbin.AppendInt16(b, version)
	b = kbin.AppendInt32(b, corrID)
	b = kbin.AppendNullableString(b, nil)
	req := kmsg.RequestForKey(key)
	if req != nil {
		req.SetVersion(version)
		if req.IsFlexible() {
			b = append(b, 0)
		}
	}
	return append(b, body...)
}

// FuzzRequestDecode runs the server's decode path (dispatch: header, key
// and version checks, kmsg decoding) on arbitrary bodies for every
// advertised (key, version): it must never panic, and a request it accepts
// gets a slot carrying its key, version and correlation id. The oracle: the
// server accepts exactly the bodies that decode, and every accepted request
// survives decode -> encode -> decode unchanged (roundTrip).
func FuzzRequestDecode(f *testing.F) {
	addRichSeeds(f)
	for i, a := range apis {
		for v := a.min; v <= a.max; v++ {
			req := kmsg.RequestForKey(a.key)
			req.SetVersion(v)
			f.Add(uint8(i), uint8(v-a.min), req.AppendTo(nil))
		}
	}
	f.Fuzz(func(t *testing.T, idx, ver uint8, body []byte) {
		a := apis[int(idx)%len(apis)]
		v := a.min + int16(ver)%(a.max-a.min+1)
		c := fuzzConn(t, DefaultMaxRequestBytes)
		sl, start, err := c.loop.Dispatch(requestFrameBody(a.key, v, 42, body), 0)
		decodes := kmsg.RequestForKey(a.key)
		decodes.SetVersion(v)
		decErr := decodes.ReadFrom(append([]byte(nil), body...))
		if (err == nil) != (decErr == nil) {
			t.Fatalf("key %d v%d: server says %v, the body decodes with %v", a.key, v, err, decErr)
		}
		if err != nil {
			return // the connection would be closed: a clean refusal
		}
		if err := roundTrip(decodes); err != nil {
			t.Fatalf("key %d v%d: %v", a.key, v, err)
		}
		if sl.Key != a.key || sl.Version != v || sl.CorrID != 42 {
			t.Fatalf("slot %+v for key %d v%d", sl, a.key, v)
		}
		if start == nil && sl.Resp == nil {
			t.Fatal("a slot with neither a handler nor a response")
		}
	})
}

// roundTrip encodes a decoded request and decodes it again: the two
// decoded forms are equal and so are their encodings.
func roundTrip(req kmsg.Request) error {
	enc := req.AppendTo(nil)
	again := kmsg.RequestForKey(req.Key())
	again.SetVersion(req.GetVersion())
	if err := again.ReadFrom(enc); err != nil {
		return fmt.Errorf("re-decoding its own encoding: %v", err)
	}
	if !reflect.DeepEqual(req, again) {
		return fmt.Errorf("decode -> encode -> decode changed it:\n%+v\n%+v", req, again)
	}
	if enc2 := again.AppendTo(nil); !bytes.Equal(enc, enc2) {
		return fmt.Errorf("encodings differ:\n%x\n%x", enc, enc2)
	}
	return nil
}

// FuzzFrames feeds an arbitrary byte stream to one connection's reader
// (readFrame then dispatch, frame after frame, until the first error that
// would close it): no panic, no frame above the limit read, and the byte
// budget (the request memory budget) returned for every frame refused.
func FuzzFrames(f *testing.F) {
	ok := requestFrameBody(apiKeyApiVersions, 3, 1, apiVersionsReq(3).AppendTo(nil))
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(ok)))
	f.Add(append(frame, ok...))
	f.Add(append(append(frame, ok...), frame...))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 10, 0x7f, 0, 0, 0, 0, 0, 1, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 14, 0, 3, 0, 1, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe})
	f.Fuzz(func(t *testing.T, stream []byte) {
		const limit = 1 << 16
		c := fuzzConn(t, limit)
		br := bufio.NewReader(bytes.NewReader(stream))
		var held int64 // what accepted requests own until their handlers end
		for {
			body, charge, err := c.loop.ReadFrame(br)
			if err != nil {
				break
			}
			if len(body) > limit || len(body) < wire.MinRequest {
				t.Fatalf("read a %d-byte frame (limit %d)", len(body), limit)
			}
			_, r, err := c.loop.Dispatch(body, charge)
			if err != nil {
				break
			}
			if r != nil {
				held += r.Charge() // the frame's, and the decoded-request bound's
			}
		}
		if n := c.s.budget.InUse(); n != held {
			t.Fatalf("%d budget bytes taken, %d owned by requests", n, held)
		}
	})
}

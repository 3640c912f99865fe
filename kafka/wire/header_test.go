package wire

import (
	"bytes"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
)

// TestParseRequestHeader reads the fixed fields and, for a flexible
// header, skips the tagged fields to the request body.
func TestParseRequestHeader(t *testing.T) {
	body := []byte{0, 3, 0, 12, 0, 0, 0, 7}
	body = kbin.AppendString(body, "cli")
	body = append(body, 1, 5, 2, 'x', 'y') // one tag (5) of two bytes
	body = append(body, 0xAA)
	h := ParseRequestHeader(body)
	if h != (RequestHeader{Key: 3, Version: 12, CorrID: 7}) {
		t.Fatalf("header %+v", h)
	}
	rest, id, err := ParseHeaderRest(body[8:], true)
	if err != nil || id == nil || *id != "cli" || !bytes.Equal(rest, []byte{0xAA}) {
		t.Fatalf("rest %x, id %v, err %v", rest, id, err)
	}
	if _, _, err := ParseHeaderRest([]byte{0, 9, 'a'}, false); err == nil {
		t.Fatal("a client id longer than the header parsed")
	}
}

type body struct {
	version  int16
	flexible bool
}

func (b *body) SetVersion(v int16)         { b.version = v }
func (b *body) IsFlexible() bool           { return b.flexible }
func (b *body) AppendTo(dst []byte) []byte { return append(dst, byte(b.version)) }

// TestAppendResponse frames size, correlation id, the flexible header's
// tagged fields unless v0Header, and the body at the version.
func TestAppendResponse(t *testing.T) {
	got := AppendResponse(nil, 9, 4, &body{flexible: true}, false)
	if want := []byte{0, 0, 0, 6, 0, 0, 0, 9, 0, 4}; !bytes.Equal(got, want) {
		t.Fatalf("flexible: %x, want %x", got, want)
	}
	got = AppendResponse(nil, 9, 4, &body{flexible: true}, true)
	if want := []byte{0, 0, 0, 5, 0, 0, 0, 9, 4}; !bytes.Equal(got, want) {
		t.Fatalf("v0 header: %x, want %x", got, want)
	}
	if got := AppendRaw(nil, []byte("ab")); !bytes.Equal(got, []byte{0, 0, 0, 2, 'a', 'b'}) {
		t.Fatalf("raw: %x", got)
	}
}

// TestMute keeps the longer of two mutes, and a dead connection ends a
// wait.
func TestMute(t *testing.T) {
	var m Mute
	if !m.Wait(nil, nil) {
		t.Fatal("an unmuted connection waited")
	}
	m.For(time.Hour)
	m.For(time.Millisecond)
	dead := make(chan struct{})
	close(dead)
	if m.Wait(dead, nil) {
		t.Fatal("a dead connection's wait said the mute was over")
	}
	if Delay(time.Hour, dead) {
		t.Fatal("a dead connection's delay said it waited")
	}
	closing := make(chan struct{})
	close(closing)
	if !m.Wait(nil, closing) {
		t.Fatal("shutdown did not end the wait")
	}
}

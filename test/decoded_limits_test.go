package test

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"testing"
	"time"
)

// arrayHeavy builds request frames that name millions of elements in
// about size bytes, by hand (kmsg would take gigabytes in the test).
type arrayHeavy struct {
	name      string
	key, ver  int16
	frameBody func(size int) []byte
}

func rawHeader(key, ver int16) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(ver))
	b = binary.BigEndian.AppendUint32(b, 7) // correlation id
	return binary.BigEndian.AppendUint16(b, 0xffff)
}

func appendStr(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// topicNames: Metadata v4 (no auto-creation) naming n topics, each
// distinct when distinct, else all "".
func metadataFrame(size int, distinct bool) []byte {
	per := 2
	if distinct {
		per = 2 + 6
	}
	n := size / per
	b := rawHeader(3, 4)
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	for i := range n {
		if distinct {
			b = appendStr(b, fmt.Sprintf("t%05s", strconv.FormatInt(int64(i), 36)))
		} else {
			b = appendStr(b, "")
		}
	}
	return append(b, 0) // allow_auto_topic_creation false
}

// partitionsFrame: one topic with n partitions of per bytes each
// (partition i, then per-4 zero bytes), in a non-flexible request whose
// fields before the topics array are pre and after it post.
func partitionsFrame(key, ver int16, pre []byte, per int, post []byte, size int) []byte {
	n := size / per
	b := append(rawHeader(key, ver), pre...)
	b = binary.BigEndian.AppendUint32(b, 1)
	b = appendStr(b, "heavy")
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	zero := make([]byte, per-4)
	for i := range n {
		b = binary.BigEndian.AppendUint32(b, uint32(i))
		b = append(b, zero...)
	}
	return append(b, post...)
}

func arrayHeavyFrames(size int) map[string][]byte {
	group := appendStr(nil, "heavy-group")
	commitPre := binary.BigEndian.AppendUint32(append([]byte(nil), group...), 0xffffffff) // generation -1
	commitPre = appendStr(commitPre, "")
	commitPre = binary.BigEndian.AppendUint64(commitPre, ^uint64(0)) // retention -1
	frames := map[string][]byte{
		"Metadata same name":      metadataFrame(size, false),
		"Metadata distinct names": metadataFrame(size, true),
		// ListOffsets v1: replica id; partition, timestamp.
		"ListOffsets": partitionsFrame(2, 1, []byte{0xff, 0xff, 0xff, 0xff}, 12, nil, size),
		// OffsetCommit v2: partition, offset, metadata (null: ffff).
		"OffsetCommit": partitionsFrame(8, 2, commitPre, 14, nil, size),
		// OffsetFetch v1: partition.
		"OffsetFetch": partitionsFrame(9, 1, group, 4, nil, size),
		// DeleteRecords v0: partition, offset; timeout.
		"DeleteRecords": partitionsFrame(21, 0, nil, 12, []byte{0, 0, 0, 1}, size),
		// Produce v3: transactional id null, acks 1, timeout; partition,
		// records null (ffffffff).
		"Produce": partitionsFrame(0, 3, []byte{0xff, 0xff, 0, 1, 0, 0, 0x27, 0x10}, 8, nil, size),
	}
	for name, body := range frames {
		// The 0xff-filled "records" of Produce: a null bytes field.
		if name == "Produce" {
			for i := len(rawHeader(0, 3)) + 8 + 4 + 2 + len("heavy") + 4; i+8 <= len(body); i += 8 {
				copy(body[i+4:], []byte{0xff, 0xff, 0xff, 0xff})
			}
		}
		frames[name] = binary.BigEndian.AppendUint32(nil, uint32(len(body)))
		frames[name] = append(frames[name], body...)
	}
	return frames
}

// sendAndDrain sends one frame and reads until the server answers (one
// response, discarded) or closes the connection.
func sendAndDrain(t *testing.T, addr string, frame []byte) string {
	c, err := net.DialTimeout("tcp", addr, testDeadline)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(4 * testDeadline))
	if _, err := c.Write(frame); err != nil {
		return "closed while sending: " + err.Error()
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return "closed: " + err.Error()
	}
	n, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(size[:])))
	if err != nil {
		return fmt.Sprintf("response cut at %d bytes: %v", n, err)
	}
	return fmt.Sprintf("answered, %d bytes", n)
}

// The decoded-request bound: array-heavy requests are bounded once decoded and answered. Each
// request below names millions of elements; before the decoded-request bound the first alone
// (20 MB naming 10 M topics) took the server to 4.4 GB. Now a request is
// charged 64 times its bytes to queued.max.request.bytes (500 MiB): the
// 20 MB ones are refused (connection closed), the 7 MB one is answered
// (peak measured at about 460 MB), and the server serves on. The limit
// is about twice the peak measured, read after connections did real work.
func TestArrayHeavyRequestsRSSBounded(t *testing.T) {
	p := startBinary(t, t.TempDir())
	pid := p.cmd.Process.Pid
	servedBeside(t, p.addr, "rss-work", "nothing")
	before := procMemKB(t, pid, "VmHWM")
	for _, c := range []struct {
		name string
		size int
	}{
		{"Metadata same name", 20 << 20},
		{"Metadata distinct names", 7 << 20},
		{"OffsetFetch", 20 << 20},
		{"Produce", 20 << 20},
	} {
		frame := arrayHeavyFrames(c.size)[c.name]
		res := sendAndDrain(t, p.addr, frame)
		t.Logf("%s (%d-byte frame): %s; VmHWM %d KiB", c.name, len(frame), res, procMemKB(t, pid, "VmHWM"))
	}
	servedBeside(t, p.addr, "rss-after", "array-heavy requests")
	peak := procMemKB(t, pid, "VmHWM")
	t.Logf("VmHWM %d KiB after real work, %d KiB after the array-heavy requests", before, peak)
	if peak > 1<<20 {
		t.Fatalf("peak RSS %d KiB: array-heavy requests not bounded", peak)
	}
}

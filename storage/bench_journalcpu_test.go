package storage

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/kgateway/kgateway/storage/fsys"
)

// BenchmarkJournaledGroupCPU: groups of one entry to each of 32 logs, as
// a Produce of 32 partitions makes, with entries small enough to be
// journaled or not (1 KiB up to three times DefaultJournalBytes: over
// it, journaled only as a wide group, journalBound), written with the
// suffix CRC a Produce's batch gives.
// Reports the process's CPU seconds (user and system) per GB of entries and the share
// of the bytes whose group was journaled.
func BenchmarkJournaledGroupCPU(b *testing.B) {
	for _, size := range []int{1 << 10, 8 << 10, 24 << 10, 48 << 10, 96 << 10} {
		b.Run(byteSize(size), func(b *testing.B) {
			var journaled, all atomic.Int64
			s := newStore(b, b.TempDir(), Options{JournalBytes: DefaultJournalBytes,
				BulkEntryBytes: DefaultBulkEntryBytes, OnCommit: func(st CommitStats) {
					all.Add(st.Bytes)
					if st.Journaled {
						journaled.Add(st.Bytes)
					}
				}})
			defer s.Close()
			const logs = 32
			ids := make([]LogID, logs)
			for i := range ids {
				ids[i] = LogID(i + 1)
			}
			if err := s.CreateLogs(ids...); err != nil {
				b.Fatal(err)
			}
			payload := make([]byte, size)
			// As the resolver gives it: the batch's CRC, verified, of
			// its bytes from 21 (the frame CRC is joined from it).
			opts := AppendOptions{SuffixFrom: 21, SuffixCRC: crc32.Checksum(payload[21:], castagnoli)}
			ps := make([]*Pending, 0, logs)
			b.SetBytes(int64(size * logs))
			start := cpuNow()
			b.ResetTimer()
			for range b.N {
				ps = ps[:0]
				for _, id := range ids {
					p, err := s.Write(id, 1, payload, opts)
					if err != nil {
						b.Fatal(err)
					}
					ps = append(ps, p)
				}
				for _, p := range ps {
					if err := p.Wait(); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.StopTimer()
			gb := float64(b.N*size*logs) / 1e9
			b.ReportMetric((cpuNow()-start)/gb, "cpu-s/GB")
			if n := all.Load(); n > 0 {
				b.ReportMetric(float64(journaled.Load())/float64(n), "journaled")
			}
		})
	}
}

func byteSize(n int) string {
	if n >= 1<<10 {
		return itoa(n>>10) + "KiB"
	}
	return itoa(n) + "B"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// reportCPU reports the CPU seconds per GB of b's bytes since start.
func reportCPU(b *testing.B, start float64, perOp int) {
	b.ReportMetric((cpuNow()-start)/(float64(b.N)*float64(perOp)/1e9), "cpu-s/GB")
}

// cpuNow is the process's user and system CPU seconds so far.
func cpuNow() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// BenchmarkJournalRecord: one journal record of 32 frames of 24 KiB
// (a Produce of 32 partitions journaled), built and written over the
// same cached bytes of a real file: "joined" as the store writes it
// (journalrecord.go), "gathered" with every frame copied into one
// buffer and the buffer checksummed, as records were written before.
func BenchmarkJournalRecord(b *testing.B) {
	const frames, size = 32, 24 << 10
	f, err := fsys.OS().OpenFile(filepath.Join(b.TempDir(), "j"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	j := &journal{epoch: 1}
	group := make([]*Pending, frames)
	for i := range group {
		p := &Pending{log: &logState{id: LogID(i + 1)}, payload: make([]byte, size)}
		p.hdr.Size = size
		encodeFrameHeader(p.frame[:], 0, 1, 0, p.payload, suffixCRC{})
		group[i] = p
	}
	b.Run("joined", func(b *testing.B) {
		b.SetBytes(frames * size)
		defer reportCPU(b, cpuNow(), frames*size)
		for range b.N {
			bufs, _ := j.buildRecord(group, nil)
			if err := writeRecord(f, bufs, 0); err != nil {
				b.Fatal(err)
			}
			j.releaseRecord()
		}
	})
	b.Run("gathered", func(b *testing.B) {
		b.SetBytes(frames * size)
		defer reportCPU(b, cpuNow(), frames*size)
		var buf []byte
		for range b.N {
			buf = append(buf[:0], make([]byte, journalHdrLen)...)
			for _, p := range group {
				buf = binary.BigEndian.AppendUint64(buf, uint64(p.log.id))
				buf = binary.BigEndian.AppendUint64(buf, 0)
				buf = binary.BigEndian.AppendUint64(buf, 0)
				buf = binary.BigEndian.AppendUint32(buf, uint32(frameHeaderLen+len(p.payload)))
				buf = append(append(buf, p.frame[:]...), p.payload...)
			}
			binary.BigEndian.PutUint32(buf[4:], crc32.Checksum(buf[8:], castagnoli))
			if _, err := f.WriteAt(buf, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}

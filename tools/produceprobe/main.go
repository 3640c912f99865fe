//go:build linux

// Command produceprobe measures the floor of a produce path on this
// machine: what reading request bytes from a loopback socket, checking
// them and writing them durably costs in CPU, with nothing else around
// it. A child process sends -total bytes in frames of -frame bytes; the
// parent reads each frame into one reused buffer and, per -mode, takes
// its CRC32C (crc), writes it at the end of a new file (pwrite) or over
// the file's first 64 MiB again and again, whose pages stay in the page
// cache (overwrite), and fdatasyncs the file (sync). It prints the
// parent's CPU seconds (user + system) per GB and its MB/s; the sender's
// CPU is not counted.
//
// -pause waits before the run, so that memory freed before it is handed
// back to the host of a VM that reports free pages; -warm then writes and
// deletes that many bytes beside the file first, as kgbench's
// --warm-page-cache does before every workload.
//
//	go run ./tools/produceprobe -mode read,crc,pwrite,sync
package main

import (
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	send := flag.String("send", "", "internal: send to this address")
	frame := flag.Int("frame", 1<<20, "bytes per frame")
	total := flag.Int64("total", 512<<20, "bytes to send")
	mode := flag.String("mode", "read,crc,pwrite,sync", "steps per frame: read, crc, pwrite or overwrite, sync")
	dir := flag.String("dir", os.TempDir(), "directory of the file written")
	pause := flag.Duration("pause", 0, "wait this long before the run")
	warm := flag.Int64("warm", 0, "bytes written unsynced and deleted in -dir before the run, after -pause")
	flag.Parse()
	if *send != "" {
		if err := sendFrames(*send, *frame, *total); err != nil {
			log.Fatal(err)
		}
		return
	}
	time.Sleep(*pause)
	if err := warmUp(*dir, *warm); err != nil {
		log.Fatal(err)
	}
	steps := strings.Split(*mode, ",")
	if err := receive(steps, *frame, *total, *dir); err != nil {
		log.Fatal(err)
	}
}

// warmUp writes n bytes into a new file in dir, unsynced, and deletes it.
func warmUp(dir string, n int64) error {
	if n <= 0 {
		return nil
	}
	f, err := os.CreateTemp(dir, "produceprobe-warm-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, 1<<20)
	for w := int64(0); w < n; w += int64(len(buf)) {
		if _, err := f.Write(buf[:min(int64(len(buf)), n-w)]); err != nil {
			return err
		}
	}
	return nil
}

// sendFrames writes total bytes to addr, frame bytes at a time.
func sendFrames(addr string, frame int, total int64) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	buf := make([]byte, frame)
	for i := range buf {
		buf[i] = byte(i)
	}
	for n := int64(0); n < total; n += int64(frame) {
		if _, err := c.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

// receive starts the sender, takes its frames through steps and prints
// the cost.
func receive(steps []string, frame int, total int64, dir string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	cmd := exec.Command(os.Args[0], "-send", ln.Addr().String(), "-frame", fmt.Sprint(frame), "-total", fmt.Sprint(total))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	c, err := ln.Accept()
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "produceprobe-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	has := func(s string) bool { return slices.Contains(steps, s) }
	buf := make([]byte, frame)
	table := crc32.MakeTable(crc32.Castagnoli)
	cpu0, start := cpuSeconds(), time.Now()
	var pos int64
	var sum uint32
	for {
		if _, err := io.ReadFull(c, buf); err != nil {
			break
		}
		if has("crc") {
			sum += crc32.Checksum(buf, table)
		}
		off := pos
		if has("overwrite") {
			off = pos % (64 << 20)
		}
		if has("pwrite") || has("overwrite") {
			if _, err := f.WriteAt(buf, off); err != nil {
				return err
			}
		}
		if has("sync") {
			if err := syscall.Fdatasync(int(f.Fd())); err != nil {
				return err
			}
		}
		pos += int64(frame)
	}
	if err := cmd.Wait(); err != nil {
		return err
	}
	gb := float64(pos) / 1e9
	fmt.Printf("%s, %d-byte frames into %s: %.3f s/GB of CPU, %.0f MB/s (crc %08x)\n",
		strings.Join(steps, ","), frame, filepath.Dir(f.Name()), (cpuSeconds()-cpu0)/gb,
		float64(pos)/1e6/time.Since(start).Seconds(), sum)
	return nil
}

// cpuSeconds is this process's user and system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

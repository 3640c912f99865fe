// Command apachekafka runs an Apache Kafka broker (test/apachekafka) until
// it is interrupted, for benchmarks and for trying a client against the
// reference by hand:
//
//	go run ./tools/apachekafka [--fsync] [--dir DIR]
//
// Once the broker serves it prints one line, "bootstrap ADDR pid PID"; on
// SIGINT or SIGTERM it shuts the broker down cleanly.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kgateway/kgateway/test/apachekafka"
)

func main() {
	fsync := flag.Bool("fsync", false, "log.flush.interval.messages=1: fsync every append")
	dir := flag.String("dir", "", "directory for the broker's log dir and output (default: a temporary one, removed at exit)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	b, err := apachekafka.Start(ctx, apachekafka.Options{Dir: *dir, Fsync: *fsync})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("bootstrap %s pid %d\n", b.Addr, b.Pid())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	if err := b.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

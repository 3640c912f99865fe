// Package server assembles one kgateway server over one data directory:
// storage, the resolver over it, the group offsets store beside it (O3)
// and the Kafka front end, with a metrics registry of its own (a registry per server).
//
//	s, err := server.Open(server.Config{DataDir: dir, Listen: "127.0.0.1:9092"})
//	go s.Serve()
//	...
//	s.Close() // stops serving, then closes the layers in reverse order
//
// It is the only place that wires the layers: cmd/kgateway maps its
// configuration (flags, environment, file) onto Config and adds the HTTP
// metrics listener; the end-to-end and crash tests open servers through
// it too, replacing the file systems under storage and the offsets store
// (Config.Storage.FS, Config.Storage.PebbleFS, Config.Offsets.PebbleFS)
// to inject faults or simulate crashes. Nothing but cmd/kgateway and the
// tests imports this package (layering_test.go).
package server

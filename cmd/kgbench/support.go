package main

// support.go tells whether a server serves an API before a workload uses
// it. franz-go falls back to the classic group protocol on its own when a
// server lacks KIP-848, and a share consumer against a server without
// share groups would wait forever; so workloads 10 and 11 ask ApiVersions
// first and report the row "unsupported" at once instead of measuring the
// wrong thing or hanging until --workload-timeout.

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// errUnsupported marks a row the server cannot serve: it is reported as
// "unsupported", not as an error, and does not make the harness probe the
// server's health.
var errUnsupported = errors.New("unsupported")

// apiNeed is an API key a workload needs at a minimum version.
type apiNeed struct {
	key        kmsg.Key
	minVersion int16
}

// apiVersions asks the server for the versions it serves per API key.
func apiVersions(ctx context.Context, cl *kgo.Client) (map[int16]int16, error) {
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName, req.ClientSoftwareVersion = "kgbench", "1"
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("ApiVersions: %w", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, fmt.Errorf("ApiVersions: %w", err)
	}
	out := make(map[int16]int16, len(resp.ApiKeys))
	for _, k := range resp.ApiKeys {
		out[k.ApiKey] = k.MaxVersion
	}
	return out, nil
}

// checkSupport returns an errUnsupported error naming the first need the
// server does not meet, nil if it meets all.
func checkSupport(versions map[int16]int16, needs ...apiNeed) error {
	for _, n := range needs {
		max, ok := versions[int16(n.key)]
		switch {
		case !ok:
			return fmt.Errorf("%w: the server does not advertise %s (ApiVersions key %d)", errUnsupported, n.key.Name(), n.key)
		case max < n.minVersion:
			return fmt.Errorf("%w: the server serves %s (key %d) up to v%d, franz-go needs v%d",
				errUnsupported, n.key.Name(), n.key, max, n.minVersion)
		}
	}
	return nil
}

// serverSupports asks the server's ApiVersions and checks needs.
func (b *bench) serverSupports(ctx context.Context, needs ...apiNeed) error {
	cl, err := b.client()
	if err != nil {
		return err
	}
	defer cl.Close()
	versions, err := apiVersions(ctx, cl)
	if err != nil {
		return err
	}
	return checkSupport(versions, needs...)
}

package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
)

// startTraces adds the traces signal (for sample/gotrace's tests) to the
// same receiver (same config: the factory shares one receiver, so the
// same servers): every trace export request it accepts is appended to path
// as a 4-byte big-endian length and the request re-encoded by the
// Collector's pdata (ptraceotlp.ExportRequest.MarshalProto). It turns on
// the receiver's include_metadata, and appends the request headers of
// every accepted trace request to path+".headers", one line per request:
// key=value pairs, sorted, separated by spaces (keys lower-case).
//
// With path "discard" (the service benchmark's receiver) the requests are
// received and decoded as always and then dropped: writing 100,000 spans a
// run to a file had the kernel writing them back during the benchmark's
// next runs.
func startTraces(factory receiver.Factory, cfg *otlpreceiver.Config, set receiver.Settings, path string) (component.Component, error) {
	if path == "discard" {
		sink, err := consumer.NewTraces(func(context.Context, ptrace.Traces) error { return nil },
			consumer.WithCapabilities(consumer.Capabilities{}))
		if err != nil {
			return nil, err
		}
		return startTracesReceiver(factory, cfg, set, sink)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	hf, err := os.OpenFile(path+".headers", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cfg.Protocols.GRPC.GetOrInsertDefault().IncludeMetadata = true
	cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.IncludeMetadata = true
	var mu sync.Mutex
	sink, err := consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
		b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(b)))
		if _, err = f.Write(append(n[:], b...)); err != nil {
			return err
		}
		md := client.FromContext(ctx).Metadata
		var kv []string
		for k := range md.Keys() {
			kv = append(kv, strings.ToLower(k)+"="+strings.Join(md.Get(k), ","))
		}
		sort.Strings(kv)
		_, err = fmt.Fprintln(hf, strings.Join(kv, " "))
		return err
	}, consumer.WithCapabilities(consumer.Capabilities{}))
	if err != nil {
		return nil, err
	}
	return startTracesReceiver(factory, cfg, set, sink)
}

func startTracesReceiver(factory receiver.Factory, cfg *otlpreceiver.Config, set receiver.Settings, sink consumer.Traces) (component.Component, error) {
	r, err := factory.CreateTraces(context.Background(), set, cfg, sink)
	if err != nil {
		return nil, err
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		return nil, err
	}
	return r, nil
}

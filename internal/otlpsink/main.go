// Command otlpsink runs the OpenTelemetry Collector's OTLP receiver
// (go.opentelemetry.io/collector/receiver/otlpreceiver) with its profiles
// signal, on loopback, for the tests of package pprofbuild/export: every
// export request it accepts is appended to -out as a 4-byte big-endian
// length and the request re-encoded by the Collector's own pdata
// (pprofileotlp.ExportRequest.MarshalProto), which the tests decode with
// the OTLP protobuf types. It prints "ready" once both servers listen and
// runs until SIGTERM or SIGINT.
//
// It is its own module so that the Collector's dependency tree stays out
// of the SDK's go.mod; the tests build it with `go build` from here.
package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/xconsumer"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/collector/receiver/xreceiver"
)

func main() {
	grpcAddr := flag.String("grpc", "127.0.0.1:4317", "gRPC listen address")
	httpAddr := flag.String("http", "127.0.0.1:4318", "HTTP listen address")
	out := flag.String("out", "", "file the received requests are appended to")
	traces := flag.String("traces", "", "file the received trace requests are appended to (traces.go); none: no traces signal")
	flag.Parse()
	if err := run(*grpcAddr, *httpAddr, *out, *traces); err != nil {
		fmt.Fprintln(os.Stderr, "otlpsink:", err)
		os.Exit(1)
	}
}

func run(grpcAddr, httpAddr, out, traces string) error {
	f, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	var mu sync.Mutex
	sink, err := xconsumer.NewProfiles(func(_ context.Context, pd pprofile.Profiles) error {
		b, err := pprofileotlp.NewExportRequestFromProfiles(pd).MarshalProto()
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(b)))
		if _, err := f.Write(append(n[:], b...)); err != nil {
			return err
		}
		return nil
	}, consumer.WithCapabilities(consumer.Capabilities{}))
	if err != nil {
		return err
	}
	factory := otlpreceiver.NewFactory()
	cfg := factory.CreateDefaultConfig().(*otlpreceiver.Config)
	cfg.Protocols.GRPC.GetOrInsertDefault().NetAddr.Endpoint = grpcAddr
	cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = httpAddr
	set := receivertest.NewNopSettings(component.MustNewType("otlp"))
	r, err := factory.(xreceiver.Factory).CreateProfiles(context.Background(), set, cfg, sink)
	if err != nil {
		return err
	}
	if traces != "" {
		// Before Start: the factory's receivers share one server, which
		// registers the signals it has consumers for when it starts.
		tr, err := startTraces(factory, cfg, set, traces)
		if err != nil {
			return err
		}
		defer tr.Shutdown(context.Background())
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		return err
	}
	fmt.Println("ready")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	return r.Shutdown(context.Background())
}

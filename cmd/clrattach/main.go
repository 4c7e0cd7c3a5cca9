// Command clrattach attaches a profiler to a running .NET process (.NET Core
// 3.0 or later) through the runtime's diagnostics socket.
//
//	clrattach -pid N -clsid {XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX} -path libprof.so [-data STRING | -data-file FILE] [-timeout 10s]
//
// The runtime of process N loads the library, creates the profiler class
// CLSID and calls its ICorProfilerCallback3::InitializeForAttach with the
// client data (the bytes of -data, or of the file -data-file). A relative
// -path is made absolute against the current directory. -timeout is how
// long the runtime may take to attach; clrattach itself waits that long
// plus 30 seconds for the answer.
//
// clrattach must run as the target's user (the socket is the user's). It
// exits 0 once the runtime reports the profiler attached, 1 if the attach
// failed (no such process, a runtime without attach support such as .NET
// Core 2.x, a timeout, or a refusal, with the runtime's HRESULT), and 2 on
// a usage error. A failed attach leaves the target running as before.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/clrprof/clrprof/diag"
	"github.com/google/uuid"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("clrattach", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pid := fs.Int("pid", 0, "process id of the .NET process")
	clsid := fs.String("clsid", "", "CLSID the profiler registered, with or without braces")
	path := fs.String("path", "", "profiler library (.so)")
	data := fs.String("data", "", "client data passed to InitializeForAttach")
	dataFile := fs.String("data-file", "", "file whose contents are the client data")
	timeout := fs.Duration("timeout", diag.DefaultAttachTimeout, "how long the runtime may take to attach")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: clrattach -pid N -clsid {CLSID} -path lib.so [-data STRING | -data-file FILE] [-timeout 10s]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	usage := func(msg string) int {
		fmt.Fprintln(stderr, "clrattach: "+msg)
		fs.Usage()
		return 2
	}
	switch {
	case fs.NArg() > 0:
		return usage("unexpected arguments: " + strings.Join(fs.Args(), " "))
	case *pid <= 0:
		return usage("-pid is required (a positive process id)")
	case *path == "":
		return usage("-path is required")
	case *data != "" && *dataFile != "":
		return usage("give -data or -data-file, not both")
	case *timeout <= 0:
		return usage("-timeout must be positive")
	}
	id, err := uuid.Parse(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(*clsid), "{"), "}"))
	if err != nil {
		return usage(fmt.Sprintf("-clsid %q is not a CLSID (want {XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX})", *clsid))
	}
	clientData := []byte(*data)
	if *dataFile != "" {
		if clientData, err = os.ReadFile(*dataFile); err != nil {
			fmt.Fprintln(stderr, "clrattach:", err)
			return 1
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), *timeout+30*time.Second)
	defer cancel()
	start := time.Now()
	err = diag.Attach(ctx, *pid, diag.AttachRequest{Timeout: *timeout, CLSID: id, ProfilerPath: *path, ClientData: clientData})
	if err != nil {
		fmt.Fprintln(stderr, "clrattach:", err)
		if errors.Is(err, diag.ErrNotSupported) {
			fmt.Fprintln(stderr, "clrattach: the process was not changed")
		}
		return 1
	}
	fmt.Fprintf(stdout, "clrattach: attached %s ({%s}) to pid %d in %v\n", *path, strings.ToUpper(id.String()), *pid, time.Since(start).Round(time.Millisecond))
	return 0
}

package diag_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/clrprof/clrprof/diag"
	"github.com/google/uuid"
)

// Start an app paused at start-up, choose its profiler, and let it run:
// the runtime connects to the reverse port and waits; StartupProfiler
// names the profiler; ResumeRuntime lets the runtime go on, and it loads
// the profiler before any managed code runs. Each connection carries one
// command: SetStartupProfiler returns the runtime's next connection.
func ExampleListenReverse() {
	ln, err := diag.ListenReverse("/tmp/myprofiler-port")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ln.Close()

	cmd := exec.Command("dotnet", "app.dll")
	cmd.Env = append(os.Environ(), ln.Env())
	if err := cmd.Start(); err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	conn, err := ln.Accept(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	req := diag.StartupRequest{CLSID: uuid.MustParse("9C1A6E14-2DEC-45CE-9061-F31964D8884D"), ProfilerPath: "/opt/myprofiler/libprofiler.so"}
	conn, err = ln.SetStartupProfiler(ctx, conn, req)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := conn.ResumeRuntime(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("started pid", conn.PID, "with the profiler")
	cmd.Wait()
}

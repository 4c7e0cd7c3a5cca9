package diag_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/clrprof/clrprof/diag"
	"github.com/google/uuid"
)

// The bytes of an AttachProfiler command, header and payload.
func ExampleMessage_Encode() {
	req := diag.AttachRequest{
		Timeout:      2 * time.Second,
		CLSID:        uuid.MustParse("9F1C2B7A-4E3D-4A6B-8C5D-1E2F3A4B5C6D"),
		ProfilerPath: "/p.so",
		ClientData:   []byte("hi"),
	}
	payload, err := req.MarshalBinary()
	if err != nil {
		fmt.Println(err)
		return
	}
	msg, err := diag.Message{CommandSet: diag.CommandSetProfiler, CommandID: diag.ProfilerAttach, Payload: payload}.Encode()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("header  %q % x\n", msg[:14], msg[14:20])
	fmt.Printf("timeout % x\n", msg[20:24])
	fmt.Printf("clsid   % x\n", msg[24:40])
	fmt.Printf("path    % x\n", msg[40:56])
	fmt.Printf("data    % x\n", msg[56:])
	// Output:
	// header  "DOTNET_IPC_V1\x00" 3e 00 03 01 00 00
	// timeout d0 07 00 00
	// clsid   7a 2b 1c 9f 3d 4e 6b 4a 8c 5d 1e 2f 3a 4b 5c 6d
	// path    06 00 00 00 2f 00 70 00 2e 00 73 00 6f 00 00 00
	// data    02 00 00 00 68 69
}

// Attaching a profiler to a running process and telling the failures apart.
func ExampleAttach() {
	const pid = 12345 // a .NET process of the same user
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := diag.Attach(ctx, pid, diag.AttachRequest{
		CLSID:        uuid.MustParse("9F1C2B7A-4E3D-4A6B-8C5D-1E2F3A4B5C6D"),
		ProfilerPath: "/opt/prof/libprof.so",
		ClientData:   []byte("seconds=10"),
	})
	switch {
	case err == nil:
		fmt.Println("attached")
	case errors.Is(err, diag.ErrProcessNotFound):
		fmt.Println("no such process")
	case errors.Is(err, diag.ErrNotSupported):
		fmt.Println("cannot attach to that process:", err)
	case errors.Is(err, diag.ErrTimeout), errors.Is(err, diag.ErrRefused):
		fmt.Println(err)
	}
}

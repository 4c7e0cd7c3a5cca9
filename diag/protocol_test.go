package diag

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// unhex decodes hex digits, ignoring spaces and "//" comments.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	var digits []string
	for _, line := range strings.Split(s, "\n") {
		line, _, _ = strings.Cut(line, "//")
		digits = append(digits, strings.Fields(line)...)
	}
	b, err := hex.DecodeString(strings.Join(digits, ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var testCLSID = uuid.MustParse("9F1C2B7A-4E3D-4A6B-8C5D-1E2F3A4B5C6D")

func TestMessageEncode(t *testing.T) {
	got, err := Message{CommandSet: CommandSetProfiler, CommandID: ProfilerAttach, Payload: []byte{0xAA, 0xBB}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	want := unhex(t, `
		444f544e45545f4950435f563100 // "DOTNET_IPC_V1\0"
		1600                         // size 22, little-endian
		03 01                        // Profiler, AttachProfiler
		0000                         // reserved
		aabb`)
	if !bytes.Equal(got, want) {
		t.Fatalf("got  %x\nwant %x", got, want)
	}
	m, err := ParseMessage(got)
	if err != nil {
		t.Fatal(err)
	}
	if m.CommandSet != 3 || m.CommandID != 1 || !bytes.Equal(m.Payload, []byte{0xAA, 0xBB}) {
		t.Fatalf("round trip: %+v", m)
	}

	// The largest message fits; one byte more does not.
	if _, err := (Message{Payload: make([]byte, MaxMessageSize-HeaderSize)}).Encode(); err != nil {
		t.Errorf("largest message: %v", err)
	}
	if _, err := (Message{Payload: make([]byte, MaxMessageSize-HeaderSize+1)}).Encode(); err == nil {
		t.Error("oversized message encoded")
	}
}

func TestParseHeaderErrors(t *testing.T) {
	good, _ := Message{CommandSet: CommandSetServer}.Encode()
	for _, tc := range []struct {
		name   string
		b      []byte
		offset int
		msg    string
	}{
		{"short", good[:19], 19, "header needs 20 bytes"},
		{"magic", append([]byte("DOTNET_IPC_V2\x00"), good[14:]...), 12, "bad magic"},
		{"size", append(append([]byte{}, good[:14]...), 19, 0, 0xFF, 0, 0, 0), 14, "smaller than the header"},
	} {
		_, err := ParseHeader(tc.b)
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Offset != tc.offset || !strings.Contains(fe.Msg, tc.msg) {
			t.Errorf("%s: %v, want FormatError at %d with %q", tc.name, err, tc.offset, tc.msg)
		}
	}
	// A whole message must be exactly as long as its header says.
	if _, err := ParseMessage(append(good, 0)); err == nil || !strings.Contains(err.Error(), "header says 20 bytes, message has 21") {
		t.Errorf("ParseMessage of a longer buffer: %v", err)
	}
}

func TestReadMessage(t *testing.T) {
	msg, _ := Message{CommandSet: CommandSetServer, CommandID: ServerOK, Payload: []byte{1, 2, 3, 4}}.Encode()
	// Two messages back to back: each read takes exactly one.
	r := bytes.NewReader(append(append([]byte{}, msg...), msg...))
	for i := 0; i < 2; i++ {
		m, err := ReadMessage(r)
		if err != nil || m.CommandSet != CommandSetServer || !bytes.Equal(m.Payload, []byte{1, 2, 3, 4}) {
			t.Fatalf("read %d: %+v %v", i, m, err)
		}
	}
	if _, err := ReadMessage(r); err != io.EOF {
		t.Errorf("at the end: %v, want io.EOF", err)
	}
	for _, n := range []int{5, 20, 22} {
		_, err := ReadMessage(bytes.NewReader(msg[:n]))
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%d of %d bytes: %v, want io.ErrUnexpectedEOF", n, len(msg), err)
		}
	}
}

func TestParseResponse(t *testing.T) {
	for _, tc := range []struct {
		m    Message
		want Response
		err  string
	}{
		{Message{CommandSetServer, ServerOK, []byte{0, 0, 0, 0}}, Response{OK: true}, ""},
		{Message{CommandSetServer, ServerOK, []byte{0x6a, 0x13, 0x13, 0x80}}, Response{OK: true, Code: -2146233494}, ""},
		{Message{CommandSetServer, ServerError, []byte{0x85, 0x13, 0x13, 0x80}}, Response{Code: -2146233467}, ""},
		{Message{CommandSetProfiler, ServerOK, []byte{0, 0, 0, 0}}, Response{}, "command set 0x03"},
		{Message{CommandSetServer, 7, []byte{0, 0, 0, 0}}, Response{}, "unknown server answer 0x07"},
		{Message{CommandSetServer, ServerOK, []byte{0, 0, 0}}, Response{}, "3 bytes"},
		{Message{CommandSetServer, ServerOK, nil}, Response{}, "0 bytes"},
	} {
		got, err := ParseResponse(tc.m)
		if tc.err != "" {
			var fe *FormatError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%+v: %v, want a FormatError with %q", tc.m, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%+v: %+v %v, want %+v", tc.m, got, err, tc.want)
		}
	}
	// The codes are the runtime's HRESULTs, with their names.
	r, _ := ParseResponse(Message{CommandSetServer, ServerError, []byte{0x6a, 0x13, 0x13, 0x80}})
	if r.Code.Name() != "CORPROF_E_PROFILER_ALREADY_ACTIVE" {
		t.Errorf("code %v", r.Code)
	}
}

func TestAttachRequestEncoding(t *testing.T) {
	req := AttachRequest{Timeout: 5 * time.Second, CLSID: testCLSID, ProfilerPath: "/a", ClientData: []byte("xy")}
	got, err := req.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	want := unhex(t, `
		88130000                         // 5000 ms
		7a2b1c9f 3d4e 6b4a 8c5d1e2f3a4b5c6d // CLSID, COM layout
		03000000 2f00 6100 0000          // "/a" + NUL, 3 code units
		02000000 7879                    // client data "xy"`)
	if !bytes.Equal(got, want) {
		t.Fatalf("got  %x\nwant %x", got, want)
	}
	var back AttachRequest
	if err := back.UnmarshalBinary(got); err != nil {
		t.Fatal(err)
	}
	if back.Timeout != req.Timeout || back.CLSID != req.CLSID || back.ProfilerPath != req.ProfilerPath || !bytes.Equal(back.ClientData, req.ClientData) {
		t.Fatalf("round trip: %+v", back)
	}

	// Non-ASCII paths are UTF-16 (with surrogate pairs); no client data is
	// a zero length.
	req = AttachRequest{CLSID: testCLSID, ProfilerPath: "/tmp/prøf-😀/lib.so"}
	got, err = req.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if n := int(got[20]) | int(got[21])<<8; n != len("/tmp/prøf-")-1+2+len("/lib.so")+1 {
		t.Errorf("path length %d code units", n)
	}
	if !bytes.HasSuffix(got, []byte{0, 0, 0, 0, 0, 0}) {
		t.Errorf("no NUL and zero data length at the end: %x", got[len(got)-6:])
	}
	back = AttachRequest{}
	if err := back.UnmarshalBinary(got); err != nil || back.ProfilerPath != req.ProfilerPath || len(back.ClientData) != 0 {
		t.Fatalf("round trip: %+v %v", back, err)
	}

	for _, bad := range []AttachRequest{
		{CLSID: testCLSID},
		{CLSID: testCLSID, ProfilerPath: "/a\x00b"},
		{CLSID: testCLSID, ProfilerPath: "/a", Timeout: -time.Second},
		{CLSID: testCLSID, ProfilerPath: "/a", Timeout: 1 << 62},
	} {
		if _, err := bad.MarshalBinary(); err == nil {
			t.Errorf("%+v encoded", bad)
		}
	}
}

func TestAttachRequestDecodeErrors(t *testing.T) {
	good, _ := AttachRequest{CLSID: testCLSID, ProfilerPath: "/a", ClientData: []byte("xy")}.MarshalBinary()
	for _, tc := range []struct {
		name   string
		b      []byte
		offset int
		msg    string
	}{
		{"empty", nil, 0, "timeout needs 4 bytes"},
		{"clsid", good[:10], 4, "CLSID needs 16 bytes"},
		{"path length", good[:22], 20, "profiler path length needs 4 bytes"},
		{"path", good[:27], 24, "profiler path of 3 code units runs past the end"},
		{"unterminated", append(append(append([]byte{}, good[:28]...), 'b', 0), good[30:]...), 20, "not NUL-terminated"},
		{"data", good[:len(good)-1], 34, "client data of 2 bytes runs past the end"},
		{"huge", append(append([]byte{}, good[:20]...), 0xff, 0xff, 0xff, 0xff), 24, "4294967295 code units"},
		{"trailing", append(append([]byte{}, good...), 0), 36, "1 bytes after the client data"},
	} {
		var r AttachRequest
		err := r.UnmarshalBinary(tc.b)
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Offset != tc.offset || !strings.Contains(fe.Msg, tc.msg) {
			t.Errorf("%s: %v, want FormatError at %d with %q", tc.name, err, tc.offset, tc.msg)
		}
	}
}

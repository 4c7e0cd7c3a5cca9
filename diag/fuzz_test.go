package diag

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

// FuzzReadMessage feeds arbitrary bytes to the response path of the client:
// ReadMessage, then ParseResponse. Neither may panic; a message that reads
// must re-encode to the bytes it came from, and a response that parses
// must carry the payload's HRESULT.
func FuzzReadMessage(f *testing.F) {
	for _, m := range []Message{
		{CommandSetServer, ServerOK, []byte{0, 0, 0, 0}},
		{CommandSetServer, ServerError, []byte{0x6a, 0x13, 0x13, 0x80}},
		{CommandSetServer, ServerOK, nil},
		{CommandSetProfiler, ProfilerAttach, []byte("payload")},
	} {
		b, _ := m.Encode()
		f.Add(b)
		f.Add(b[:len(b)-1])
	}
	f.Add([]byte("DOTNET_IPC_V1\x00\x13\x00\xff\x00\x00\x00"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ReadMessage(bytes.NewReader(b))
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		enc, err := m.Encode()
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		// The reserved field is not kept: compare around it.
		if !bytes.Equal(enc[:18], b[:18]) || !bytes.Equal(enc[HeaderSize:], b[HeaderSize:len(enc)]) {
			t.Fatalf("re-encoded %x from %x", enc, b)
		}
		m2, err := ParseMessage(b[:len(enc)])
		if err != nil || m2.CommandSet != m.CommandSet || m2.CommandID != m.CommandID || !bytes.Equal(m2.Payload, m.Payload) {
			t.Fatalf("ParseMessage disagrees with ReadMessage: %+v %v vs %+v", m2, err, m)
		}
		r, err := ParseResponse(m)
		if err != nil {
			return
		}
		if m.CommandSet != CommandSetServer || len(m.Payload) != 4 || HRESULT(int32(binary.LittleEndian.Uint32(m.Payload))) != r.Code || r.OK != (m.CommandID == ServerOK) {
			t.Fatalf("ParseResponse(%+v) = %+v", m, r)
		}
	})
}

// FuzzAttachRequest decodes arbitrary AttachProfiler payloads (what a
// server parses): no panic, and whatever decodes re-encodes and decodes to
// the same request.
func FuzzAttachRequest(f *testing.F) {
	for _, r := range []AttachRequest{
		{CLSID: testCLSID, ProfilerPath: "/a", ClientData: []byte("xy")},
		{CLSID: testCLSID, ProfilerPath: "/tmp/prøf-😀/lib.so"},
	} {
		b, _ := r.MarshalBinary()
		f.Add(b)
	}
	f.Add([]byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var r AttachRequest
		if err := r.UnmarshalBinary(b); err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Offset < 0 || fe.Offset > len(b) {
				t.Fatalf("error %v (offset out of range?)", err)
			}
			return
		}
		enc, err := r.MarshalBinary()
		if err != nil {
			// An empty path or an embedded NUL decodes but is not sendable.
			return
		}
		var r2 AttachRequest
		if err := r2.UnmarshalBinary(enc); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if r2.Timeout != r.Timeout || r2.CLSID != r.CLSID || r2.ProfilerPath != r.ProfilerPath || !bytes.Equal(r2.ClientData, r.ClientData) {
			t.Fatalf("round trip changed %+v to %+v", r, r2)
		}
	})
}

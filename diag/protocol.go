package diag

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"
	"unicode/utf16"

	"github.com/google/uuid"
)

// Command sets of the diagnostics IPC protocol.
const (
	CommandSetDump      = 0x01
	CommandSetEventPipe = 0x02
	CommandSetProfiler  = 0x03
	CommandSetProcess   = 0x04
	CommandSetServer    = 0xFF
)

// Command ids: the profiler's AttachProfiler, and the server's two answers.
const (
	ProfilerAttach = 0x01 // AttachProfiler (.NET Core 3.0+)
	ServerOK       = 0x00 // the command succeeded; the payload is command specific
	ServerError    = 0xFF // the server rejected the message; the payload is an HRESULT
)

// HeaderSize is the size of the DOTNET_IPC_V1 header that starts every
// message; MaxMessageSize is the largest message its 16-bit size can
// describe.
const (
	HeaderSize     = 20
	MaxMessageSize = 0xFFFF
)

// Magic is the 14 bytes every message starts with: "DOTNET_IPC_V1" and a
// NUL.
const Magic = "DOTNET_IPC_V1\x00"

// Header is the DOTNET_IPC_V1 message header (little-endian on the wire):
// magic, total message size including the header, command set, command
// id, and a reserved 16-bit field that must be zero.
type Header struct {
	// Size is the whole message's size in bytes, header included.
	Size uint16
	// CommandSet is the command's group (CommandSetProcess, ...; in a
	// response, CommandSetServer).
	CommandSet uint8
	// CommandID is the command within its set (in a response: OK or
	// error).
	CommandID uint8
	// Reserved is sent as zero (the protocol reserves it); parsing keeps
	// whatever value came, without refusing it.
	Reserved uint16
}

// AppendHeader appends the encoding of h to b.
func AppendHeader(b []byte, h Header) []byte {
	b = append(b, Magic...)
	b = binary.LittleEndian.AppendUint16(b, h.Size)
	b = append(b, h.CommandSet, h.CommandID)
	return binary.LittleEndian.AppendUint16(b, h.Reserved)
}

// A FormatError reports a malformed message: what was wrong and at which
// byte offset of the message.
type FormatError struct {
	// Offset is the byte offset in the message where decoding failed.
	Offset int
	// Msg says what was wrong there.
	Msg string
}

// Error returns the offset and what was wrong there.
func (e *FormatError) Error() string {
	return fmt.Sprintf("diag: malformed message at byte %d: %s", e.Offset, e.Msg)
}

// ParseHeader decodes the header at the start of b (at least HeaderSize
// bytes). It checks the magic and that Size covers at least the header.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, &FormatError{len(b), fmt.Sprintf("header needs %d bytes, have %d", HeaderSize, len(b))}
	}
	for i := 0; i < len(Magic); i++ {
		if b[i] != Magic[i] {
			return Header{}, &FormatError{i, fmt.Sprintf("bad magic %q, want %q", b[:len(Magic)], Magic)}
		}
	}
	h := Header{
		Size:       binary.LittleEndian.Uint16(b[14:]),
		CommandSet: b[16],
		CommandID:  b[17],
		Reserved:   binary.LittleEndian.Uint16(b[18:]),
	}
	if h.Size < HeaderSize {
		return Header{}, &FormatError{14, fmt.Sprintf("message size %d is smaller than the header", h.Size)}
	}
	return h, nil
}

// A Message is one IPC message: a header's command and its payload (the
// header's size is implied by the payload's length).
type Message struct {
	// CommandSet and CommandID name the command (or, in a response, the
	// server's OK or error).
	CommandSet uint8
	// CommandID: see CommandSet.
	CommandID uint8
	// Payload is the message's body after the header.
	Payload []byte
}

// Encode returns the message with its header. It fails if the message is
// larger than MaxMessageSize.
func (m Message) Encode() ([]byte, error) {
	n := HeaderSize + len(m.Payload)
	if n > MaxMessageSize {
		return nil, fmt.Errorf("diag: message of %d bytes exceeds the protocol's limit of %d", n, MaxMessageSize)
	}
	b := make([]byte, 0, n)
	b = AppendHeader(b, Header{Size: uint16(n), CommandSet: m.CommandSet, CommandID: m.CommandID})
	return append(b, m.Payload...), nil
}

// ParseMessage decodes one whole message: b must hold exactly the size the
// header gives. A nonzero reserved field is accepted (the client must send
// zero; a server answering otherwise is still understood).
func ParseMessage(b []byte) (Message, error) {
	h, err := ParseHeader(b)
	if err != nil {
		return Message{}, err
	}
	if int(h.Size) != len(b) {
		return Message{}, &FormatError{14, fmt.Sprintf("header says %d bytes, message has %d", h.Size, len(b))}
	}
	return Message{CommandSet: h.CommandSet, CommandID: h.CommandID, Payload: append([]byte(nil), b[HeaderSize:]...)}, nil
}

// ReadMessage reads one message from r: a header, then as many payload
// bytes as it announces. A stream that ends early is an error wrapping
// io.ErrUnexpectedEOF (io.EOF if it ends before the first byte).
func ReadMessage(r io.Reader) (Message, error) {
	var hb [HeaderSize]byte
	if n, err := io.ReadFull(r, hb[:]); err != nil {
		if err == io.ErrUnexpectedEOF {
			return Message{}, fmt.Errorf("diag: connection closed after %d bytes of a message header: %w", n, err)
		}
		return Message{}, err
	}
	h, err := ParseHeader(hb[:])
	if err != nil {
		return Message{}, err
	}
	payload := make([]byte, int(h.Size)-HeaderSize)
	if n, err := io.ReadFull(r, payload); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return Message{}, fmt.Errorf("diag: connection closed after %d of %d payload bytes: %w", n, len(payload), err)
	}
	return Message{CommandSet: h.CommandSet, CommandID: h.CommandID, Payload: payload}, nil
}

// Response is a decoded answer of the diagnostics server to a command whose
// answer is an HRESULT (AttachProfiler, and every error).
type Response struct {
	// OK is true for a Server/OK message, false for Server/Error.
	OK bool
	// Code is the HRESULT in the payload: the command's result for OK (0
	// is success), the reason for Error.
	Code HRESULT
}

// ParseResponse interprets m as the answer to a command that returns an
// HRESULT: a Server/OK or Server/Error message whose payload is a 32-bit
// little-endian HRESULT. Anything else is a FormatError.
func ParseResponse(m Message) (Response, error) {
	if m.CommandSet != CommandSetServer {
		return Response{}, &FormatError{16, fmt.Sprintf("answer has command set %#02x, want the server's %#02x", m.CommandSet, CommandSetServer)}
	}
	var r Response
	switch m.CommandID {
	case ServerOK:
		r.OK = true
	case ServerError:
	default:
		return Response{}, &FormatError{17, fmt.Sprintf("unknown server answer %#02x", m.CommandID)}
	}
	if len(m.Payload) != 4 {
		return Response{}, &FormatError{HeaderSize, fmt.Sprintf("answer payload has %d bytes, want a 4-byte HRESULT", len(m.Payload))}
	}
	r.Code = HRESULT(int32(binary.LittleEndian.Uint32(m.Payload)))
	return r, nil
}

// AttachRequest is the payload of the AttachProfiler command.
type AttachRequest struct {
	// Timeout is how long the runtime may take to attach (it waits, for
	// instance, for a background GC to finish); sent in milliseconds.
	Timeout time.Duration
	// CLSID is the class ID the profiler library registered.
	CLSID uuid.UUID
	// ProfilerPath is the profiler library, as the target process sees it.
	ProfilerPath string
	// ClientData is handed to the profiler's InitializeForAttach.
	ClientData []byte
}

// MarshalBinary encodes the payload: timeout (uint32 ms), CLSID (COM
// layout: uint32, uint16, uint16 little-endian, then 8 bytes), the path as
// a length-prefixed NUL-terminated UTF-16LE string (length in code units,
// counting the NUL), and the client data as a length-prefixed byte array.
func (r AttachRequest) MarshalBinary() ([]byte, error) {
	if r.Timeout < 0 {
		return nil, fmt.Errorf("diag: negative attach timeout %v", r.Timeout)
	}
	ms := r.Timeout.Milliseconds()
	if ms > 0xFFFFFFFF {
		return nil, fmt.Errorf("diag: attach timeout %v does not fit in 32 bits of milliseconds", r.Timeout)
	}
	if r.ProfilerPath == "" {
		return nil, fmt.Errorf("diag: empty profiler path")
	}
	for _, c := range r.ProfilerPath {
		if c == 0 {
			return nil, fmt.Errorf("diag: profiler path %q contains a NUL", r.ProfilerPath)
		}
	}
	path := utf16.Encode([]rune(r.ProfilerPath))
	b := make([]byte, 0, 4+16+4+2*(len(path)+1)+4+len(r.ClientData))
	b = binary.LittleEndian.AppendUint32(b, uint32(ms))
	b = appendGUID(b, r.CLSID)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(path)+1))
	for _, u := range path {
		b = binary.LittleEndian.AppendUint16(b, u)
	}
	b = append(b, 0, 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.ClientData)))
	b = append(b, r.ClientData...)
	return b, nil
}

// UnmarshalBinary decodes an AttachProfiler payload (what a diagnostics
// server receives); the inverse of MarshalBinary.
func (r *AttachRequest) UnmarshalBinary(b []byte) error {
	d := decoder{b: b}
	ms := d.u32("timeout")
	clsid := d.guid("CLSID")
	path := d.str("profiler path")
	data := d.bytes("client data")
	if d.err == nil && d.off != len(b) {
		d.fail(fmt.Sprintf("%d bytes after the client data", len(b)-d.off))
	}
	if d.err != nil {
		return d.err
	}
	*r = AttachRequest{Timeout: time.Duration(ms) * time.Millisecond, CLSID: clsid, ProfilerPath: path, ClientData: data}
	return nil
}

// appendGUID appends u in the COM GUID layout (first three fields
// little-endian), which is how the runtime reads a CLSID.
func appendGUID(b []byte, u uuid.UUID) []byte {
	b = binary.LittleEndian.AppendUint32(b, binary.BigEndian.Uint32(u[0:4]))
	b = binary.LittleEndian.AppendUint16(b, binary.BigEndian.Uint16(u[4:6]))
	b = binary.LittleEndian.AppendUint16(b, binary.BigEndian.Uint16(u[6:8]))
	return append(b, u[8:]...)
}

// decoder reads payload fields with a sticky error carrying the offset.
type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) fail(msg string) {
	if d.err == nil {
		d.err = &FormatError{d.off, msg}
	}
}

func (d *decoder) need(n int, what string) bool {
	if d.err != nil {
		return false
	}
	if n < 0 || len(d.b)-d.off < n {
		d.fail(fmt.Sprintf("%s needs %d bytes, %d left", what, n, len(d.b)-d.off))
		return false
	}
	return true
}

func (d *decoder) u32(what string) uint32 {
	if !d.need(4, what) {
		return 0
	}
	v := binary.LittleEndian.Uint32(d.b[d.off:])
	d.off += 4
	return v
}

func (d *decoder) guid(what string) uuid.UUID {
	var u uuid.UUID
	if !d.need(16, what) {
		return u
	}
	p := d.b[d.off:]
	binary.BigEndian.PutUint32(u[0:4], binary.LittleEndian.Uint32(p[0:4]))
	binary.BigEndian.PutUint16(u[4:6], binary.LittleEndian.Uint16(p[4:6]))
	binary.BigEndian.PutUint16(u[6:8], binary.LittleEndian.Uint16(p[6:8]))
	copy(u[8:], p[8:16])
	d.off += 16
	return u
}

// str reads a length-prefixed UTF-16LE string whose last code unit is NUL
// (or a zero length, the empty string).
func (d *decoder) str(what string) string {
	start := d.off
	n := d.u32(what + " length")
	if d.err != nil || n == 0 {
		return ""
	}
	if uint64(n)*2 > uint64(len(d.b)-d.off) {
		d.fail(fmt.Sprintf("%s of %d code units runs past the end (%d bytes left)", what, n, len(d.b)-d.off))
		return ""
	}
	u := make([]uint16, n)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(d.b[d.off+2*i:])
	}
	if u[n-1] != 0 {
		d.err = &FormatError{start, what + " is not NUL-terminated"}
		return ""
	}
	d.off += 2 * int(n)
	return string(utf16.Decode(u[:n-1]))
}

func (d *decoder) bytes(what string) []byte {
	n := d.u32(what + " length")
	if d.err != nil {
		return nil
	}
	if uint64(n) > uint64(len(d.b)-d.off) {
		d.fail(fmt.Sprintf("%s of %d bytes runs past the end (%d bytes left)", what, n, len(d.b)-d.off))
		return nil
	}
	v := append([]byte(nil), d.b[d.off:d.off+int(n)]...)
	d.off += int(n)
	return v
}

package bench

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// RecordKind says what a [Corpus] record holds.
type RecordKind byte

// The kinds of corpus records.
const (
	KindBody      RecordKind = 1 // an IL method body as GetILFunctionBody returns it
	KindMethodSig RecordKind = 2 // a MethodDefSig blob
	KindLocalSig  RecordKind = 3 // a local-variable signature blob
)

// corpusMagic starts every corpus file.
const corpusMagic = "clrprof-corpus-1\n"

// maxRecord caps one record's length when reading (IL bodies and
// signatures are far smaller).
const maxRecord = 16 << 20

// Corpus is what bench/prof/corpus collected from a real runtime: the IL
// bodies and signatures the IL and signature throughput benchmarks decode.
type Corpus struct {
	Bodies     [][]byte
	MethodSigs [][]byte
	LocalSigs  [][]byte
}

// Add appends a record of kind k.
func (c *Corpus) Add(k RecordKind, data []byte) error {
	switch k {
	case KindBody:
		c.Bodies = append(c.Bodies, data)
	case KindMethodSig:
		c.MethodSigs = append(c.MethodSigs, data)
	case KindLocalSig:
		c.LocalSigs = append(c.LocalSigs, data)
	default:
		return fmt.Errorf("bench: unknown corpus record kind %d", k)
	}
	return nil
}

// WriteTo writes the corpus: the magic line, then each record as its kind
// byte, its length as a uvarint and its bytes.
func (c *Corpus) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriter(w)
	n, _ := bw.WriteString(corpusMagic)
	total := int64(n)
	var hdr [1 + binary.MaxVarintLen64]byte
	for _, g := range []struct {
		k    RecordKind
		recs [][]byte
	}{{KindBody, c.Bodies}, {KindMethodSig, c.MethodSigs}, {KindLocalSig, c.LocalSigs}} {
		for _, r := range g.recs {
			hdr[0] = byte(g.k)
			h := 1 + binary.PutUvarint(hdr[1:], uint64(len(r)))
			bw.Write(hdr[:h])
			bw.Write(r)
			total += int64(h + len(r))
		}
	}
	return total, bw.Flush()
}

// ReadCorpus parses what [Corpus.WriteTo] wrote. A truncated or malformed
// file is an error naming the byte offset.
func ReadCorpus(data []byte) (*Corpus, error) {
	if !bytes.HasPrefix(data, []byte(corpusMagic)) {
		return nil, errors.New("bench: not a corpus file (bad magic)")
	}
	c := &Corpus{}
	off := len(corpusMagic)
	for off < len(data) {
		k := RecordKind(data[off])
		n, w := binary.Uvarint(data[off+1:])
		if w <= 0 || n > maxRecord || uint64(len(data)-off-1-w) < n {
			return nil, fmt.Errorf("bench: corpus record at offset %d: bad or truncated length", off)
		}
		start := off + 1 + w
		if err := c.Add(k, data[start:start+int(n):start+int(n)]); err != nil {
			return nil, fmt.Errorf("%w (offset %d)", err, off)
		}
		off = start + int(n)
	}
	return c, nil
}

// LoadCorpus reads a corpus file.
func LoadCorpus(path string) (*Corpus, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ReadCorpus(data)
}

// Bytes returns the total size of the records of kind k.
func (c *Corpus) Bytes(k RecordKind) int64 {
	var recs [][]byte
	switch k {
	case KindBody:
		recs = c.Bodies
	case KindMethodSig:
		recs = c.MethodSigs
	case KindLocalSig:
		recs = c.LocalSigs
	}
	var n int64
	for _, r := range recs {
		n += int64(len(r))
	}
	return n
}

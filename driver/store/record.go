package store

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
)

// Record layout of format 2 (fenceproof-fences/2). A fence record's value is
//
//	seq uint64 | count uint32 | crc32c(key | seq | count) uint32    (16 bytes, big endian)
//
// and the meta bucket holds, besides the format marker,
//
//	"instance": 16 random bytes | crc32c                  (who owns enforcement, see InstanceID)
//	"digest":   records uint64 | sum uint64 | crc32c      (sum = Σ fnv64a(key | value) mod 2^64)
//
// The per-record CRC catches a flipped bit in a key or value (a /32 that
// reads as /12); the digest, updated in every transaction, catches a record
// that vanished or appeared (a flipped page count, a lost subtree).
const (
	recordLen = 16
	legacyLen = 12 // format 1: seq | count, no checksum
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func recordCRC(key []byte, seqCount []byte) uint32 {
	c := crc32.Update(0, castagnoli, key)
	return crc32.Update(c, castagnoli, seqCount)
}

func encode(key string, e Entry) []byte {
	b := make([]byte, recordLen)
	binary.BigEndian.PutUint64(b, e.Seq)
	binary.BigEndian.PutUint32(b[8:], e.Count)
	binary.BigEndian.PutUint32(b[12:], recordCRC([]byte(key), b[:12]))
	return b
}

func decode(key, v []byte) (Entry, error) {
	if len(v) != recordLen {
		return Entry{}, fmt.Errorf("corrupt record of %d bytes (want %d)", len(v), recordLen)
	}
	if got, want := binary.BigEndian.Uint32(v[12:]), recordCRC(key, v[:12]); got != want {
		return Entry{}, fmt.Errorf("checksum mismatch (stored %08x, computed %08x): key or value corrupt", got, want)
	}
	return decodeLegacy(v[:12])
}

func decodeLegacy(v []byte) (Entry, error) {
	if len(v) != legacyLen {
		return Entry{}, fmt.Errorf("corrupt format-1 record of %d bytes", len(v))
	}
	e := Entry{Seq: binary.BigEndian.Uint64(v), Count: binary.BigEndian.Uint32(v[8:])}
	if e.Count == 0 {
		return Entry{}, errors.New("corrupt record with count 0")
	}
	return e, nil
}

// digest summarises a record set independently of order, so a transaction
// can update it from the records it touches alone.
type digest struct {
	records uint64
	sum     uint64
}

func recordHash(key, value []byte) uint64 {
	h := fnv.New64a()
	h.Write(key)
	h.Write([]byte{0})
	h.Write(value)
	return h.Sum64()
}

func (d *digest) add(key, value []byte) { d.records++; d.sum += recordHash(key, value) }
func (d *digest) sub(key, value []byte) { d.records--; d.sum -= recordHash(key, value) }

// sealed appends a crc32c of key | payload to payload.
func sealed(key string, payload []byte) []byte {
	out := append([]byte(nil), payload...)
	return binary.BigEndian.AppendUint32(out, recordCRC([]byte(key), payload))
}

// unseal checks and strips the crc32c appended by sealed.
func unseal(key string, v []byte, n int) ([]byte, error) {
	if len(v) != n+4 {
		return nil, fmt.Errorf("meta %q: %d bytes, want %d", key, len(v), n+4)
	}
	if binary.BigEndian.Uint32(v[n:]) != recordCRC([]byte(key), v[:n]) {
		return nil, fmt.Errorf("meta %q: checksum mismatch", key)
	}
	return v[:n], nil
}

func (d digest) encode() []byte {
	b := binary.BigEndian.AppendUint64(nil, d.records)
	return sealed(string(keyDigest), binary.BigEndian.AppendUint64(b, d.sum))
}

func decodeDigest(v []byte) (digest, error) {
	p, err := unseal(string(keyDigest), v, 16)
	if err != nil {
		return digest{}, err
	}
	return digest{records: binary.BigEndian.Uint64(p), sum: binary.BigEndian.Uint64(p[8:])}, nil
}

func newInstance() ([]byte, error) {
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return nil, err
	}
	return sealed(string(keyInstance), id), nil
}

func decodeInstance(v []byte) (string, error) {
	p, err := unseal(string(keyInstance), v, 16)
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(p), nil
}

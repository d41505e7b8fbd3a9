package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
)

// Report is what Verify found in a healthy file.
type Report struct {
	Records  int
	Instance string
}

// Verify checks a state file offline, read-only, without taking it over:
// everything Open checks, then checkKey on every key (the driver passes its
// canonical-prefix check). A format-1 file is reported, not upgraded.
func Verify(path string, checkKey func(string) error) (Report, error) {
	s, err := open(path, true)
	if err != nil {
		return Report{}, err
	}
	defer s.Close()
	st, err := s.Load()
	if err != nil {
		return Report{}, fmt.Errorf("state file %s: %w", path, err)
	}
	if checkKey != nil {
		for k := range st {
			if err := checkKey(k); err != nil {
				return Report{}, fmt.Errorf("state file %s: record %q: %w", path, clip([]byte(k)), err)
			}
		}
	}
	return Report{Records: len(st), Instance: s.instance}, nil
}

// bbolt meta page layout (go.etcd.io/bbolt internal/common): a 16-byte page
// header, then magic, version, page size, flags, root bucket (root, sequence),
// freelist, high-water mark, txid and an FNV-64a checksum of the fields
// before it.
const (
	boltMagic      = 0xED0CDAED
	metaMagic      = 16
	metaPageSize   = 24
	metaHWM        = 56
	metaChecksum   = 72
	metaHeaderSize = 80
)

// precheck verifies both bbolt meta pages and that the file is as long as
// they claim, before bolt.Open maps it. bbolt would die of SIGBUS on a
// truncated file, and on one corrupt meta page it silently falls back to the
// previous transaction: an older fence set. A healthy file always has both
// pages valid (kill -9 never tears a page write), so either one corrupt is
// an error.
func precheck(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	hdr := make([]byte, metaHeaderSize)
	if _, err := f.ReadAt(hdr, 0); err != nil {
		return fmt.Errorf("not a bbolt file (short header): %w", err)
	}
	if binary.LittleEndian.Uint32(hdr[metaMagic:]) != boltMagic {
		return errors.New("not a bbolt file (bad magic)")
	}
	pageSize := int64(binary.LittleEndian.Uint32(hdr[metaPageSize:]))
	if pageSize < 512 || pageSize > 1<<20 || pageSize&(pageSize-1) != 0 {
		return fmt.Errorf("corrupt meta page 0 (page size %d)", pageSize)
	}
	for i := int64(0); i < 2; i++ {
		if _, err := f.ReadAt(hdr, i*pageSize); err != nil {
			return fmt.Errorf("truncated: meta page %d unreadable: %w", i, err)
		}
		if binary.LittleEndian.Uint32(hdr[metaMagic:]) != boltMagic {
			return fmt.Errorf("corrupt meta page %d (bad magic)", i)
		}
		h := fnv.New64a()
		h.Write(hdr[metaMagic:metaChecksum])
		if h.Sum64() != binary.LittleEndian.Uint64(hdr[metaChecksum:]) {
			return fmt.Errorf("corrupt meta page %d (checksum mismatch); if this follows a power loss, restore the file from a backup or inspect it with `fenceproof driver --verify-state`", i)
		}
		if int64(binary.LittleEndian.Uint32(hdr[metaPageSize:])) != pageSize {
			return fmt.Errorf("corrupt meta page %d (page size differs from meta page 0)", i)
		}
		if hwm := binary.LittleEndian.Uint64(hdr[metaHWM:]); hwm > uint64(fi.Size()/pageSize) || hwm < 2 {
			return fmt.Errorf("truncated: %d bytes, meta page %d claims %d pages of %d bytes", fi.Size(), i, hwm, pageSize)
		}
	}
	return nil
}

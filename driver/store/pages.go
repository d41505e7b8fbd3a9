package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// bbolt's on-disk layout (go.etcd.io/bbolt v1.5.0, internal/common): every
// page starts with a 16-byte header (id uint64, flags uint16, count uint16,
// overflow uint32: the pages after it that it spans). The header is followed
// by count 16-byte elements: a branch element is (pos uint32, ksize uint32,
// child page id uint64), a leaf element (flags uint32, pos uint32, ksize
// uint32, vsize uint32), pos counting from the element itself. A leaf element
// with the bucket flag is a bucket: its value starts with the bucket's root
// page id and sequence (16 bytes), followed, when the root is 0, by the
// bucket's only page (inline). A freelist page holds count page ids (when
// count is 0xFFFF, the first uint64 is the count).
//
// A meta page's body (after the header): magic, version, page size, flags,
// root bucket (root page, sequence), freelist page, high-water mark, txid
// and an FNV-64a checksum of the fields before it.
const (
	pageHeaderSize   = 16
	elementSize      = 16
	bucketHeaderSize = 16

	flagBranch      = 0x01
	flagLeaf        = 0x02
	flagFreelist    = 0x10
	flagBucketEntry = 0x01

	noFreelist = ^uint64(0)

	boltMagic      = 0xED0CDAED
	metaMagic      = 16
	metaPageSize   = 24
	metaRoot       = 32
	metaFreelist   = 48
	metaHWM        = 56
	metaTxid       = 64
	metaChecksum   = 72
	metaHeaderSize = 80
)

// pageFile is a bbolt file read through its own file descriptor, never through
// bbolt's mapping, so a corrupt page is an error here before bbolt walks it.
type pageFile struct {
	r        io.ReaderAt
	pageSize uint64
	// root, freelist and hwm are those of the meta page bbolt opens the file
	// at: pages below hwm are the file's; the root bucket's tree starts at root.
	root, freelist, hwm uint64
	freelistSpan        uint64 // pages the freelist spans, once freePages read it
}

// readPageFile verifies both meta pages and that the file is as long as they
// claim. bbolt would die of SIGBUS on a truncated file, and on one corrupt
// meta page it silently falls back to the previous transaction: an older
// fence set. A healthy file always has both pages valid (kill -9 never tears
// a page write), so either one corrupt is an error.
func readPageFile(r io.ReaderAt, size int64) (*pageFile, error) {
	hdr := make([]byte, metaHeaderSize)
	if _, err := r.ReadAt(hdr, 0); err != nil {
		return nil, fmt.Errorf("not a bbolt file (short header): %w", err)
	}
	if binary.LittleEndian.Uint32(hdr[metaMagic:]) != boltMagic {
		return nil, errors.New("not a bbolt file (bad magic)")
	}
	ps := uint64(binary.LittleEndian.Uint32(hdr[metaPageSize:]))
	if ps < 512 || ps > 1<<20 || ps&(ps-1) != 0 {
		return nil, fmt.Errorf("corrupt meta page 0 (page size %d)", ps)
	}
	pf := &pageFile{r: r, pageSize: ps}
	var txid uint64
	for i := range uint64(2) {
		if _, err := r.ReadAt(hdr, int64(i*ps)); err != nil {
			return nil, fmt.Errorf("truncated: meta page %d unreadable: %w", i, err)
		}
		if binary.LittleEndian.Uint32(hdr[metaMagic:]) != boltMagic {
			return nil, fmt.Errorf("corrupt meta page %d (bad magic)", i)
		}
		h := fnv.New64a()
		h.Write(hdr[metaMagic:metaChecksum])
		if h.Sum64() != binary.LittleEndian.Uint64(hdr[metaChecksum:]) {
			return nil, fmt.Errorf("corrupt meta page %d (checksum mismatch); if this follows a power loss, restore the file from a backup or inspect it with `fenceproof driver --verify-state`", i)
		}
		if uint64(binary.LittleEndian.Uint32(hdr[metaPageSize:])) != ps {
			return nil, fmt.Errorf("corrupt meta page %d (page size differs from meta page 0)", i)
		}
		hwm := binary.LittleEndian.Uint64(hdr[metaHWM:])
		if hwm > uint64(size)/ps || hwm < 2 {
			return nil, fmt.Errorf("truncated: %d bytes, meta page %d claims %d pages of %d bytes", size, i, hwm, ps)
		}
		// bbolt opens the file at the meta page with the higher txid (meta
		// page 0 on a tie), both being valid.
		if t := binary.LittleEndian.Uint64(hdr[metaTxid:]); i == 0 || t > txid {
			txid, pf.hwm = t, hwm
			pf.root = binary.LittleEndian.Uint64(hdr[metaRoot:])
			pf.freelist = binary.LittleEndian.Uint64(hdr[metaFreelist:])
		}
	}
	return pf, nil
}

// page reads page id with the pages it spans, after checking that they lie
// below the high-water mark and that the header names the page itself.
func (pf *pageFile) page(id uint64) (header, []byte, error) {
	if id < 2 || id >= pf.hwm {
		return header{}, nil, fmt.Errorf("page id %d out of bounds [2, %d)", id, pf.hwm)
	}
	first := make([]byte, pageHeaderSize)
	if _, err := pf.r.ReadAt(first, int64(id*pf.pageSize)); err != nil {
		return header{}, nil, fmt.Errorf("page %d unreadable: %w", id, err)
	}
	h := parseHeader(first)
	if h.id != id {
		return header{}, nil, fmt.Errorf("page %d identifies itself as page %d", id, h.id)
	}
	if uint64(h.overflow) >= pf.hwm-id {
		return header{}, nil, fmt.Errorf("page %d spans %d more pages, past the high-water mark %d", id, h.overflow, pf.hwm)
	}
	buf := make([]byte, (1+uint64(h.overflow))*pf.pageSize)
	if _, err := pf.r.ReadAt(buf, int64(id*pf.pageSize)); err != nil {
		return header{}, nil, fmt.Errorf("page %d unreadable: %w", id, err)
	}
	return h, buf, nil
}

type header struct {
	id       uint64
	flags    uint16
	count    uint16
	overflow uint32
}

func parseHeader(b []byte) header {
	return header{
		id:       binary.LittleEndian.Uint64(b),
		flags:    binary.LittleEndian.Uint16(b[8:]),
		count:    binary.LittleEndian.Uint16(b[10:]),
		overflow: binary.LittleEndian.Uint32(b[12:]),
	}
}

// freePages checks the freelist page bbolt loads when it opens the file (its
// bounds, type and length, every id below the high-water mark and listed
// once) and returns the free pages, indexed by page id.
func (pf *pageFile) freePages() ([]bool, error) {
	if pf.freelist == noFreelist {
		return nil, errors.New("no freelist page (bbolt NoFreelistSync): not a fenceproof state file")
	}
	h, buf, err := pf.page(pf.freelist)
	if err != nil {
		return nil, fmt.Errorf("freelist: %w", err)
	}
	if h.flags != flagFreelist {
		return nil, fmt.Errorf("freelist: page %d has flags %#x, not a freelist page", h.id, h.flags)
	}
	pf.freelistSpan = 1 + uint64(h.overflow)
	ids := buf[pageHeaderSize:]
	n := uint64(h.count)
	if n == 0xFFFF {
		n = binary.LittleEndian.Uint64(ids)
		ids = ids[8:]
	}
	if n > uint64(len(ids))/8 {
		return nil, fmt.Errorf("freelist: page %d claims %d ids, room for %d", h.id, n, len(ids)/8)
	}
	free := make([]bool, pf.hwm)
	for i := range n {
		id := binary.LittleEndian.Uint64(ids[i*8:])
		switch {
		case id < 2 || id >= pf.hwm:
			return nil, fmt.Errorf("freelist: page id %d out of bounds [2, %d)", id, pf.hwm)
		case free[id]:
			return nil, fmt.Errorf("freelist: page %d listed twice", id)
		}
		free[id] = true
	}
	return free, nil
}

// treeRef is a page to visit: a page id, or an inline bucket's page; every
// key on it and below it must lie in [lo, hi) (nil: unbounded).
type treeRef struct {
	id     uint64
	inline []byte
	lo, hi []byte
}

// walkTree (after freePages) visits every page reachable from the root bucket, the way bbolt's
// cursors do, and checks what they take on trust: that every page id is in
// the file, names a branch or leaf page not on the freelist and is reached
// once (a page reached twice is a cycle, which bbolt walks forever, or a
// subtree shared by two parents); that every element lies inside its page;
// and that keys are in order. Each page is read once, so the walk is bounded
// by the file's size.
func (pf *pageFile) walkTree(free []bool) error {
	seen := make([]bool, pf.hwm)
	seen[0], seen[1] = true, true
	for p := range pf.freelistSpan {
		seen[pf.freelist+p] = true
	}
	stack := []treeRef{{id: pf.root}}
	for len(stack) > 0 {
		ref := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		var h header
		buf := ref.inline
		if buf == nil {
			var err error
			if h, buf, err = pf.page(ref.id); err != nil {
				return err
			}
			for p := ref.id; p <= ref.id+uint64(h.overflow); p++ {
				switch {
				case seen[p]:
					return fmt.Errorf("page %d reached twice (a page pointer forms a cycle or shares a subtree)", p)
				case free[p]:
					return fmt.Errorf("page %d is reachable but on the freelist", p)
				}
				seen[p] = true
			}
		} else if h = parseHeader(buf); h.flags != flagLeaf {
			return fmt.Errorf("inline bucket page has flags %#x, not a leaf", h.flags)
		}
		children, err := checkPage(h, buf, ref)
		if err != nil {
			if ref.inline != nil {
				return fmt.Errorf("inline bucket page: %w", err)
			}
			return fmt.Errorf("page %d: %w", ref.id, err)
		}
		// Reversed, so pages are visited in key order.
		for i := len(children) - 1; i >= 0; i-- {
			stack = append(stack, children[i])
		}
	}
	return nil
}

// checkPage checks one branch or leaf page: its elements lie inside buf, its
// keys ascend strictly within [ref.lo, ref.hi). It returns the pages below it:
// a branch's children, with their key ranges, and a leaf's bucket roots.
func checkPage(h header, buf []byte, ref treeRef) ([]treeRef, error) {
	if h.flags != flagBranch && h.flags != flagLeaf {
		return nil, fmt.Errorf("flags %#x, not a branch or leaf page", h.flags)
	}
	if h.flags == flagBranch && h.count == 0 {
		return nil, errors.New("empty branch page")
	}
	if end := pageHeaderSize + uint64(h.count)*elementSize; end > uint64(len(buf)) {
		return nil, fmt.Errorf("%d elements overrun the page", h.count)
	}
	keys := make([][]byte, h.count)
	var below []treeRef
	for i := range uint64(h.count) {
		el := buf[pageHeaderSize+i*elementSize:]
		pos := uint64(binary.LittleEndian.Uint32(el))
		if h.flags == flagLeaf {
			pos = uint64(binary.LittleEndian.Uint32(el[4:]))
		}
		ksize := uint64(binary.LittleEndian.Uint32(el[4:]))
		vsize := uint64(0)
		if h.flags == flagLeaf {
			ksize = uint64(binary.LittleEndian.Uint32(el[8:]))
			vsize = uint64(binary.LittleEndian.Uint32(el[12:]))
		}
		start := pageHeaderSize + i*elementSize + pos
		if start+ksize+vsize > uint64(len(buf)) {
			return nil, fmt.Errorf("element %d (%d+%d bytes at %d) overruns the page", i, ksize, vsize, start)
		}
		k := buf[start : start+ksize]
		switch {
		case i > 0 && bytes.Compare(keys[i-1], k) >= 0:
			return nil, fmt.Errorf("element %d: key %q does not sort after %q", i, clip(k), clip(keys[i-1]))
		case ref.lo != nil && bytes.Compare(k, ref.lo) < 0, ref.hi != nil && bytes.Compare(k, ref.hi) >= 0:
			return nil, fmt.Errorf("element %d: key %q outside its parent's range", i, clip(k))
		}
		keys[i] = k
		if h.flags == flagBranch {
			below = append(below, treeRef{id: binary.LittleEndian.Uint64(el[8:])})
			continue
		}
		if binary.LittleEndian.Uint32(el)&flagBucketEntry == 0 {
			continue
		}
		v := buf[start+ksize : start+ksize+vsize]
		if len(v) < bucketHeaderSize {
			return nil, fmt.Errorf("element %d: bucket %q of %d bytes", i, clip(k), len(v))
		}
		if root := binary.LittleEndian.Uint64(v); root != 0 {
			below = append(below, treeRef{id: root})
		} else if len(v) < bucketHeaderSize+pageHeaderSize {
			return nil, fmt.Errorf("element %d: inline bucket %q of %d bytes", i, clip(k), len(v))
		} else {
			below = append(below, treeRef{inline: v[bucketHeaderSize:]})
		}
	}
	if h.flags == flagBranch {
		for i := range below {
			below[i].lo, below[i].hi = keys[i], ref.hi
			if i+1 < len(keys) {
				below[i].hi = keys[i+1]
			}
		}
	}
	return below, nil
}

// checkPages walks the page tree of the file at path; open calls it once
// bbolt holds the file's lock and before any cursor walks it.
func checkPages(path string) error {
	return withPageFile(path, func(pf *pageFile) error {
		free, err := pf.freePages()
		if err != nil {
			return err
		}
		return pf.walkTree(free)
	})
}

// withPageFile opens the file at path, reads its meta pages and calls fn.
func withPageFile(path string, fn func(*pageFile) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	pf, err := readPageFile(f, fi.Size())
	if err != nil {
		return err
	}
	return fn(pf)
}

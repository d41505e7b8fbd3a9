package driver

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/fenceproof/fenceproof/driver/cidr"
	"github.com/fenceproof/fenceproof/driver/store"
)

// fenceSet is the fence set as the driver holds it: each block with its
// record. Stored record keys become blocks once, when they are loaded
// (loadSet); blocks become record keys when a change is committed (records).
type fenceSet map[cidr.Block]store.Entry

// loadSet reads a stored state.
func loadSet(st store.State) fenceSet {
	s := make(fenceSet, len(st))
	for k, e := range st {
		s[cidr.Spelled(k)] = e
	}
	return s
}

// records is the set as the store keeps it.
func (s fenceSet) records() store.State {
	st := make(store.State, len(s))
	for b, e := range s {
		st[b.String()] = e
	}
	return st
}

// blockKeys are the record keys of blocks.
func blockKeys(bs []cidr.Block) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.String()
	}
	return out
}

// maxSeq is the highest sequence number of the set (0 when empty).
func (s fenceSet) maxSeq() uint64 {
	var m uint64
	for _, e := range s {
		m = max(m, e.Seq)
	}
	return m
}

// prefixes are the prefixes the set enforces; blocks that name none (a
// fault stored them as spelled) are not enforced.
func (s fenceSet) prefixes() []netip.Prefix {
	out := make([]netip.Prefix, 0, len(s))
	for b := range s {
		if b.Enforced() {
			out = append(out, b.Prefix)
		}
	}
	return out
}

// sorted orders the blocks by prefix (IPv4 first, then by address and
// length); blocks that name no prefix come last, by spelling.
func (s fenceSet) sorted() []cidr.Block {
	bs := make([]cidr.Block, 0, len(s))
	for b := range s {
		bs = append(bs, b)
	}
	slices.SortFunc(bs, func(a, b cidr.Block) int {
		switch {
		case a.Enforced() && b.Enforced():
			if c := a.Prefix.Compare(b.Prefix); c != 0 {
				return c
			}
		case a.Enforced() != b.Enforced():
			if a.Enforced() {
				return -1
			}
			return 1
		}
		return strings.Compare(a.String(), b.String())
	})
	return bs
}

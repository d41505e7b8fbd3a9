package refstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// MaxBlocklist bounds the number of prefixes in one blocklist.
const MaxBlocklist = 65536

// Blocklist is an immutable set of fenced prefixes with its generation
// (incremented by every change, persisted with it).
type Blocklist struct {
	Generation uint64
	Prefixes   []netip.Prefix // canonical, deduplicated, sorted
}

// Contains reports whether addr (unmapped) lies in a fenced prefix.
func (b Blocklist) Contains(addr netip.Addr) bool {
	addr = addr.Unmap()
	for _, p := range b.Prefixes {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// Strings returns the prefixes in canonical text form.
func (b Blocklist) Strings() []string {
	out := make([]string, len(b.Prefixes))
	for i, p := range b.Prefixes {
		out[i] = p.String()
	}
	return out
}

// ParseCIDRs parses a complete blocklist strictly: every element must be a
// CIDR block (a bare address or ip:port is an error naming the element).
// Host bits are cleared; IPv4-mapped IPv6 blocks of length >= 96 are
// converted to the IPv4 block they cover, so the storage side fails closed
// whichever form the driver hands over.
func ParseCIDRs(cidrs []string) ([]netip.Prefix, error) {
	if len(cidrs) > MaxBlocklist {
		return nil, fmt.Errorf("%d prefixes exceed the limit of %d", len(cidrs), MaxBlocklist)
	}
	var out []netip.Prefix
	for i, c := range cidrs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return nil, fmt.Errorf("cidrs[%d] %q is not a CIDR block (want e.g. 192.0.2.7/32 or 2001:db8::/64)", i, trunc(c))
		}
		if p.Addr().Zone() != "" {
			return nil, fmt.Errorf("cidrs[%d] %q: zones are not allowed", i, trunc(c))
		}
		p = p.Masked()
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		out = append(out, p)
	}
	slices.SortFunc(out, netip.Prefix.Compare)
	return slices.Compact(out), nil
}

// stateFile is the persisted form of a blocklist.
type stateFile struct {
	Generation uint64   `json:"generation"`
	CIDRs      []string `json:"cidrs"`
}

// loadState reads a persisted blocklist; a missing file is an empty list,
// a corrupt one an error (refstore refuses to start rather than un-fence).
func loadState(path string) (*Blocklist, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Blocklist{}, nil
	}
	if err != nil {
		return nil, err
	}
	var sf stateFile
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sf); err != nil {
		return nil, fmt.Errorf("state file %s is corrupt (%v); refusing to start with an empty blocklist: fix or remove it", path, err)
	}
	ps, err := ParseCIDRs(sf.CIDRs)
	if err != nil {
		return nil, fmt.Errorf("state file %s: %v", path, err)
	}
	return &Blocklist{Generation: sf.Generation, Prefixes: ps}, nil
}

// saveState writes the blocklist atomically and durably: a temporary file
// in the same directory, fsync, rename, fsync of the directory.
func saveState(path string, b *Blocklist) error {
	raw, err := json.Marshal(stateFile{Generation: b.Generation, CIDRs: b.Strings()})
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(raw, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(path)
}

func syncDir(path string) error {
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

//go:build linux

package nftables

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	nft "github.com/google/nftables"

	"github.com/fenceproof/fenceproof/driver/backend"
	"github.com/fenceproof/fenceproof/driver/cidr"
)

var (
	_ backend.Incremental = (*Backend)(nil)
	_ backend.Verifier    = (*Backend)(nil)
)

// Change fences add and unfences remove by sending only the interval
// elements that changed (cidr.Set computes merges and splits), deletions
// before additions, in one atomic batch. If that batch fails (the table was
// deleted or edited behind our back), the whole table is rebuilt with the
// new set instead; if that fails too, nothing changed.
func (b *Backend) Change(_ context.Context, add, remove []netip.Prefix) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.set == nil {
		return errors.New("nftables: Change before the first Apply")
	}
	d := b.set.change(add, remove)
	if d.empty() {
		return nil
	}
	if err := b.sendDelta(d); err != nil {
		if oerr := b.checkOwner(); oerr != nil {
			b.set.change(remove, add)
			return oerr
		}
		if perr := b.program(b.set); perr != nil {
			b.set.change(remove, add)
			return fmt.Errorf("nftables: incremental update failed (%v), and so did rebuilding the table: %w", err, perr)
		}
		b.log.Warn("incremental nftables update failed; rebuilt the whole table instead", "err", err)
	}
	if added := d.added(); len(added) > 0 {
		b.queueForget(added)
	}
	return nil
}

// sendDelta queues the element changes and flushes them as one batch; a
// failed batch changes nothing in the kernel.
func (b *Backend) sendDelta(md delta) error {
	d := md.wide
	f4, f6 := b.sets()
	h4, h6 := b.hostSets()
	rm4, rm6 := split(d.Removed)
	add4, add6 := split(d.Added)
	hosts := func(op func(*nft.Set, []nft.SetElement) error, s *nft.Set, as []netip.Addr, ipv6 bool) error {
		var fam []netip.Addr
		for _, a := range as {
			if a.Is6() == ipv6 {
				fam = append(fam, a)
			}
		}
		for chunk := range slices.Chunk(hostElements(fam), elemChunk) {
			if err := op(s, chunk); err != nil {
				return err
			}
		}
		return nil
	}
	queue := func(op func(*nft.Set, []nft.SetElement) error, s *nft.Set, rs []cidr.Range) error {
		for chunk := range slices.Chunk(elements(rs), elemChunk) {
			if err := op(s, chunk); err != nil {
				return err
			}
		}
		return nil
	}
	err := errors.Join(
		queue(b.conn.SetDeleteElements, f4, rm4), queue(b.conn.SetDeleteElements, f6, rm6),
		hosts(b.conn.SetDeleteElements, h4, md.hostDel, false), hosts(b.conn.SetDeleteElements, h6, md.hostDel, true),
		queue(b.conn.SetAddElements, f4, add4), queue(b.conn.SetAddElements, f6, add6),
		hosts(b.conn.SetAddElements, h4, md.hostAdd, false), hosts(b.conn.SetAddElements, h6, md.hostAdd, true))
	if err == nil {
		err = b.conn.Flush()
	}
	if err != nil {
		// Drop whatever is still queued on the connection.
		if c, nerr := nft.New(b.opts...); nerr == nil {
			b.conn = c
		}
	}
	return err
}

// owner returns the owner tag of the table in force: ok=false when the table
// or its input chain does not exist, "" when it carries no tag.
func (b *Backend) currentOwner() (owner string, rules []*nft.Rule, ok bool) {
	rules, err := b.conn.GetRules(b.tableRef(), &nft.Chain{Name: "input"})
	if err != nil || len(rules) == 0 {
		return "", nil, false
	}
	tag, found := strings.CutPrefix(string(rules[0].UserData), ownerPrefix)
	if !found {
		return "", rules, true
	}
	return tag, rules, true
}

// checkOwner refuses a table tagged by another instance.
func (b *Backend) checkOwner() error {
	if b.owner == "" {
		return nil
	}
	if owner, _, ok := b.currentOwner(); ok && owner != "" && owner != b.owner {
		return fmt.Errorf("nftables table inet %s: %w (instance %s, this one is %s); give each driver in a network namespace its own --table", b.table, backend.ErrForeign, owner, b.owner)
	}
	return nil
}

// Verify compares the table in force with what was last applied: the table
// and its owner tag, the number of rules per chain, the fingerprint of the
// table's flags, chains and rules, and every element of the sets.
func (b *Backend) Verify(context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.set == nil {
		return nil
	}
	owner, rules, ok := b.currentOwner()
	switch {
	case !ok:
		return fmt.Errorf("table inet %s or its input chain is missing: %w", b.table, backend.ErrDrift)
	case b.owner != "" && owner != "" && owner != b.owner:
		return fmt.Errorf("table inet %s: %w (instance %s)", b.table, backend.ErrForeign, owner)
	case owner != b.owner:
		return fmt.Errorf("table inet %s: owner tag changed: %w", b.table, backend.ErrDrift)
	}
	if want := 8 + len(b.controlPorts); len(rules) != want {
		return fmt.Errorf("chain input has %d rules, want %d: %w", len(rules), want, backend.ErrDrift)
	}
	if fw, err := b.conn.GetRules(b.tableRef(), &nft.Chain{Name: "forward"}); err != nil || len(fw) != 7 {
		return fmt.Errorf("chain forward missing or edited (%d rules, want 7): %w", len(fw), backend.ErrDrift)
	}
	switch fp, err := b.fingerprint(); {
	case err != nil:
		return fmt.Errorf("table inet %s unreadable (%v): %w", b.table, err, backend.ErrDrift)
	case fp != b.print:
		return fmt.Errorf("table inet %s edited (a rule, a chain's hook or policy, or the table's flags, e.g. dormant): %w", b.table, backend.ErrDrift)
	}
	for _, h := range []struct {
		name string
		n    int
		ipv6 bool
	}{{Hosts4Name, 4, false}, {Hosts6Name, 16, true}} {
		got, err := b.hostsIn(h.name, h.n)
		if err != nil {
			return fmt.Errorf("set %s unreadable (%v): %w", h.name, err, backend.ErrDrift)
		}
		want := b.set.hostsOf(h.ipv6)
		if len(got) != len(want) {
			return fmt.Errorf("set %s holds %d hosts, want %d: %w", h.name, len(got), len(want), backend.ErrDrift)
		}
		for _, a := range got {
			if b.set.hosts[a] == 0 {
				return fmt.Errorf("set %s holds %s, which is not fenced: %w", h.name, a, backend.ErrDrift)
			}
		}
	}
	want4, want6 := split(b.set.wide.Ranges())
	prot4, prot6 := split(cidr.Union(b.protect))
	for _, s := range []struct {
		name string
		n    int
		want []cidr.Range
	}{{Set4Name, 4, want4}, {Set6Name, 16, want6}, {Protect4Name, 4, prot4}, {Protect6Name, 16, prot6}} {
		got, err := b.rangesOf(s.name, s.n)
		if err != nil {
			return fmt.Errorf("set %s unreadable (%v): %w", s.name, err, backend.ErrDrift)
		}
		if !slices.Equal(got, s.want) {
			return fmt.Errorf("set %s holds %d ranges, want %d (or they differ): %w", s.name, len(got), len(s.want), backend.ErrDrift)
		}
	}
	return nil
}

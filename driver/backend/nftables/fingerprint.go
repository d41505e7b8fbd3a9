//go:build linux

package nftables

import (
	"fmt"
	"hash/fnv"
	"slices"

	nft "github.com/google/nftables"
	"github.com/google/nftables/expr"
)

// fingerprint summarises what decides enforcement besides the set
// elements: the table's flags, each base chain's hook, priority, type and
// policy, and every rule's expressions in order (counter values left out,
// they change with traffic). Another tool that replaces a drop by an
// accept, re-hooks a chain or makes the table dormant changes it even when
// the rule counts stay the same. b.mu is held.
func (b *Backend) fingerprint() (string, error) {
	h := fnv.New128a()
	t, err := b.conn.ListTableOfFamily(b.table, nft.TableFamilyINet)
	if err != nil {
		return "", fmt.Errorf("table inet %s: %w", b.table, err)
	}
	// Any flag (dormant: chains, rules and sets stay, no hook runs) counts;
	// google/nftables v0.3.0 decodes them in host byte order, which is
	// fine for a comparison.
	fmt.Fprintf(h, "table flags=%d\n", t.Flags)
	chains, err := b.conn.ListChainsOfTableFamily(nft.TableFamilyINet)
	if err != nil {
		return "", err
	}
	chains = slices.DeleteFunc(chains, func(c *nft.Chain) bool { return c.Table == nil || c.Table.Name != b.table })
	slices.SortFunc(chains, func(x, y *nft.Chain) int {
		if x.Name < y.Name {
			return -1
		}
		if x.Name > y.Name {
			return 1
		}
		return 0
	})
	for _, c := range chains {
		fmt.Fprintf(h, "chain %q type=%s", c.Name, c.Type)
		if c.Hooknum != nil {
			fmt.Fprintf(h, " hook=%d", *c.Hooknum)
		}
		if c.Priority != nil {
			fmt.Fprintf(h, " prio=%d", *c.Priority)
		}
		if c.Policy != nil {
			fmt.Fprintf(h, " policy=%d", *c.Policy)
		}
		h.Write([]byte{'\n'})
		rules, err := b.conn.GetRules(b.tableRef(), &nft.Chain{Name: c.Name})
		if err != nil {
			return "", fmt.Errorf("rules of chain %s: %w", c.Name, err)
		}
		for _, r := range rules {
			fmt.Fprintf(h, "rule %q", r.UserData)
			for _, e := range r.Exprs {
				if _, ok := e.(*expr.Counter); ok {
					fmt.Fprint(h, " counter")
					continue
				}
				fmt.Fprintf(h, " %#v", e)
			}
			h.Write([]byte{'\n'})
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

package isolation

import (
	"fmt"
	"slices"
	"strings"
)

// Mismatch is one cell where the observed verdict differs from the
// expected one.
type Mismatch struct {
	Case     PortProto
	From, To string
	Expected Verdict
	Observed Verdict
}

// String names the cell exactly, e.g.
// "tcp/80 app/stranger -> mods/m0: expected X (blocked), observed . (allowed)".
func (m Mismatch) String() string {
	return fmt.Sprintf("%s %s -> %s: expected %c (%s), observed %c (%s)",
		m.Case, m.From, m.To, m.Expected.Char(), m.Expected, m.Observed.Char(), m.Observed)
}

// Diff lists the cells where observed differs from expected, in case, row,
// column order. The matrices must have the same peers and cases.
func Diff(expected, observed *Matrix) ([]Mismatch, error) {
	if !slices.Equal(expected.Peers, observed.Peers) || !slices.Equal(expected.Cases, observed.Cases) {
		return nil, fmt.Errorf("matrices differ in shape: peers %v vs %v, cases %v vs %v",
			expected.Peers, observed.Peers, expected.Cases, observed.Cases)
	}
	var out []Mismatch
	for c := range expected.Cases {
		for i := range expected.Peers {
			for j := range expected.Peers {
				e, o := expected.At(c, i, j), observed.At(c, i, j)
				if e != o {
					out = append(out, Mismatch{Case: expected.Cases[c], From: expected.Peers[i], To: expected.Peers[j], Expected: e, Observed: o})
				}
			}
		}
	}
	return out, nil
}

// column labels peers 0-9 then a-z then A-Z, so that every cell is one
// character wide.
func column(i int) byte {
	const labels = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	if i < len(labels) {
		return labels[i]
	}
	return '+'
}

// Table renders case c of m: one row per source, one column per
// destination, '.' allowed, 'X' blocked, '?' unknown.
func (m *Matrix) Table(c int) string {
	return m.render(fmt.Sprintf("%s (row: from, column: to; . allowed, X blocked, ? unknown)", m.Cases[c]),
		func(i, j int) byte { return m.At(c, i, j).Char() })
}

// DiffTable renders case c of the difference: '.' where observed equals
// expected, 'X' where it differs. The shapes must match (see Diff).
func DiffTable(expected, observed *Matrix, c int) string {
	return expected.render(fmt.Sprintf("%s (row: from, column: to; . same, X differs)", expected.Cases[c]),
		func(i, j int) byte {
			if expected.At(c, i, j) == observed.At(c, i, j) {
				return '.'
			}
			return 'X'
		})
}

func (m *Matrix) render(title string, cell func(i, j int) byte) string {
	width := 0
	for _, p := range m.Peers {
		width = max(width, len(p))
	}
	var b strings.Builder
	b.WriteString(title + "\n")
	fmt.Fprintf(&b, "%*s ", width+2, "")
	for j := range m.Peers {
		b.WriteByte(column(j))
	}
	b.WriteByte('\n')
	for i, p := range m.Peers {
		fmt.Fprintf(&b, "%c %-*s ", column(i), width, p)
		for j := range m.Peers {
			b.WriteByte(cell(i, j))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Tables renders every case of m.
func (m *Matrix) Tables() string {
	var parts []string
	for c := range m.Cases {
		parts = append(parts, m.Table(c))
	}
	return strings.Join(parts, "\n")
}

// DiffTables renders the difference for every case.
func DiffTables(expected, observed *Matrix) string {
	var parts []string
	for c := range expected.Cases {
		parts = append(parts, DiffTable(expected, observed, c))
	}
	return strings.Join(parts, "\n")
}

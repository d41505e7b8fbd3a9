package reach

import (
	"fmt"
	"strings"
)

// Cell pins the verdict of one cell.
type Cell struct {
	From, To string
	Case     PortProto
	Verdict  Verdict
}

// ParseCell parses "FROM -> TO PROTO/PORT V" with V "." (allowed) or "X"
// (blocked).
func ParseCell(s string) (Cell, error) {
	f := strings.Fields(s)
	if len(f) != 5 || f[1] != "->" {
		return Cell{}, fmt.Errorf("cell %q: want FROM -> TO PROTO/PORT ./X", s)
	}
	pc, err := ParsePortProto(f[3])
	if err != nil {
		return Cell{}, fmt.Errorf("cell %q: %w", s, err)
	}
	c := Cell{From: f[0], To: f[2], Case: pc}
	switch f[4] {
	case ".":
		c.Verdict = Allowed
	case "X":
		c.Verdict = Blocked
	default:
		return Cell{}, fmt.Errorf("cell %q: verdict %q is neither . nor X", s, f[4])
	}
	return c, nil
}

// String renders the cell as ParseCell reads it.
func (c Cell) String() string {
	return fmt.Sprintf("%s -> %s %s %c", c.From, c.To, c.Case, c.Verdict.Char())
}

// Check returns one message per cell whose verdict in m differs, or that m
// does not have.
func Check(m *Matrix, cells []Cell) []string {
	var out []string
	for _, c := range cells {
		v, ok := m.Get(c.Case, c.From, c.To)
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: no such cell in the matrix", c))
		case v != c.Verdict:
			out = append(out, fmt.Sprintf("%s: matrix says %c (%s)", c, v.Char(), v))
		}
	}
	return out
}

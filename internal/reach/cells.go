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
	// Profile, when set, limits the pin to one network plugin profile
	// (netpolmodel.Profile.Name), for what the API leaves open.
	Profile string
}

// ParseCell parses "FROM -> TO PROTO/PORT V [PROFILE]" with V "."
// (allowed) or "X" (blocked).
func ParseCell(s string) (Cell, error) {
	f := strings.Fields(s)
	if (len(f) != 5 && len(f) != 6) || f[1] != "->" {
		return Cell{}, fmt.Errorf("cell %q: want FROM -> TO PROTO/PORT ./X [PROFILE]", s)
	}
	pc, err := ParsePortProto(f[3])
	if err != nil {
		return Cell{}, fmt.Errorf("cell %q: %w", s, err)
	}
	c := Cell{From: f[0], To: f[2], Case: pc}
	if len(f) == 6 {
		c.Profile = f[5]
	}
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
	s := fmt.Sprintf("%s -> %s %s %c", c.From, c.To, c.Case, c.Verdict.Char())
	if c.Profile != "" {
		s += " " + c.Profile
	}
	return s
}

// Check returns one message per cell pinned for profile (cells without a
// profile always apply) whose verdict in m differs, or that m lacks.
func Check(m *Matrix, cells []Cell, profile string) []string {
	var out []string
	for _, c := range cells {
		if c.Profile != "" && c.Profile != profile {
			continue
		}
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

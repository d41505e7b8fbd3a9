package isolation

import (
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

// MatrixCase is one matrix case of a suite: an application spec and the
// cells that pin what the case is about.
type MatrixCase struct {
	// ID is the case's stable ID (e.g. ISOLATION-003).
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Spec        string   `json:"spec"`
	RawCells    []string `json:"cells"`
	Cells       []Cell   `json:"-"`
}

// LoadCases reads a case file strictly and parses its cells.
func LoadCases(path string) ([]MatrixCase, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cs []MatrixCase
	if err := yaml.UnmarshalStrict(data, &cs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	seen := map[string]bool{}
	for i := range cs {
		c := &cs[i]
		if c.ID == "" || c.Name == "" || c.Spec == "" || seen["id "+c.ID] || seen[c.Name] {
			return nil, fmt.Errorf("%s: case %d: id and name (both unique) and spec are required", path, i)
		}
		seen["id "+c.ID], seen[c.Name] = true, true
		for _, s := range c.RawCells {
			cell, err := ParseCell(s)
			if err != nil {
				return nil, fmt.Errorf("%s: case %s: %w", path, c.Name, err)
			}
			c.Cells = append(c.Cells, cell)
		}
	}
	return cs, nil
}

// Cell pins the verdict of one cell.
type Cell struct {
	From, To string
	Case     PortProto
	Verdict  Verdict
	// Profile, when set, limits the pin to one network plugin profile
	// (Profile.Name), for what the API leaves open.
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

// CheckCells returns one message per cell pinned for profile (cells without a
// profile always apply) whose verdict in m differs, or that m lacks.
func CheckCells(m *Matrix, cells []Cell, profile string) []string {
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

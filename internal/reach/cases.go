package reach

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// SpecCase is one matrix case of a suite: an application spec and the
// cells that pin what the case is about.
type SpecCase struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Spec        string   `json:"spec"`
	RawCells    []string `json:"cells"`
	Cells       []Cell   `json:"-"`
}

// LoadCases reads a case file strictly and parses its cells.
func LoadCases(path string) ([]SpecCase, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cs []SpecCase
	if err := yaml.UnmarshalStrict(data, &cs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	seen := map[string]bool{}
	for i := range cs {
		c := &cs[i]
		if c.Name == "" || c.Spec == "" || seen[c.Name] {
			return nil, fmt.Errorf("%s: case %d: name (unique) and spec are required", path, i)
		}
		seen[c.Name] = true
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

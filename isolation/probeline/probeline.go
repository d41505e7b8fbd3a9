// Package probeline is the wire format of `probe connect` (cmd/probe): one
// JSON line per connection attempt. The probe writes it inside a pod; the
// e2e suites read it back through the exec API.
package probeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Line is what `probe connect` prints for one fresh connection.
type Line struct {
	To    string `json:"to"`
	Proto string `json:"proto"`
	OK    bool   `json:"ok"`
	Error string `json:"error"`
	Reply string `json:"reply"`
	Ms    int64  `json:"ms"`
}

// String is the line as the probe prints it.
func (l Line) String() string {
	b, _ := json.Marshal(l)
	return string(b)
}

// ParseAll reads every line of `probe connect-all`'s output, in order; a
// line that is not a probe line is an error.
func ParseAll(out []byte) ([]Line, error) {
	var lines []Line
	for _, raw := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.TrimSpace(raw) == "" {
			continue
		}
		l, err := Parse([]byte(raw))
		if err != nil {
			return nil, err
		}
		lines = append(lines, l)
	}
	return lines, nil
}

// Parse reads the last non-empty line of a probe's output. A line without
// the ok field is an error, so that noise is never read as "unreachable".
func Parse(out []byte) (Line, error) {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return Line{}, errors.New("probe printed nothing")
	}
	var l struct {
		Line
		OK *bool `json:"ok"`
	}
	if err := json.Unmarshal([]byte(last), &l); err != nil {
		return Line{}, fmt.Errorf("probe output %q: %w", last, err)
	}
	if l.OK == nil {
		return Line{}, fmt.Errorf("probe output %q has no ok field", last)
	}
	l.Line.OK = *l.OK
	return l.Line, nil
}

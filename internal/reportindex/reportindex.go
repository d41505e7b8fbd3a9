// Package reportindex writes reports/index.html, the reports' front page:
// first the verdicts a user came for, one line each with its key figure,
// read from the producers' machine-readable reports (Sources: sanity,
// csi-proxy, make e2e, fencing, isolation, the simulator's comparison;
// failures first, a missing report as "not run"); then every report file of
// the run, grouped by the producer that wrote it and folded, with the
// verdict read from the file itself where it has one.
package reportindex

import (
	"os"
	"path/filepath"
	"time"
)

// Write reads the verdicts and scans dir, writes dir/index.html and returns
// both.
func Write(dir string) ([]Line, []Entry, error) {
	es, err := Scan(dir)
	if err != nil {
		return nil, nil, err
	}
	lines := Verdicts(dir)
	return lines, es, os.WriteFile(filepath.Join(dir, "index.html"), []byte(HTML(lines, es, time.Now())), 0o644)
}

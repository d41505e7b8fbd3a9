package store

import "fmt"

// Report is what Verify found in a healthy file.
type Report struct {
	Records  int
	Instance string
}

// Verify checks a state file offline, read-only, without taking it over:
// everything Open checks, then checkKey on every key (the driver passes its
// canonical-prefix check). A format-1 file is reported, not upgraded.
func Verify(path string, checkKey func(string) error) (Report, error) {
	s, err := open(path, true)
	if err != nil {
		return Report{}, err
	}
	defer s.Close()
	st, err := s.Load()
	if err != nil {
		return Report{}, fmt.Errorf("state file %s: %w", path, err)
	}
	if checkKey != nil {
		for k := range st {
			if err := checkKey(k); err != nil {
				return Report{}, fmt.Errorf("state file %s: record %q: %w", path, clip([]byte(k)), err)
			}
		}
	}
	return Report{Records: len(st), Instance: s.instance}, nil
}

// precheck reads the file before bolt.Open maps it: both meta pages (see
// readPageFile) and the freelist page, which bolt.Open loads.
func precheck(path string) error {
	return withPageFile(path, func(pf *pageFile) error {
		_, err := pf.freePages()
		return err
	})
}

package ceph

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// owned is what the backend knows of one entry it added.
type owned struct {
	// Until is the expiry Ceph reported when this backend's add committed:
	// the entry is still this backend's while the OSD map shows exactly
	// it. Empty while an add is in flight (or its answer was lost).
	Until string `json:"until,omitempty"`
	// SentNs is when the add was sent (unix ns): an in-flight add is
	// recognised by its expiry, SentNs + the expiry, within recognizeSkew.
	SentNs int64 `json:"sent_ns"`
	// Expiry is the expiry the add asked for.
	Expiry time.Duration `json:"expiry"`
}

// record is the backend's ownership record, persisted next to the driver's
// state file: which blocklist entries this driver instance added. Entries
// of the blocklist that are not in it, or that another actor replaced
// since (their expiry differs: Ceph never changes an entry's expiry in
// place), are foreign: never reported as this driver's, never removed.
type record struct {
	Owner   string           `json:"owner"`
	Entries map[string]owned `json:"entries"`
}

// recognizeSkew bounds the clock difference between this host and the mon
// (and the time an add may take) when recognising an in-flight add by its
// expiry.
const recognizeSkew = 2 * time.Minute

// loadRecord reads the record at path; a missing file is an empty record.
// A record of another owner is an error: the entries belong to another
// driver instance (another state file).
func loadRecord(path, owner string) (record, error) {
	r := record{Owner: owner, Entries: map[string]owned{}}
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, err
	}
	var got record
	if err := json.Unmarshal(raw, &got); err != nil {
		return r, fmt.Errorf("ceph ownership record %s: %v", path, err)
	}
	if owner != "" && got.Owner != owner {
		return r, fmt.Errorf("ceph ownership record %s belongs to driver instance %q, not %q (this state file's); give each state file its own record", path, got.Owner, owner)
	}
	for k := range got.Entries {
		if _, err := parseEntryKey(k); err != nil {
			return r, fmt.Errorf("ceph ownership record %s: %v", path, err)
		}
	}
	if got.Entries != nil {
		r.Entries = got.Entries
	}
	return r, nil
}

// save writes the record atomically and durably.
func (r record) save(path string) error {
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(raw); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// ours reports whether the OSD map's entry with expiry until is the one
// this record describes: the expiry Ceph reported for our add, or, for an
// add whose answer never arrived, an expiry that add could have produced.
func (o owned) ours(until string) bool {
	if o.Until != "" {
		return o.Until == until
	}
	t, err := parseUntil(until)
	if err != nil {
		return false
	}
	sent := time.Unix(0, o.SentNs).Add(o.Expiry)
	return t.After(sent.Add(-recognizeSkew)) && t.Before(time.Now().Add(o.Expiry).Add(recognizeSkew))
}

// untilLayout is how Ceph prints an expiry: 2026-11-24T13:16:14.976769+0000.
const untilLayout = "2006-01-02T15:04:05.999999-0700"

func parseUntil(s string) (time.Time, error) { return time.Parse(untilLayout, s) }

package store

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	want := State{"192.0.2.0/24": {Seq: 1, Count: 1}, "2001:db8::/32": {Seq: 2, Count: 3}}
	if err := s.Set(want); err != nil {
		t.Fatal(err)
	}
	next := maps.Clone(want)
	delete(next, "192.0.2.0/24")
	next["198.51.100.0/24"] = Entry{Seq: 3, Count: 1}
	if err := s.Set(next); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, next) {
		t.Fatalf("reloaded %v, want %v", got, next)
	}
}

func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := filepath.Join(dir, "good.db")
	s, err := Open(good)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Set(State{"192.0.2.0/24": {Seq: 1, Count: 1}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	raw, _ := os.ReadFile(good)
	garbage := make([]byte, len(raw))
	for i := range garbage {
		garbage[i] = byte(i * 7)
	}
	tests := map[string]string{
		"":                                      "required",
		write("empty.db", nil):                  "empty",
		write("garbage.db", garbage):            "state file",
		write("text.db", []byte("hello world")): "state file",
		write("truncated.db", raw[:len(raw)/3]): "state file",
		dir:                                     "directory",
	}
	for path, want := range tests {
		s, err := Open(path)
		if err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded, want error", path)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%q) = %v, want it to mention %q", path, err, want)
		}
	}
}

func TestForeignBolt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("other")); return err }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if s, err := Open(path); err == nil || !strings.Contains(err.Error(), "not a fenceproof state file") {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open of a foreign bbolt file: %v", err)
	}
}

func TestCorruptRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketFences).Put([]byte("192.0.2.0/24"), []byte{1}) }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err := Open(path); err == nil || !strings.Contains(err.Error(), "corrupt record") {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open with a corrupt record: %v", err)
	}
}

func TestLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s2, err := Open(path); err == nil || !strings.Contains(err.Error(), "locked") {
		if s2 != nil {
			s2.Close()
		}
		t.Fatalf("second Open of a held file: %v", err)
	}
}

// FuzzRecord decodes arbitrary record bytes under an arbitrary key: either
// an error, or an entry with a non-zero count that encodes back to exactly
// the same bytes (no two byte strings load as one record).
func FuzzRecord(f *testing.F) {
	f.Add("192.0.2.0/24", encode("192.0.2.0/24", Entry{Seq: 7, Count: 1}))
	f.Add("10.0.0.0/12", encode("10.0.0.0/32", Entry{Seq: 1, Count: 2}))
	f.Add("x", []byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, key string, v []byte) {
		e, err := decode([]byte(key), v)
		if err != nil {
			return
		}
		if e.Count == 0 {
			t.Fatalf("decode(%q, %x) accepted count 0", key, v)
		}
		if back := encode(key, e); !bytes.Equal(back, v) {
			t.Fatalf("decode(%q, %x) = %+v encodes as %x", key, v, e, back)
		}
	})
}

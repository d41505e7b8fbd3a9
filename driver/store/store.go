// Package store keeps the fence set durably in a bbolt file. Every write is
// one bbolt transaction, committed with fsync before Set returns, so a fence
// acknowledged after Set survives kill -9 and power loss.
//
// The file holds two buckets: "meta" (the format marker) and "fences", whose
// keys are the stored prefix strings (canonical form unless a fault says
// otherwise) and whose values are a sequence number (fence order) and a
// count (always 1 unless the no-dedupe fault is active).
package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

const format = "fenceproof-fences/1"

var (
	bucketMeta   = []byte("meta")
	bucketFences = []byte("fences")
	keyFormat    = []byte("format")
)

// Entry is the stored record of one fenced prefix.
type Entry struct {
	Seq   uint64 // order in which the prefix was (last) fenced; higher is newer
	Count uint32 // times it is stored; 1 in faithful mode
}

// State is the whole fence set, keyed by stored prefix string.
type State map[string]Entry

// Clone returns a copy of s that can be modified freely.
func (s State) Clone() State {
	c := make(State, len(s))
	for k, v := range s {
		c[k] = v
	}
	return c
}

// MaxSeq returns the highest sequence number in s (0 when empty).
func (s State) MaxSeq() uint64 {
	var m uint64
	for _, e := range s {
		m = max(m, e.Seq)
	}
	return m
}

// Store is an open state file.
type Store struct {
	db *bolt.DB
}

// Open opens or creates the state file at path. An existing file that is not
// a valid fenceproof state file (corrupt, truncated, foreign, locked by
// another process) is an error: it is never treated as an empty fence set.
func Open(path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("state path is required")
	}
	fresh := false
	switch fi, err := os.Stat(path); {
	case errors.Is(err, os.ErrNotExist):
		fresh = true
	case err != nil:
		return nil, fmt.Errorf("state file %s: %w", path, err)
	case fi.IsDir():
		return nil, fmt.Errorf("state file %s is a directory", path)
	case fi.Size() == 0:
		return nil, fmt.Errorf("state file %s is empty (truncated?); refusing to start with no fences", path)
	}
	if !fresh {
		if err := precheck(path); err != nil {
			return nil, fmt.Errorf("state file %s: %w", path, err)
		}
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("state file %s is locked by another process (another driver running?)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("open state file %s: %w", path, err)
	}
	s := &Store{db: db}
	if fresh {
		err = db.Update(func(tx *bolt.Tx) error {
			m, err := tx.CreateBucket(bucketMeta)
			if err != nil {
				return err
			}
			if _, err := tx.CreateBucket(bucketFences); err != nil {
				return err
			}
			return m.Put(keyFormat, []byte(format))
		})
	} else {
		err = s.check()
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("state file %s: %w", path, err)
	}
	return s, nil
}

// precheck reads the two bbolt meta pages and verifies that the file is as
// long as they claim. bbolt maps the file and would die of SIGBUS on a
// truncated one instead of returning an error, so this runs before bolt.Open.
func precheck(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	const magic = 0xED0CDAED
	hdr := make([]byte, 80)
	if _, err := f.ReadAt(hdr, 0); err != nil {
		return fmt.Errorf("not a bbolt file (short header): %w", err)
	}
	if binary.LittleEndian.Uint32(hdr[16:]) != magic {
		return errors.New("not a bbolt file (bad magic)")
	}
	pageSize := int64(binary.LittleEndian.Uint32(hdr[24:]))
	if pageSize < 512 || pageSize > 1<<20 {
		return fmt.Errorf("corrupt meta page (page size %d)", pageSize)
	}
	for i := int64(0); i < 2; i++ {
		if _, err := f.ReadAt(hdr, i*pageSize); err != nil {
			return fmt.Errorf("truncated: meta page %d unreadable: %w", i, err)
		}
		if binary.LittleEndian.Uint32(hdr[16:]) != magic {
			continue
		}
		if hwm := int64(binary.LittleEndian.Uint64(hdr[56:])); hwm*pageSize > fi.Size() {
			return fmt.Errorf("truncated: %d bytes, meta page %d needs %d", fi.Size(), i, hwm*pageSize)
		}
	}
	return nil
}

// check verifies the format marker and that every record is well formed.
func (s *Store) check() error {
	return s.db.View(func(tx *bolt.Tx) error {
		m := tx.Bucket(bucketMeta)
		if m == nil || string(m.Get(keyFormat)) != format {
			return errors.New("not a fenceproof state file (format marker missing)")
		}
		f := tx.Bucket(bucketFences)
		if f == nil {
			return errors.New("fences bucket missing")
		}
		return f.ForEach(func(k, v []byte) error {
			if _, err := decode(v); err != nil {
				return fmt.Errorf("record %q: %w", k, err)
			}
			return nil
		})
	})
}

func encode(e Entry) []byte {
	b := make([]byte, 12)
	binary.BigEndian.PutUint64(b, e.Seq)
	binary.BigEndian.PutUint32(b[8:], e.Count)
	return b
}

func decode(v []byte) (Entry, error) {
	if len(v) != 12 {
		return Entry{}, fmt.Errorf("corrupt record of %d bytes", len(v))
	}
	e := Entry{Seq: binary.BigEndian.Uint64(v), Count: binary.BigEndian.Uint32(v[8:])}
	if e.Count == 0 {
		return Entry{}, errors.New("corrupt record with count 0")
	}
	return e, nil
}

// Load returns the whole stored fence set.
func (s *Store) Load() (State, error) {
	st := State{}
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketFences).ForEach(func(k, v []byte) error {
			e, err := decode(v)
			if err != nil {
				return fmt.Errorf("record %q: %w", k, err)
			}
			st[string(k)] = e
			return nil
		})
	})
	return st, err
}

// Set makes the stored fence set exactly next, in one transaction committed
// to disk before it returns. Only records that differ are written.
func (s *Store) Set(next State) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketFences)
		var stale [][]byte
		seen := make(map[string]bool, len(next))
		err := b.ForEach(func(k, v []byte) error {
			e, ok := next[string(k)]
			if !ok {
				stale = append(stale, append([]byte(nil), k...))
				return nil
			}
			seen[string(k)] = true
			if old, err := decode(v); err != nil || old != e {
				return b.Put(append([]byte(nil), k...), encode(e))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range stale {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		for k, e := range next {
			if !seen[k] {
				if k == "" {
					return errors.New("cannot store an empty key")
				}
				if err := b.Put([]byte(k), encode(e)); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

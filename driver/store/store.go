// Package store keeps the fence set durably in a bbolt file. Every write is
// one bbolt transaction, committed with fsync before it returns, so a fence
// acknowledged after a write survives kill -9 and power loss.
//
// The file holds two buckets: "meta" (format marker, instance id, digest)
// and "fences", whose keys are the stored prefix strings (canonical form
// unless a fault says otherwise) and whose values are a sequence number
// (fence order), a count (always 1 unless the no-dedupe fault is active) and
// a checksum; record.go has the layout. Opening verifies everything: both
// bbolt meta pages and the freelist, the page tree (every page in the file,
// reached once, elements inside their page, keys in order; pages.go), every
// record's checksum and the digest over all records. A file that fails any
// check is an error naming what is wrong, never an empty or different fence
// set, a crash or a hang, and a bbolt panic on a corrupt page is turned into
// such an error.
package store

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

const (
	format       = "fenceproof-fences/2"
	legacyFormat = "fenceproof-fences/1"
)

var (
	bucketMeta   = []byte("meta")
	bucketFences = []byte("fences")
	keyFormat    = []byte("format")
	keyInstance  = []byte("instance")
	keyDigest    = []byte("digest")
)

// Entry is the stored record of one fenced prefix.
type Entry struct {
	Seq   uint64 // order in which the prefix was (last) fenced; higher is newer
	Count uint32 // times it is stored; 1 in faithful mode
}

// State is the whole fence set, keyed by stored prefix string.
type State map[string]Entry

// Store is an open state file.
type Store struct {
	db       *bolt.DB
	instance string
}

// Open opens or creates the state file at path. An existing file that is not
// a valid fenceproof state file (corrupt, truncated, foreign, locked by
// another process) is an error: it is never treated as an empty fence set.
// A format-1 file (no checksums) is upgraded in place in one transaction.
func Open(path string) (*Store, error) {
	return open(path, false)
}

func open(path string, readOnly bool) (s *Store, err error) {
	if path == "" {
		return nil, errors.New("state path is required")
	}
	fresh := false
	switch fi, err := os.Stat(path); {
	case errors.Is(err, os.ErrNotExist) && !readOnly:
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
	var db *bolt.DB
	defer guard(&err, func() {
		if db != nil {
			db.Close()
		}
		err = fmt.Errorf("state file %s: %w", path, err)
	})()
	db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second, ReadOnly: readOnly})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("state file %s is locked by another process (another driver running?)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("open state file %s: %w", path, err)
	}
	s = &Store{db: db}
	if fresh {
		err = s.create()
	} else if err = checkPages(path); err == nil {
		// Under bbolt's lock, so no other driver rewrites pages meanwhile,
		// and before any cursor walks the tree.
		err = s.check(readOnly)
	}
	if err != nil {
		db.Close()
		db = nil
		return nil, fmt.Errorf("state file %s: %w", path, err)
	}
	return s, nil
}

// guard makes a memory fault on the mapped file a panic instead of a crash
// and returns the function to defer, which turns a panic (bbolt on a corrupt
// page, or such a fault) into an error; onPanic wraps and cleans up.
func guard(err *error, onPanic func()) func() {
	old := debug.SetPanicOnFault(true)
	return func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			*err = fmt.Errorf("corrupt (bbolt: %v)", r)
			onPanic()
		}
	}
}

func (s *Store) create() error {
	inst, err := newInstance()
	if err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		m, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		if _, err := tx.CreateBucket(bucketFences); err != nil {
			return err
		}
		if err := m.Put(keyInstance, inst); err != nil {
			return err
		}
		if err := m.Put(keyDigest, digest{}.encode()); err != nil {
			return err
		}
		s.instance, _ = decodeInstance(inst)
		return m.Put(keyFormat, []byte(format))
	})
}

// check verifies the format marker, every record and the digest. A
// format-1 file is upgraded (unless readOnly). checkPages has already
// checked the page tree the cursors walk. bbolt's own tx.Check is not used:
// it walks pages in a goroutine of its own, where a fault on a corrupt page
// cannot be recovered and kills the process, and it descends again into a
// page it has already reported as reached twice, so a page cycle never ends.
func (s *Store) check(readOnly bool) error {
	err := s.db.View(func(tx *bolt.Tx) error {
		m, f := tx.Bucket(bucketMeta), tx.Bucket(bucketFences)
		if m == nil {
			return errors.New("not a fenceproof state file (meta bucket missing)")
		}
		if f == nil {
			return errors.New("fences bucket missing")
		}
		switch string(m.Get(keyFormat)) {
		case format:
		case legacyFormat:
			return errLegacy
		default:
			return fmt.Errorf("not a fenceproof state file (format marker %q, want %q)", clip(m.Get(keyFormat)), format)
		}
		var err error
		if s.instance, err = decodeInstance(m.Get(keyInstance)); err != nil {
			return err
		}
		want, err := decodeDigest(m.Get(keyDigest))
		if err != nil {
			return err
		}
		var got digest
		err = f.ForEach(func(k, v []byte) error {
			if _, err := decode(k, v); err != nil {
				return fmt.Errorf("record %q: %w", clip(k), err)
			}
			got.add(k, v)
			return nil
		})
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("digest mismatch: %d records found, %d committed (records lost, added or altered)", got.records, want.records)
		}
		return nil
	})
	if errors.Is(err, errLegacy) && !readOnly {
		return s.upgrade()
	}
	return err
}

var errLegacy = errors.New("format 1 (no checksums)")

// upgrade rewrites a format-1 file as format 2 in one transaction.
func (s *Store) upgrade() error {
	inst, err := newInstance()
	if err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		m, f := tx.Bucket(bucketMeta), tx.Bucket(bucketFences)
		old := map[string][]byte{}
		if err := f.ForEach(func(k, v []byte) error {
			e, err := decodeLegacy(v)
			if err != nil {
				return fmt.Errorf("record %q: %w", clip(k), err)
			}
			old[string(k)] = encode(string(k), e)
			return nil
		}); err != nil {
			return err
		}
		var d digest
		for _, k := range slices.Sorted(maps.Keys(old)) {
			if err := f.Put([]byte(k), old[k]); err != nil {
				return err
			}
			d.add([]byte(k), old[k])
		}
		if err := m.Put(keyInstance, inst); err != nil {
			return err
		}
		if err := m.Put(keyDigest, d.encode()); err != nil {
			return err
		}
		s.instance, _ = decodeInstance(inst)
		return m.Put(keyFormat, []byte(format))
	})
}

// InstanceID is a random id created with the file: it names the driver
// instance whose fences the file holds (the nftables backend tags its table
// with it, so two instances never take over each other's table).
func (s *Store) InstanceID() string { return s.instance }

// clip bounds a value read from a corrupt file before it goes into an error.
func clip(b []byte) string {
	const n = 64
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// Load returns the whole stored fence set.
func (s *Store) Load() (st State, err error) {
	defer guard(&err, func() {})()
	st = State{}
	err = s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketFences).ForEach(func(k, v []byte) error {
			e, err := decode(k, v)
			if err != nil {
				return fmt.Errorf("record %q: %w", clip(k), err)
			}
			st[string(k)] = e
			return nil
		})
	})
	return st, err
}

// Update writes put and deletes del in one transaction committed to disk
// before it returns; the cost grows with the change, not the stored set.
func (s *Store) Update(put State, del []string) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		m, f := tx.Bucket(bucketMeta), tx.Bucket(bucketFences)
		d, err := decodeDigest(m.Get(keyDigest))
		if err != nil {
			return err
		}
		for _, k := range del {
			if v := f.Get([]byte(k)); v != nil {
				d.sub([]byte(k), v)
				if err := f.Delete([]byte(k)); err != nil {
					return err
				}
			}
		}
		// Sorted puts fill bbolt pages in order instead of splitting them.
		for _, k := range slices.Sorted(maps.Keys(put)) {
			if k == "" {
				return errors.New("cannot store an empty key")
			}
			if v := f.Get([]byte(k)); v != nil {
				d.sub([]byte(k), v)
			}
			v := encode(k, put[k])
			if err := f.Put([]byte(k), v); err != nil {
				return err
			}
			d.add([]byte(k), v)
		}
		return m.Put(keyDigest, d.encode())
	})
}

// Set makes the stored fence set exactly next, in one transaction.
func (s *Store) Set(next State) error {
	cur, err := s.Load()
	if err != nil {
		return err
	}
	put, del := Diff(cur, next)
	return s.Update(put, del)
}

// Diff returns what Update needs to turn cur into next.
func Diff(cur, next State) (put State, del []string) {
	put = State{}
	for k, e := range next {
		if old, ok := cur[k]; !ok || old != e {
			put[k] = e
		}
	}
	for k := range cur {
		if _, ok := next[k]; !ok {
			del = append(del, k)
		}
	}
	return put, del
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// layout says where things are in a state file, found through bbolt's own
// API (and the meta page bbolt reports it opened), not through pages.go.
type layout struct {
	pageSize, hwm int
	fencesRoot    int // the fences bucket's root page
	rootLeaf      int // the root bucket's page, holding both buckets
	freelist      int // the freelist page bbolt loads
	freeLeaf      int // a leaf page on the freelist: an older version of a live page
}

func findLayout(t *testing.T, raw []byte) layout {
	t.Helper()
	path := filepath.Join(t.TempDir(), "layout.db")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l := layout{pageSize: db.Info().PageSize, freeLeaf: -1, freelist: -1}
	err = db.View(func(tx *bolt.Tx) error {
		l.hwm = int(tx.Size()) / l.pageSize
		l.fencesRoot = int(tx.Bucket(bucketFences).RootPage())
		for i := range 2 {
			m := raw[i*l.pageSize:]
			if binary.LittleEndian.Uint64(m[metaTxid:]) == uint64(tx.ID()) {
				l.rootLeaf = int(binary.LittleEndian.Uint64(m[metaRoot:]))
			}
		}
		for id := 2; id < l.hwm; id++ {
			info, err := tx.Page(id)
			if err != nil {
				return err
			}
			switch {
			case info.Type == "freelist":
				l.freelist = id
			case info.Type == "free" && l.freeLeaf < 0 && binary.LittleEndian.Uint16(raw[id*l.pageSize+8:]) == flagLeaf:
				l.freeLeaf = id
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if l.fencesRoot == 0 || l.rootLeaf == 0 || l.freelist < 0 || l.freeLeaf < 0 {
		t.Fatalf("base file lacks the shape these tests edit: %+v", l)
	}
	if binary.LittleEndian.Uint16(raw[l.fencesRoot*l.pageSize+8:]) != flagBranch {
		t.Fatalf("fences root page %d is not a branch page", l.fencesRoot)
	}
	return l
}

// at returns the offset of byte off of page id.
func (l layout) at(id, off int) int { return id*l.pageSize + off }

// child returns the offset of the child page id in element i of branch page id.
func (l layout) child(id, i int) int { return l.at(id, pageHeaderSize+i*elementSize+8) }

// branchKey returns the offset of the key of element i of branch page id.
func (l layout) branchKey(raw []byte, id, i int) int {
	el := l.at(id, pageHeaderSize+i*elementSize)
	return el + int(binary.LittleEndian.Uint32(raw[el:]))
}

func count(raw []byte, l layout, id int) int {
	return int(binary.LittleEndian.Uint16(raw[l.at(id, 10):]))
}

func put64(b []byte, off, v int) { binary.LittleEndian.PutUint64(b[off:], uint64(v)) }

// TestPageCycleHangsOpen pins the hang found by TestBitFlipCorpus with
// FP_FLIP_SEED=1795525886834367284 FP_FLIPS=20000: one flipped bit made the
// last child pointer of the fences bucket's root branch page point at that
// page itself, and bbolt's cursor walked the cycle forever inside Open.
func TestPageCycleHangsOpen(t *testing.T) {
	base, want := baseFile(t)
	l := findLayout(t, base)
	data := append([]byte(nil), base...)
	put64(data, l.child(l.fencesRoot, count(base, l, l.fencesRoot)-1), l.fencesRoot)
	err := openFlipped(t, t.TempDir(), data, want, "a fences branch page pointing at itself")
	wantErr := fmt.Sprintf("page %d reached twice", l.fencesRoot)
	if err == nil || !strings.Contains(err.Error(), wantErr) {
		t.Fatalf("Open of a file with a page cycle: %v, want an error naming %q", err, wantErr)
	}
	path := filepath.Join(t.TempDir(), "cycle.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(path, nil); err == nil || !strings.Contains(err.Error(), wantErr) {
		t.Fatalf("Verify of a file with a page cycle: %v, want an error naming %q", err, wantErr)
	}
}

// TestPageTreeDamage edits a state file's page tree and freelist one way at a
// time; each must be an error naming what is wrong, found before bbolt walks
// the damage.
func TestPageTreeDamage(t *testing.T) {
	base, want := baseFile(t)
	l := findLayout(t, base)
	if err := openFlipped(t, t.TempDir(), base, want, "the unedited base file"); err != nil {
		t.Fatalf("the unedited base file: %v", err)
	}
	root := l.fencesRoot
	last := count(base, l, root) - 1
	firstLeaf := int(binary.LittleEndian.Uint64(base[l.child(root, 0):]))
	metaInline := l.at(l.rootLeaf, 0) + bytes.Index(base[l.at(l.rootLeaf, 0):l.at(l.rootLeaf+1, 0)], bucketMeta) +
		len(bucketMeta) + bucketHeaderSize
	cases := []struct {
		name, want string
		edit       func(d []byte)
	}{
		{"child past the high-water mark", "out of bounds", func(d []byte) { put64(d, l.child(root, 0), l.hwm+3) }},
		{"child on a meta page", "out of bounds", func(d []byte) { put64(d, l.child(root, 0), 1) }},
		{"child on the freelist", "on the freelist", func(d []byte) { put64(d, l.child(root, last), l.freeLeaf) }},
		{"child is the freelist page", "reached twice", func(d []byte) { put64(d, l.child(root, last), l.freelist) }},
		{"two parents share a child", "reached twice", func(d []byte) { put64(d, l.child(root, 1), firstLeaf) }},
		{"branch keys out of order", "does not sort after", func(d []byte) { d[l.branchKey(base, root, 1)+3] = '9' }},
		// Open alone loads the right set here, but a search then takes the
		// wrong child: a Delete misses the record, and the removed fence is
		// back after a restart.
		{"child keys outside the branch key's range", "outside its parent's range", func(d []byte) { d[l.branchKey(base, root, 1)+5] = '9' }},
		{"empty branch page", "empty branch page", func(d []byte) { binary.LittleEndian.PutUint16(d[l.at(root, 10):], 0) }},
		{"more elements than fit", "overrun the page", func(d []byte) { binary.LittleEndian.PutUint16(d[l.at(root, 10):], 300) }},
		{"leaf key overruns the page", "overruns the page", func(d []byte) { binary.LittleEndian.PutUint32(d[l.at(firstLeaf, pageHeaderSize+8):], 1<<20) }},
		{"page names another page", "identifies itself as page", func(d []byte) { put64(d, l.at(firstLeaf, 0), firstLeaf+1) }},
		{"page is not a branch or leaf", "not a branch or leaf page", func(d []byte) { binary.LittleEndian.PutUint16(d[l.at(firstLeaf, 8):], flagFreelist) }},
		{"page spans past the high-water mark", "past the high-water mark", func(d []byte) { binary.LittleEndian.PutUint32(d[l.at(firstLeaf, 12):], uint32(l.hwm)) }},
		{"inline bucket page is a branch", "not a leaf", func(d []byte) { binary.LittleEndian.PutUint16(d[metaInline+8:], flagBranch) }},
		{"freelist id past the high-water mark", "freelist: page id", func(d []byte) { put64(d, l.at(l.freelist, pageHeaderSize), l.hwm) }},
		{"freelist id listed twice", "listed twice", func(d []byte) {
			copy(d[l.at(l.freelist, pageHeaderSize+8):], d[l.at(l.freelist, pageHeaderSize):l.at(l.freelist, pageHeaderSize+8)])
		}},
		{"freelist longer than its page", "claims", func(d []byte) { binary.LittleEndian.PutUint16(d[l.at(l.freelist, 10):], 0xFFFE) }},
		{"freelist page is a leaf", "not a freelist page", func(d []byte) { binary.LittleEndian.PutUint16(d[l.at(l.freelist, 8):], flagLeaf) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := append([]byte(nil), base...)
			c.edit(data)
			if bytes.Equal(data, base) {
				t.Fatal("the edit changed nothing")
			}
			err := openFlipped(t, t.TempDir(), data, want, c.name)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Open: %v, want an error naming %q", err, c.want)
			}
		})
	}
}

// TestPageWalkAcceptsHealthyFiles grows and shrinks a state file through
// seeded random transactions, with keys long enough to need overflow pages,
// and reopens it after each: every file bbolt writes passes the page walk,
// and bbolt's own tx.Check agrees that it is healthy. FP_PAGE_SEED=N replays.
func TestPageWalkAcceptsHealthyFiles(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FP_PAGE_SEED"); s != "" {
		if _, err := fmt.Sscan(s, &seed); err != nil {
			t.Fatalf("FP_PAGE_SEED: %v", err)
		}
	}
	t.Logf("seed %d (replay with FP_PAGE_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	path := filepath.Join(t.TempDir(), "state.db")
	want := State{}
	seq := uint64(0)
	depth, overflow := 0, 0
	for round := range 30 {
		s, err := Open(path)
		if err != nil {
			t.Fatalf("seed %d, round %d: reopen: %v", seed, round, err)
		}
		put := State{}
		for range rng.IntN(400) {
			seq++
			k := fmt.Sprintf("10.%d.%d.0/24", rng.IntN(40), rng.IntN(256))
			if rng.IntN(50) == 0 {
				k += strings.Repeat("x", 1000+rng.IntN(9000))
			}
			put[k] = Entry{Seq: seq, Count: 1}
		}
		if round == 0 {
			seq++
			put[strings.Repeat("y", 3*4096)] = Entry{Seq: seq, Count: 1}
		}
		var del []string
		for k := range want {
			if rng.IntN(3) == 0 {
				del = append(del, k)
			}
		}
		if err := s.Update(put, del); err != nil {
			t.Fatalf("seed %d, round %d: %v", seed, round, err)
		}
		for _, k := range del {
			delete(want, k)
		}
		for k, e := range put {
			want[k] = e
		}
		err = s.db.View(func(tx *bolt.Tx) error {
			for err := range tx.Check() {
				return err
			}
			st := tx.Bucket(bucketFences).Stats()
			depth, overflow = max(depth, st.Depth), overflow+st.LeafOverflowN
			return nil
		})
		if err != nil {
			t.Fatalf("seed %d, round %d: bbolt's own check: %v", seed, round, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if depth < 2 || overflow == 0 {
		t.Fatalf("seed %d: the file never grew branch or overflow pages (depth %d, %d overflow pages): the walk was not exercised", seed, depth, overflow)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := openFlipped(t, t.TempDir(), raw, want, fmt.Sprintf("FP_PAGE_SEED=%d", seed)); err != nil {
		t.Fatalf("seed %d: final file: %v", seed, err)
	}
}

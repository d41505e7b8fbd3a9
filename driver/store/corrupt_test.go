package store

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// baseFile builds a state file with history (fences added and removed over
// several transactions, so there are freed pages) and returns its bytes and
// the fence set it must load as.
func baseFile(t testing.TB) ([]byte, State) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "base.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	want := State{}
	seq := uint64(0)
	for round := range 6 {
		put := State{}
		for i := range 40 {
			seq++
			k := fmt.Sprintf("10.%d.%d.0/24", round, i)
			put[k] = Entry{Seq: seq, Count: 1}
			want[k] = put[k]
		}
		var del []string
		for i := 0; i < 40; i += 3 {
			k := fmt.Sprintf("10.%d.%d.0/24", round, i)
			del = append(del, k)
			delete(want, k)
		}
		if err := s.Update(put, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Update(nil, del); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return raw, want
}

// openTimeout bounds one open and load of a corrupt file. A healthy one takes
// milliseconds; a walk that never ends (a page cycle) must fail the test with
// its replay recipe instead of timing out the whole go test.
const openTimeout = 10 * time.Second

// openFlipped writes data to a file and opens and loads it in a goroutine of
// its own, waiting at most openTimeout: a clean error, or exactly want (nil:
// any set). A different set, a panic or a hang fails t, naming replay (how to
// reproduce this file).
func openFlipped(t testing.TB, dir string, data []byte, want State, replay string) error {
	t.Helper()
	path := filepath.Join(dir, "flipped.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	type result struct {
		got    State
		err    error
		panicv any
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			r.panicv = recover()
			done <- r
		}()
		s, err := Open(path)
		if err != nil {
			r.err = err
			return
		}
		defer s.Close()
		r.got, r.err = s.Load()
	}()
	timer := time.NewTimer(openTimeout)
	defer timer.Stop()
	var r result
	select {
	case r = <-done:
	case <-timer.C:
		// The goroutine is left spinning; the test binary ends with this failure.
		t.Fatalf("%s: open and load did not finish in %v (a hang)", replay, openTimeout)
	}
	switch {
	case r.panicv != nil:
		t.Fatalf("%s: open and load panicked: %v", replay, r.panicv)
	case r.err != nil:
		return r.err
	case want != nil && !maps.Equal(r.got, want):
		t.Fatalf("%s: opened a corrupt file as a different fence set: %d records, want %d", replay, len(r.got), len(want))
	}
	return nil
}

// TestBitFlipCorpus flips single bits of a state file: every bit of both
// bbolt meta page headers, then seeded random bits across the whole file.
// Each flipped file must load as exactly the original set or fail with an
// error; FP_FLIP_SEED=N replays a run, FP_FLIPS=N sets the random count.
func TestBitFlipCorpus(t *testing.T) {
	base, want := baseFile(t)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FP_FLIP_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("FP_FLIP_SEED: %v", err)
		}
	}
	n := 1000
	if s := os.Getenv("FP_FLIPS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 0 {
			t.Fatalf("FP_FLIPS=%q: want a count", s)
		}
	}
	t.Logf("seed %d (replay with FP_FLIP_SEED=%d), %d random flips in %d bytes", seed, seed, n, len(base))
	rng := rand.New(rand.NewPCG(seed, 0))
	var offsets []int
	for _, page := range []int{0, 4096} {
		for b := page; b < page+metaHeaderSize; b++ {
			for bit := range 8 {
				offsets = append(offsets, b*8+bit)
			}
		}
	}
	for range n {
		offsets = append(offsets, rng.IntN(len(base)*8))
	}
	dir := t.TempDir()
	errs, same := 0, 0
	for _, bit := range offsets {
		data := append([]byte(nil), base...)
		data[bit/8] ^= 1 << (bit % 8)
		replay := fmt.Sprintf("FP_FLIP_SEED=%d FP_FLIPS=%d: flipping bit %d (byte %d, bit %d)", seed, n, bit, bit/8, bit%8)
		if err := openFlipped(t, dir, data, want, replay); err != nil {
			errs++
		} else {
			same++
		}
	}
	t.Logf("%d flips: %d clean errors, %d loaded the original set unchanged", len(offsets), errs, same)
	if errs == 0 {
		t.Fatal("no flip was detected: the checks cannot fail")
	}
}

var (
	fuzzBaseOnce sync.Once
	fuzzBase     []byte
	fuzzWant     State
)

// FuzzBitFlip flips the bits of mask at one byte of a valid state file: the
// result is an error or exactly the original set.
func FuzzBitFlip(f *testing.F) {
	fuzzBaseOnce.Do(func() { fuzzBase, fuzzWant = baseFile(f) })
	f.Add(uint32(20), byte(1))
	f.Add(uint32(4096+60), byte(0x80))
	f.Add(uint32(3*4096+100), byte(0x10))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, pos uint32, mask byte) {
		data := append([]byte(nil), fuzzBase...)
		data[int(pos)%len(data)] ^= mask
		_ = openFlipped(t, dir, data, fuzzWant, "FuzzBitFlip")
	})
}

// FuzzOpen opens arbitrary bytes as a state file: never a panic.
func FuzzOpen(f *testing.F) {
	fuzzBaseOnce.Do(func() { fuzzBase, fuzzWant = baseFile(f) })
	f.Add(fuzzBase)
	f.Add(fuzzBase[:8192])
	f.Add([]byte("not a state file"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = openFlipped(t, dir, data, nil, "FuzzOpen")
	})
}

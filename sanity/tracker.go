package sanity

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
)

// tracker remembers every block the suite asked to fence, in order, so that
// cleanup can undo them newest first, whatever the driver answered.
type tracker struct {
	mu     sync.Mutex
	blocks []string
	ever   []string
}

func (t *tracker) add(cidrs ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.blocks = append(t.blocks, cidrs...)
	for _, c := range cidrs {
		if !slices.Contains(t.ever, c) {
			t.ever = append(t.ever, c)
		}
	}
}

// everFenced is every block the suite ever asked to fence.
func (t *tracker) everFenced() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.ever)
}

// peek returns the blocks added after mark without removing them.
func (t *tracker) peek(mark int) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.blocks[min(mark, len(t.blocks)):])
}

func (t *tracker) mark() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.blocks)
}

// since removes and returns the blocks added after mark, newest first, once each.
func (t *tracker) since(mark int) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if mark > len(t.blocks) {
		mark = len(t.blocks)
	}
	tail := slices.Clone(t.blocks[mark:])
	t.blocks = t.blocks[:mark]
	slices.Reverse(tail)
	var out []string
	for _, b := range tail {
		if !slices.Contains(out, b) {
			out = append(out, b)
		}
	}
	return out
}

// undo unfences, newest first, every block fenced since mark. A block the
// driver answers INVALID_ARGUMENT for cannot be fenced under that spelling;
// for a prefix with host bits the masked form is undone as well. Anything
// still fenced after all this is caught by SUITE-001.
func (s *State) undo(ctx context.Context, mark int) error {
	var errs []error
	blocks := s.tracker.since(mark)
	if len(blocks) > batchUndo && s.unfence(ctx, blocks) == nil {
		// One request undid them all; SUITE-001 checks the result.
		return nil
	}
	for _, b := range blocks {
		err := s.unfence(ctx, []string{b})
		if codeName(err) == "InvalidArgument" {
			p, perr := netip.ParsePrefix(b)
			if perr != nil || p.Masked() == p {
				continue
			}
			err = s.unfence(ctx, []string{p.Masked().String()})
			if codeName(err) == "InvalidArgument" {
				continue // neither spelling can have been fenced
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("cleanup: unfence %q: %s: %s", b, codeName(err), errMessage(err)))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%v", errs)
	}
	return nil
}

// batchUndo is the number of blocks above which cleanup first tries a
// single Unfence of them all (the scale rules fence thousands).
const batchUndo = 32

// cleanupAfterSpec arranges for the current spec's fences to be undone. A
// failed cleanup is not charged to the rule that happened to run: it is
// recorded and reported once, under SUITE-001.
func (s *State) cleanupAfterSpec() {
	mark, pos := s.tracker.mark(), s.alloc.position()
	DeferCleanup(func(ctx SpecContext) {
		made := s.tracker.peek(mark)
		if err := s.undo(ctx, mark); err != nil {
			s.cleanupFailed(err.Error())
			return
		}
		// Hand the blocks out again only when the state shows them all gone.
		if s.stateSource() == SourceNone {
			return
		}
		listed, err := s.observed(ctx)
		if err != nil {
			return
		}
		now := map[string]bool{}
		for _, c := range canonicalAll(listed) {
			now[c] = true
		}
		for _, b := range made {
			if now[canonical(strings.TrimSpace(b))] {
				return
			}
		}
		s.alloc.rewind(pos)
	})
}

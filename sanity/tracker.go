package sanity

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
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
	for _, b := range s.tracker.since(mark) {
		err := s.unfence(ctx, []string{b})
		if codeName(err) == "InvalidArgument" {
			p, perr := netip.ParsePrefix(b)
			if perr != nil || p.Masked() == p {
				continue
			}
			err = s.unfence(ctx, []string{p.Masked().String()})
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

// cleanupAfterSpec arranges for the current spec's fences to be undone.
func (s *State) cleanupAfterSpec() {
	mark := s.tracker.mark()
	DeferCleanup(func(ctx SpecContext) {
		if err := s.undo(ctx, mark); err != nil {
			Fail(err.Error())
		}
	})
}

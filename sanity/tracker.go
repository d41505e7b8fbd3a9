package sanity

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"

	. "github.com/onsi/ginkgo/v2"
)

// tracker remembers every string the suite sent to Fence, in order, whether
// the driver acknowledged it, and every block the suite ever asked for, so
// that cleanup can undo them newest first whatever the driver answered, and
// only the failures to undo what the driver acknowledged are charged.
type tracker struct {
	mu        sync.Mutex
	blocks    []tracked
	requested map[string]bool // blockKey of every block the suite asked to fence, or sent a string that may be read as
}

// tracked is one string sent to Fence.
type tracked struct {
	raw    string
	block  netip.Prefix // raw parsed, once: the allocator asks for the pending blocks at every block it hands out
	parsed bool         // raw is a block
	acked  bool         // a Fence of it answered OK
	undone bool         // an Unfence of it answered OK since (forget)
}

func newTracked(raw string) tracked {
	p, ok := blockOf(raw)
	return tracked{raw: raw, block: p, parsed: ok}
}

// add records cidrs before they are sent and returns the mark to settle.
func (t *tracker) add(cidrs ...string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	mark := len(t.blocks)
	for _, c := range cidrs {
		t.blocks = append(t.blocks, newTracked(c))
		t.requestedLocked(c)
	}
	return mark
}

// account records blocks a sent string may be read as (the readings of the
// malformed-input corpus): they are undone and never counted as fences
// nobody asked for.
func (t *tracker) account(blocks ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, b := range blocks {
		t.blocks = append(t.blocks, newTracked(b))
		t.requestedLocked(b)
	}
}

func (t *tracker) requestedLocked(c string) {
	if t.requested == nil {
		t.requested = map[string]bool{}
	}
	t.requested[blockKey(c)] = true
}

// forget drops the strings an Unfence the driver acknowledged named: they
// are no longer the cleanup's to undo (a rule that fences and unfences
// thousands of blocks would otherwise leave them all to it).
func (t *tracker) forget(cidrs ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	gone := make(map[string]bool, len(cidrs))
	for _, c := range cidrs {
		gone[c] = true
	}
	for i := range t.blocks {
		if gone[t.blocks[i].raw] {
			t.blocks[i].undone = true
		}
	}
}

// settle records the driver's answer to the Fence of the strings added at
// mark (up to n of them).
func (t *tracker) settle(mark, n int, err error) {
	if err != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := mark; i < min(mark+n, len(t.blocks)); i++ {
		t.blocks[i].acked = true
	}
}

// wasRequested reports whether the suite ever asked for the block c names.
func (t *tracker) wasRequested(c string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.requested[blockKey(c)]
}

// requestedBlocks are the blocks the suite asked for, parsed.
func (t *tracker) requestedBlocks() []netip.Prefix {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]netip.Prefix, 0, len(t.requested))
	for k := range t.requested {
		if p, err := netip.ParsePrefix(k); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// pending are the blocks fenced and not undone yet, parsed.
func (t *tracker) pending() []netip.Prefix {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []netip.Prefix
	for _, b := range t.blocks {
		if b.parsed && !b.undone {
			out = append(out, b.block)
		}
	}
	return out
}

// pendingSince are the strings fenced since mark and not unfenced since,
// once each.
func (t *tracker) pendingSince(mark int) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	seen := map[string]bool{}
	for _, b := range t.blocks[min(mark, len(t.blocks)):] {
		if !b.undone && !seen[b.raw] {
			seen[b.raw] = true
			out = append(out, b.raw)
		}
	}
	return out
}

func (t *tracker) mark() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.blocks)
}

// since removes and returns the strings added after mark, newest first,
// once each (acknowledged if any of its Fences was).
func (t *tracker) since(mark int) []tracked {
	t.mu.Lock()
	defer t.mu.Unlock()
	mark = min(mark, len(t.blocks))
	tail := slices.Clone(t.blocks[mark:])
	t.blocks = t.blocks[:mark]
	slices.Reverse(tail)
	var out []tracked
	index := map[string]int{}
	for _, b := range tail {
		if b.undone {
			continue
		}
		if i, ok := index[b.raw]; ok {
			out[i].acked = out[i].acked || b.acked
			continue
		}
		index[b.raw] = len(out)
		out = append(out, b)
	}
	return out
}

// undo unfences, newest first, every string fenced since mark. A string the
// driver answers INVALID_ARGUMENT for cannot be fenced under that spelling;
// for a prefix with host bits the masked form is undone as well. Only the
// failures to undo an acknowledged fence are errors; anything still fenced
// after all this is caught by SUITE-001's comparison of the fences.
func (s *State) undo(ctx context.Context, mark int) error {
	ctx = context.WithValue(ctx, cleanupKey{}, true)
	var errs []error
	blocks := s.tracker.since(mark)
	if len(blocks) > batchUndo {
		// In requests of the size the driver's pace allows; a request
		// that fails is undone block by block below.
		var left []tracked
		for i := 0; i < len(blocks); {
			part := blocks[i:min(len(blocks), i+s.requestSize())]
			i += len(part)
			raws := make([]string, len(part))
			for j, b := range part {
				raws[j] = b.raw
			}
			if s.unfence(ctx, raws) != nil {
				left = append(left, part...)
			}
		}
		blocks = left
	}
	for _, b := range blocks {
		err := s.unfence(ctx, []string{b.raw})
		if codeName(err) == "InvalidArgument" {
			p, perr := netip.ParsePrefix(b.raw)
			if perr != nil || p.Masked() == p {
				continue
			}
			err = s.unfence(ctx, []string{p.Masked().String()})
			if codeName(err) == "InvalidArgument" {
				continue // neither spelling can have been fenced
			}
		}
		if err != nil && b.acked {
			errs = append(errs, fmt.Errorf("Unfence of %s, which the driver had acknowledged, answered %s: %s", show(b.raw), codeSpec(err), errText(err)))
		}
	}
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		return fmt.Errorf("%d cleanup failures: %s", len(errs), firstFew(msgs))
	}
	return nil
}

// cleanupKey marks the context of a cleanup's RPCs: they go out whatever
// the budget, and after a signal.
type cleanupKey struct{}

func isCleanup(ctx context.Context) bool { return ctx.Value(cleanupKey{}) != nil }

// batchUndo is the number of blocks above which cleanup first unfences
// them in requests of several (the scale rules fence thousands).
const batchUndo = 32

// cleanupAfterSpec arranges for the current rule's fences to be undone. A
// failed cleanup is not charged to the rule that happened to run: it is
// recorded and reported once, under SUITE-001.
func (s *State) cleanupAfterSpec() {
	s.alloc.ruleStarts()
	s.checkProbes(context.Background(), false)
	mark := s.tracker.mark()
	DeferCleanup(func(ctx SpecContext) {
		if err := s.undo(ctx, mark); err != nil {
			s.cleanupFailed(err.Error())
		}
	})
}

// reclaimBlocks is the allocator's reclaim: the blocks in use now, from one
// reading of the fences and the fences not undone yet.
func (s *State) reclaimBlocks() ([]netip.Prefix, error) {
	if s.stateSource() == SourceNone {
		return nil, fmt.Errorf("the fences cannot be read")
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.RPCTimeout.Duration)
	defer cancel()
	listed, err := s.observed(ctx)
	if err != nil {
		return nil, err
	}
	inUse := s.tracker.pending()
	for _, c := range listed {
		if p, ok := blockOf(c); ok {
			inUse = append(inUse, p)
		}
	}
	return inUse, nil
}

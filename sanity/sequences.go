package sanity

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"

	"github.com/fenceproof/fenceproof/sanity/fencemodel"
	"github.com/fenceproof/fenceproof/sanity/relations"
)

// FENCE-010 checks the fence lifecycle by construction: every case of
// package relations (two and three blocks in every relation, at every
// width class of the family) runs its script against the driver, and after
// every step List must equal the reference model (package fencemodel).
//
// The cases of both families run side by side, each in regions of its
// own: step k of every case is sent together, one request per family, RPC
// and kind of spelling (those a driver must accept, host-bit ones,
// IPv4-mapped ones; a profile may let it reject the last two), in requests
// of at most the size the driver's pace allows (requestSize), and the
// fences are read once per step. A run so costs a few hundred requests and
// readings, not thousands. The documentation ranges hold only three IPv4
// /24s, so the cases run in rounds: the long scripts first, then the
// widest regions. When a case differs from the model, it is replayed alone,
// one block per request and a reading after each, so that the failure
// names the request that made the difference.

func describeSequences(s *State) {
	Context("sequences", func() {
		s.it("FENCE-010", func(ctx context.Context) {
			s.needState()
			cases := relations.Cases(s.withDestructive(relations.IPv4))
			if s.cfg.Profile.IPv6 == Required || s.acceptsIPv6(ctx) {
				cases = append(cases, relations.Cases(relations.IPv6)...)
			} else {
				note("the driver rejects IPv6 (profile ipv6: optional): only the IPv4 cases ran")
			}
			s.runCases(ctx, cases)
		})
	})
}

// sequenceReadings bounds the readings of the fences FENCE-010 makes in
// empty documentation ranges (ListCallBound counts them).
const sequenceReadings = 80

// withDestructive adds the width classes --destructive makes room for.
func (s *State) withDestructive(f relations.Family) relations.Family {
	if !s.cfg.Destructive || f.Bits != 32 {
		return f
	}
	return f.Destructive([]int{20, 23}, destructivePool4[0].Bits())
}

// modelHostBits is the profile's host-bit choice, for the model.
func (s *State) modelHostBits() fencemodel.HostBits {
	switch s.cfg.Profile.HostBits {
	case HostBitsNormalise:
		return fencemodel.Normalise
	case HostBitsReject:
		return fencemodel.Reject
	}
	return fencemodel.Either
}

// running is one case placed in its regions, with its model and what was
// sent so far.
type running struct {
	c       relations.Case
	regions []netip.Prefix
	cidrs   []string
	model   *fencemodel.Model
	history []string // each request of the case, with the answer, in order
	problem string   // how it differs from the model, once it does
}

func (r *running) within(p netip.Prefix) bool {
	for _, reg := range r.regions {
		if reg.Overlaps(p) {
			return true
		}
	}
	return false
}

// label names operand i: "A" for the first.
func label(i int) string { return string(rune('A' + i)) }

// describe names the case and its blocks as sent.
func (r *running) describe() string {
	var ops []string
	for i, c := range r.cidrs {
		ops = append(ops, fmt.Sprintf("%s = %s", label(i), show(c)))
	}
	return fmt.Sprintf("%s (%s)", r.c.Name, strings.Join(ops, ", "))
}

// runCases places the cases round by round and runs each round.
func (s *State) runCases(ctx context.Context, todo []relations.Case) {
	GinkgoHelper()
	orderCases(todo)
	var rounds, requests, readings, cases int
	var unplaced []string
	for len(todo) > 0 {
		round, later := s.planRound(todo)
		if len(round) == 0 {
			// Blocks in use at the last reclaim may be free by now.
			s.alloc.refresh()
			if round, later = s.planRound(todo); len(round) == 0 {
				for _, c := range todo {
					unplaced = append(unplaced, c.Name)
				}
				break
			}
		}
		req, read := s.runRound(ctx, round)
		rounds, requests, readings, cases = rounds+1, requests+req, readings+read, cases+len(round)
		for _, r := range round {
			s.alloc.release(r.regions)
		}
		todo = later
	}
	note("%d cases in %d rounds: %d requests, %d readings of the fences", cases, rounds, requests, readings)
	if len(unplaced) > 0 {
		notRun("%d cases found no free block of their size in the documentation ranges (fences that existed before the run, or that the run could not undo, are in the way): %s", len(unplaced), firstFew(unplaced))
	}
}

// planRound places as many of the cases as the free space holds, in order,
// and returns them and the cases left for later rounds.
func (s *State) planRound(todo []relations.Case) (round []*running, later []relations.Case) {
	for _, c := range todo {
		if r, ok := s.place(c); ok {
			round = append(round, r)
		} else {
			later = append(later, c)
		}
	}
	return round, later
}

// orderCases puts the long scripts first, so that few rounds run them
// (a round lasts as long as its longest script), then the widest regions,
// IPv4 before IPv6 (its space is the scarce one).
func orderCases(cs []relations.Case) {
	slices.SortStableFunc(cs, func(a, b relations.Case) int {
		return cmp.Or(cmp.Compare(len(b.Script), len(a.Script)), cmp.Compare(a.Family.Bits, b.Family.Bits),
			cmp.Compare(slices.Min(a.Regions), slices.Min(b.Regions)))
	})
}

// place takes fresh regions for a case, or gives back what it took.
func (s *State) place(c relations.Case) (*running, bool) {
	r := &running{c: c, model: fencemodel.New(s.modelHostBits())}
	for _, bits := range c.Regions {
		p, ok := s.alloc.region(c.Family.Bits == 128, bits)
		if !ok {
			s.alloc.release(r.regions)
			return nil, false
		}
		r.regions = append(r.regions, p)
	}
	_, r.cidrs = c.Place(r.regions)
	return r, true
}

// spellingGroup is the request a step's operand goes in: spellings every
// driver must accept together; host-bit and IPv4-mapped ones apart, as a
// profile may let the driver reject them.
func spellingGroup(sp relations.Spelling) int {
	switch sp {
	case relations.HostBits, relations.HalfHostBits:
		return 1
	case relations.Mapped:
		return 2
	}
	return 0
}

// runRound runs the scripts of a round side by side and returns the
// requests and readings it made. It fails the rule at the first step after
// which a case differs from its model.
func (s *State) runRound(ctx context.Context, round []*running) (requests, readings int) {
	GinkgoHelper()
	steps := 0
	for _, r := range round {
		steps = max(steps, len(r.c.Script))
	}
	mark := s.tracker.mark()
	for k := range steps {
		type key struct {
			v6    bool
			rpc   fencemodel.RPC
			group int
		}
		batches := map[key][]*running{}
		var keys []key
		for _, r := range round {
			if k >= len(r.c.Script) {
				continue
			}
			st := r.c.Script[k]
			kk := key{r.c.Family.Bits == 128, st.RPC, spellingGroup(r.c.Operands[st.Operand].Spell)}
			if _, ok := batches[kk]; !ok {
				keys = append(keys, kk)
			}
			batches[kk] = append(batches[kk], r)
		}
		for _, kk := range keys {
			batch := batches[kk]
			for len(batch) > 0 {
				part := batch[:min(len(batch), s.requestSize())]
				batch = batch[len(part):]
				cidrs := make([]string, len(part))
				for i, r := range part {
					cidrs[i] = r.cidrs[r.c.Script[k].Operand]
				}
				answer := s.send(ctx, kk.rpc, cidrs)
				requests++
				for i, r := range part {
					st := r.c.Script[k]
					r.history = append(r.history, fmt.Sprintf("%s %s %s", verb(st.RPC), label(st.Operand), specName(string(answer))))
					if err := r.model.Apply(st.RPC, cidrs[i:i+1], answer); err != nil && r.problem == "" {
						r.problem = fmt.Sprintf("%s of %s: %s (in one request with %d other blocks of this step)", st.RPC, show(cidrs[i]), err, len(part)-1)
					}
				}
			}
		}
		v := s.readFences(ctx, fmt.Sprintf("after step %d of the sequences", k+1))
		readings++
		listing := fencemodel.ReadListing(v.raw)
		var failed []*running
		for _, r := range round {
			if r.problem == "" {
				if d := r.model.DiffListing(listing, r.within); !d.Empty() {
					r.problem = "List differs from the model: " + d.String()
				}
			}
			if r.problem != "" {
				failed = append(failed, r)
			}
		}
		if len(failed) > 0 {
			s.clearRound(ctx, mark, round)
			s.failCases(ctx, k, failed)
		}
	}
	return requests, readings
}

// send sends one Fence or Unfence and returns the answer's code name; a
// cut run ends the case as NOT RUN. Strings unfenced are no longer the
// cleanup's to undo.
func (s *State) send(ctx context.Context, rpc fencemodel.RPC, cidrs []string) fencemodel.Answer {
	GinkgoHelper()
	var err error
	if rpc == fencemodel.Fence {
		err = s.fence(ctx, cidrs)
	} else {
		err = s.unfence(ctx, cidrs)
	}
	settleCut(err)
	// An Unfence acknowledged, or a Fence refused, leaves nothing for the
	// cleanup (if the driver lies, the readings say so).
	if (rpc == fencemodel.Unfence && err == nil) || (rpc == fencemodel.Fence && codeName(err) == "InvalidArgument") {
		s.tracker.forget(cidrs...)
	}
	return fencemodel.Answer(codeName(err))
}

// verb is how a history names an RPC.
func verb(rpc fencemodel.RPC) string {
	if rpc == fencemodel.Fence {
		return "Fence"
	}
	return "Unfence"
}

// clearRound unfences what a failed round left fenced, so that the
// replay finds free blocks, and gives back the regions the fences show
// clean (what the driver keeps fenced stays the cleanup's).
func (s *State) clearRound(ctx context.Context, mark int, round []*running) {
	GinkgoHelper()
	left := s.tracker.pendingSince(mark)
	for len(left) > 0 {
		part := left[:min(len(left), s.requestSize())]
		left = left[len(part):]
		s.send(ctx, fencemodel.Unfence, part)
	}
	v := s.readFences(ctx, "after unfencing the round's blocks")
	for _, r := range round {
		clean := true
		for _, c := range v.raw {
			if p, ok := blockOf(c); ok && r.within(p) {
				clean = false
				s.tracker.account(c) // what the driver made of the round: the cleanup's
			}
		}
		if clean {
			s.alloc.release(r.regions)
		}
	}
}

// failCases fails the rule for the cases that differ after step k: the
// first is replayed alone to name the request that made the difference.
func (s *State) failCases(ctx context.Context, k int, failed []*running) {
	GinkgoHelper()
	first := failed[0]
	msg := fmt.Sprintf("%s: after step %d (%s; each step of every case of the round sent together), %s",
		first.describe(), k+1, strings.Join(first.history, ", "), first.problem)
	msg += "\n" + s.replayAlone(ctx, first.c)
	if len(failed) > 1 {
		var others []string
		for _, r := range failed[1:] {
			others = append(others, r.c.Name)
		}
		msg += fmt.Sprintf("\n%d more cases differ after the same step: %s", len(failed)-1, firstFew(others))
	}
	failf("%s", msg)
}

// replayAlone runs a case on its own, in fresh regions, one block per
// request and a reading after each, and says where it first differs from
// the model.
func (s *State) replayAlone(ctx context.Context, c relations.Case) string {
	GinkgoHelper()
	r, ok := s.place(c)
	if !ok {
		return "Not replayed alone: no free block of its size is left."
	}
	defer s.alloc.release(r.regions)
	for _, st := range c.Script {
		cidr := r.cidrs[st.Operand]
		answer := s.send(ctx, st.RPC, []string{cidr})
		r.history = append(r.history, fmt.Sprintf("%s %s %s", verb(st.RPC), label(st.Operand), specName(string(answer))))
		if err := r.model.Apply(st.RPC, []string{cidr}, answer); err != nil {
			return fmt.Sprintf("Replayed alone, one block per request, in %s: %s of %s: %s (after %s).", showAll(r.cidrs), st.RPC, show(cidr), err, strings.Join(r.history, ", "))
		}
		v := s.readFences(ctx, "replaying "+c.Name+" alone")
		if d := r.model.Diff(v.raw, r.within); !d.Empty() {
			return fmt.Sprintf("Replayed alone, one block per request and a reading after each, in %s: after %s, %s.", showAll(r.cidrs), strings.Join(r.history, ", "), d)
		}
	}
	return "Replayed alone, one block per request and a reading after each, the case matches the model: the difference shows only when the step's blocks of every case go in one request."
}

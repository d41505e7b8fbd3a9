package sanity

import (
	"slices"
	"time"
)

// maxRequestBlocks bounds the blocks of one request the suite builds (the
// one-request case of SCALE-001 excepted, which says what it sent).
const maxRequestBlocks = 1024

// requestHeadroom is how many times slower than measured a request the
// suite sizes may run and still answer within the RPC deadline: a loaded
// machine runs the driver several times slower from one second to the next.
const requestHeadroom = 4

// paceSamples is how many recent requests the pace is read from, and
// paceOutliers how many of the slowest of them it passes over: one slow
// answer (the first after a restart, a mon election, a loaded second)
// must not size every later request as if the driver were always that
// slow, while a driver that stays slower moves the pace within a few
// requests.
const (
	paceSamples  = 32
	paceOutliers = 2
)

// paceWindow holds the time per block of the most recent Fences and
// Unfences the driver answered OK.
type paceWindow struct {
	recent []time.Duration // at most paceSamples, oldest first
}

// add records one request's time per block.
func (w *paceWindow) add(perBlock time.Duration) {
	if len(w.recent) == paceSamples {
		w.recent = w.recent[1:]
	}
	w.recent = append(w.recent, perBlock)
}

// pace is the driver's time per block: the slowest of the recent
// requests but the paceOutliers slowest (the slowest of all while there
// are too few to pass any over), or 0 before any request.
func (w *paceWindow) pace() time.Duration {
	if len(w.recent) == 0 {
		return 0
	}
	sorted := slices.Clone(w.recent)
	slices.Sort(sorted)
	skip := 0
	if len(sorted) > 2*paceOutliers {
		skip = paceOutliers
	}
	return sorted[len(sorted)-1-skip]
}

// requestSize is the most blocks the suite puts in one Fence or Unfence: as
// many as fit in 1/requestHeadroom of the RPC deadline at the driver's
// recent pace (paceWindow), at most maxRequestBlocks.
func (s *State) requestSize() int {
	s.mu.Lock()
	pace := s.pace.pace()
	s.mu.Unlock()
	if pace <= 0 {
		return maxRequestBlocks
	}
	return max(1, min(maxRequestBlocks, int(s.cfg.RPCTimeout.Duration/requestHeadroom/pace)))
}

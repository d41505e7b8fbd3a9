package sim

// Samples: the cluster's state over a recorded run, the curves a real
// Ceph's `ceph status` and `ceph pg dump` show (sim/calibrate compares
// them). A sample is kept after each event that changed it; samples at
// the same virtual time keep the last.

// PGCounts counts the PGs of the pool by state.
type PGCounts struct {
	// Clean is active+clean.
	Clean int
	// Active is active but not clean: degraded, undersized, remapped,
	// recovering or backfilling.
	Active int
	// Peering is peering after an acting set change.
	Peering int
	// Peered is undersized+peered: fewer than min_size replicas up, no I/O.
	Peered int
	// Down has no up replica with the latest writes; Incomplete none
	// anywhere.
	Down, Incomplete int
}

// Inactive counts the PGs that serve no I/O.
func (c PGCounts) Inactive() int { return c.Peering + c.Peered + c.Down + c.Incomplete }

// Sample is the cluster's state at a point of a recorded run.
type Sample struct {
	At  Time
	PGs PGCounts
	// Recovering counts the PGs moving data now (recovery or backfill,
	// holding their reservations); Degraded those with a replica missing
	// or missing writes; Blocked the active PGs whose I/O blocks on an
	// acting OSD up in the map that cannot serve.
	Recovering, Degraded, Blocked int
	// MovedMB is the data recovery and backfill have moved so far
	// (completed PG recoveries).
	MovedMB float64
	// RecoveredMB is what Ceph's PG stats report moved
	// (num_bytes_recovered summed): an object pushed to several targets
	// of a PG at once counts once, so a PG that lost two replicas counts
	// one replica's data (measured: 42.5 MB of hosts-out-backfill's 57 MB
	// of lost replicas, the 29 PGs touched holding 43.5 MB).
	RecoveredMB float64
	// UpOSDs and InOSDs count the OSDs up and in the map.
	UpOSDs, InOSDs int
	// Quorum: the mons have a quorum.
	Quorum bool
}

// sample appends the state after an event when it changed.
func (r *Recorder) sample(s *Sim) {
	g := &s.pgs
	n := g.nState
	c := Sample{At: s.now, PGs: PGCounts{Clean: n[stClean], Active: n[stActive], Peering: n[stPeering], Peered: n[stInactive], Down: n[stDown], Incomplete: n[stIncomplete]},
		Degraded: g.nDegraded, Blocked: g.nBlocked, MovedMB: s.watch.metrics.MovedMB, RecoveredMB: s.watch.metrics.recoveredMB, InOSDs: s.ceph.nIn, Quorum: s.ceph.quorum}
	for i := range g.pgs {
		if p := &g.pgs[i]; p.rec != 0 || p.bf != 0 {
			c.Recovering++
		}
	}
	for i := range s.ceph.osds {
		if s.ceph.osds[i].up {
			c.UpOSDs++
		}
	}
	k := len(r.Samples)
	switch {
	case k > 0 && r.Samples[k-1].At == c.At:
		r.Samples[k-1] = c
		if k > 1 && sameState(r.Samples[k-2], c) {
			r.Samples = r.Samples[:k-1]
		}
	case k == 0 || !sameState(r.Samples[k-1], c):
		r.Samples = append(r.Samples, c)
	}
}

func sameState(a, b Sample) bool {
	a.At = b.At
	return a == b
}

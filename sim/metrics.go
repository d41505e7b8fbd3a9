package sim

// A run's figures of merit, measured after every event.

// Metrics are a run's figures of merit.
type Metrics struct {
	// Fences counts MHC remediations.
	Fences int
	// Unavailable is the time some PG could not serve I/O: not active in
	// the OSD map, or active with an acting OSD that is up in the map but
	// cannot serve (blocked until the map marks it down; for good while a
	// lost quorum freezes the map). Without quorum, PGs whose acting OSDs
	// all serve keep serving on the last map.
	Unavailable Time
	// FirstFault is the time of the first fault (-1: none).
	FirstFault Time
	// RecoveredAt is when health turned HEALTH_OK at the end of the last
	// episode of not HEALTH_OK that lasted at least healthBlipTime (-1: such
	// an episode lasts until the end). A shorter blip, such as the 2 s of
	// peering when a PG drops its interim copy, does not move it.
	RecoveredAt Time

	// InactivePG is the time some PG could not serve I/O (as Unavailable,
	// kept as the comparison's column).
	InactivePG Time
	// NoQuorum is the time without mon quorum.
	NoQuorum Time
	// WritesRefused counts client writes refused: the workload's current
	// client cannot reach Ceph, is blocklisted, is not running (moving), or
	// its write lands on an inactive PG (the inactive fraction).
	WritesRefused float64
	// StaleWrites counts writes accepted from clients whose pod was deleted
	// while the workload's new client holds the lock: writes the current
	// instance never sees, lost or corrupting (split-brain). Like any
	// write, they land only on PGs that serve.
	StaleWrites float64
	// FencesNotOK counts fences (remediations, cut-offs, taints) taken
	// while `ceph status` was not HEALTH_OK; the seed design's rule
	// "HEALTH_OK before any fence" holds in a run iff it is 0.
	FencesNotOK int
	// FenceActions counts fences, cut-offs and taints.
	FenceActions int
	// MappedBack counts PGs that backfilled back onto a returned OSD, and
	// BackfillMB the data that backfill moved (remap.go).
	MappedBack int
	BackfillMB float64
	// Rejoined counts PGs whose returned home OSD rejoined the acting set
	// with the copy it kept (remap.go).
	Rejoined int
	// MovedMB is the data recovery and backfill moved (completed ones).
	MovedMB float64
	// recoveredMB is what Ceph's PG stats count of it
	// (num_bytes_recovered): an object pushed to several targets of a
	// PG at once counts once (Sample.RecoveredMB).
	recoveredMB float64
	// Markdowns counts OSDs marked down; WronglyDown those whose daemon
	// ran and reasserted ("wrongly marked me down"); SelfStops those that
	// then stopped themselves (osd_max_markdown_count; flags.go).
	Markdowns, WronglyDown, SelfStops int
	// CleanAt is when all PGs last became active+clean after the first
	// fault (-1: not clean at the end).
	CleanAt Time

	unavail    bool
	lastClean  bool
	since      Time
	lastChecks uint8
	lastH      Health
	notOKSince Time // start of the current episode of not HEALTH_OK
	lastStep   Time
	lastQuorum bool
	refRate    float64 // writes refused per ms since lastStep
	staleRate  float64 // stale writes accepted per ms since lastStep
}

// fenceAction records a fence action (a remediation, a cut-off, a taint)
// and whether it happens on HEALTH_OK.
func (w *monitor) fenceAction() {
	w.metrics.FenceActions++
	if h, _ := w.ceph.health(); h != HealthOK {
		w.metrics.FencesNotOK++
	}
}

// finish closes the metrics at the end of the run.
func (mt *Metrics) finish(s *monitor) {
	if mt.unavail {
		mt.Unavailable += s.now - mt.since
		mt.unavail = false
	}
	if mt.lastH != HealthOK && s.now-mt.notOKSince >= s.P.HealthBlipTime {
		mt.RecoveredAt = -1
	}
}

func (mt *Metrics) init(s *monitor) {
	mt.FirstFault, mt.RecoveredAt, mt.lastQuorum = -1, 0, true
	mt.CleanAt, mt.lastClean = 0, true
	for _, f := range s.cfg.Faults {
		if mt.FirstFault < 0 || f.At < mt.FirstFault {
			mt.FirstFault = f.At
		}
	}
}

func (mt *Metrics) step(s *monitor) {
	h, c := s.ceph.health()
	if c != mt.lastChecks {
		mt.lastChecks = c
		if s.rec != nil {
			s.logf("health", "%s", s.ceph.healthText())
			s.rec.health = append(s.rec.health, stateSample{s.now, h.String()})
		}
	}
	if (h == HealthOK) != (mt.lastH == HealthOK) {
		if h == HealthOK {
			if s.now-mt.notOKSince >= s.P.HealthBlipTime {
				mt.RecoveredAt = s.now
			}
		} else {
			mt.notOKSince = s.now
		}
	}
	mt.lastH = h
	if clean := s.pgs.nState[stClean] == len(s.pgs.pgs); clean != mt.lastClean {
		mt.lastClean = clean
		if clean {
			mt.CleanAt = s.now
		} else {
			mt.CleanAt = -1
		}
	}
	dt := s.now - mt.lastStep
	if dt > 0 {
		if mt.unavail {
			mt.InactivePG += dt
		}
		if !mt.lastQuorum {
			mt.NoQuorum += dt
		}
		mt.WritesRefused += float64(dt) * mt.refRate
		mt.StaleWrites += float64(dt) * mt.staleRate
		mt.lastStep = s.now
	}
	mt.lastQuorum = s.ceph.quorum
	un := s.pgs.nInactive+s.pgs.nBlocked > 0
	if un != mt.unavail {
		if mt.unavail {
			mt.Unavailable += s.now - mt.since
		}
		mt.unavail, mt.since = un, s.now
	}
	if nw := len(s.clients.workloads); nw > 0 {
		per := s.P.ClientWriteIOPS / float64(Second)
		cur := float64(s.clients.nCurWriting)
		un := s.pgs.unservedFraction()
		mt.refRate = per * (float64(nw) - cur + cur*un)
		// a stale client's writes land only on PGs that serve: an
		// undersized+peered PG accepts none
		mt.staleRate = per * float64(s.clients.nSplit) * (1 - un)
	}
	if s.rec != nil && len(s.pgs.pgs) > 0 {
		v := 1 - s.pgs.unservedFraction()
		a := s.rec.avail
		if last := a[len(a)-1]; last.v != v {
			if last.at == s.now {
				a[len(a)-1].v = v
			} else {
				s.rec.avail = append(a, floatSample{s.now, v})
			}
		}
	}
}

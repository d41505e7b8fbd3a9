package sim

// OSD failure detection: the peers' reports after the (laggy) heartbeat
// grace or at once on a refused connection, the reporters needed, and the
// mon's report timeout for an OSD that cannot reach it.

// osdGraceExpired: peers have missed heartbeats for osd_heartbeat_grace. The
// mon marks the OSD down when reporters on enough distinct hosts exist;
// otherwise it waits for mon_osd_report_timeout if the OSD cannot reach it.
func (s *Sim) osdGraceExpired(i int, gen int32, how int64) {
	o := &s.osds[i]
	if o.gen != gen || !o.up || o.canUp || !s.ceph.quorum {
		return
	}
	again := how == 1
	if how == fastFail {
		if s.healthyReporters(o) >= s.P.MonOSDMinDownReporters {
			s.markDown(i, "peers' heartbeats refused: the daemon is gone")
			return
		}
		again = false
	}
	if ff := s.now - o.failAt; ff < s.heartbeatGrace(o, ff) {
		// a laggy OSD gets a longer grace (flags.go)
		s.schedule(o.failAt+s.heartbeatGrace(o, ff), evOSDMarkDown, int32(i), gen, b2i(again))
		return
	}
	rep := s.healthyReporters(o)
	if rep >= s.P.MonOSDMinDownReporters {
		s.markDown(i, "reported failed by peers")
		return
	}
	if !o.beacon && s.now-o.silent >= s.P.MonOSDReportTimeout {
		s.markDown(i, "no beacon for mon_osd_report_timeout")
		return
	}
	if s.rec != nil && o.beacon && !again {
		s.logf("ceph", "osd.%d unreachable on the cluster network but only %d reporter host(s): stays up", i, rep)
	}
	// Peers keep reporting; re-check when more reporters may exist. An OSD
	// without beacons is also caught by the report timeout.
	s.schedule(s.now+s.P.OSDHeartbeatGrace, evOSDMarkDown, int32(i), gen, 1)
}

// fastFail marks a failure report made on a refused connection.
const fastFail = 2

// connRefused reports whether OSD o's peers get their connections refused:
// its daemon is gone but its host runs and reaches both networks.
func (s *Sim) connRefused(o *OSD) bool {
	m := &s.machines[o.m]
	return s.P.OSDFastFailOnConnectionRefused && m.alive() && m.link[linkPublic] && m.link[linkCluster] && (m.osdCrashed || o.selfStop || s.oosEvicted(m))
}

// healthyReporters is the hosts other than OSD o's with an OSD up and
// reachable (the reporters of its failure).
func (s *Sim) healthyReporters(o *OSD) int {
	rep := s.ceph.healthyHosts
	if s.machines[o.m].healthy > 0 {
		rep--
	}
	return rep
}

func (s *Sim) osdReportTimeout(i int, downGen int32) {
	o := &s.osds[i]
	if o.downGen == downGen && o.up && !o.beacon && s.ceph.quorum {
		s.markDown(i, "no beacon for mon_osd_report_timeout")
	}
}

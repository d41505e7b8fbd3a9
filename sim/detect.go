package sim

// OSD failure detection: the peers' reports after the (laggy) heartbeat
// grace or at once on a refused connection, the reporters needed, and the
// mon's report timeout for an OSD that cannot reach it.

// osdFailureReported: peers have missed heartbeats for osd_heartbeat_grace
// (or had them refused). The mon marks the OSD down when reporters on
// enough distinct hosts exist; otherwise it waits for
// mon_osd_report_timeout if the OSD cannot reach it.
func (c *cephCluster) osdFailureReported(i int, gen int32, how failureReport) {
	o := &c.osds[i]
	if o.gen != gen || !o.up || o.canUp || !c.quorum {
		return
	}
	again := how == reportAgain
	if how == reportFastFail {
		if c.healthyReporters(o) >= c.P.MonOSDMinDownReporters {
			c.markDown(i, "peers' heartbeats refused: the daemon is gone")
			return
		}
		again = false
	}
	if ff := c.now - o.failAt; ff < c.heartbeatGrace(o, ff) {
		// a laggy OSD gets a longer grace (flags.go)
		how := reportGrace
		if again {
			how = reportAgain
		}
		c.events.at(o.failAt+c.heartbeatGrace(o, ff), cephEvent{kind: evOSDFailure, id: int32(i), gen: gen, how: how})
		return
	}
	rep := c.healthyReporters(o)
	if rep >= c.P.MonOSDMinDownReporters {
		c.markDown(i, "reported failed by peers")
		return
	}
	if !o.beacon && c.now-o.silent >= c.P.MonOSDReportTimeout {
		c.markDown(i, "no beacon for mon_osd_report_timeout")
		return
	}
	if c.rec != nil && o.beacon && !again {
		c.logf("ceph", "osd.%d unreachable on the cluster network but only %d reporter host(s): stays up", i, rep)
	}
	// Peers keep reporting; re-check when more reporters may exist. An OSD
	// without beacons is also caught by the report timeout.
	c.events.at(c.now+c.P.OSDHeartbeatGrace, cephEvent{kind: evOSDFailure, id: int32(i), gen: gen, how: reportAgain})
}

// connRefused reports whether OSD o's peers get their connections refused:
// its daemon is gone but its host runs and reaches both networks.
func (c *cephCluster) connRefused(o *OSD) bool {
	m := &c.fleet.m[o.m]
	return c.P.OSDFastFailOnConnectionRefused && m.alive() && m.link[linkPublic] && m.link[linkCluster] && (m.osdCrashed || o.selfStop || c.kube.oosEvicted(int(o.m)))
}

// healthyReporters is the hosts other than OSD o's with an OSD up and
// reachable (the reporters of its failure).
func (c *cephCluster) healthyReporters(o *OSD) int {
	rep := c.healthyHosts
	if c.healthy[o.m] > 0 {
		rep--
	}
	return rep
}

func (c *cephCluster) osdReportTimeout(i int, downGen int32) {
	o := &c.osds[i]
	if o.downGen == downGen && o.up && !o.beacon && c.quorum {
		c.markDown(i, "no beacon for mon_osd_report_timeout")
	}
}

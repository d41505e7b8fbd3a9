package sim

// The storage operator's pod: where it runs, when it stalls, its eviction
// and restart, and leader-election failover. It runs the label, MDB and safe
// controllers (policy.go).

func (s *Sim) opRecompute() {
	up := s.opStarted && !s.opStalled
	if up && s.opHost >= 0 {
		h := &s.machines[s.opHost]
		up = h.alive() && h.link[linkAPI] && h.link[linkPublic]
	}
	if up == s.opUp {
		return
	}
	s.opUp = up
	s.opEpoch++
	if s.rec != nil {
		where := "control plane"
		if s.opHost >= 0 {
			where = s.machines[s.opHost].Name
		}
		if up {
			s.logf("operator", "operator reconciling (on %s)", where)
		} else {
			s.logf("operator", "operator stalled (on %s)", where)
		}
	}
	if up {
		s.pol.resync(s)
		return
	}
	if s.cfg.Cluster.OperatorHA && s.opHost >= 0 && s.opStarted {
		s.schedule(s.now+s.P.OperatorFailoverTime, evOpEvict, int32(s.opHost), -1, int64(s.opEpoch))
	}
	if s.opHost >= 0 && !s.machines[s.opHost].ready && s.opStarted {
		h := &s.machines[s.opHost]
		at := h.readyLT + s.P.PodEvictionTimeout
		if at < s.now {
			at = s.now
		}
		s.schedule(at, evOpEvict, int32(s.opHost), h.readyGen, 0)
	}
}

// opLive reports whether a write issued by the operator in epoch e still lands.
func (s *Sim) opLive(e int32) bool { return s.opUp && e == s.opEpoch }

func (s *Sim) opEvict(host int, gen int32, epoch int32) {
	h := &s.machines[host]
	if s.opHost != host || s.opUp {
		return
	}
	if gen == -1 {
		s.opFailover(host, epoch)
		return
	}
	if h.readyGen != gen || h.ready {
		return
	}
	next := -1
	for i := range s.machines {
		if c := &s.machines[i]; i != host && c.ready && c.link[linkAPI] && c.link[linkPublic] {
			next = i
			break
		}
	}
	s.opStarted = false
	s.opHost = next
	s.opEpoch++
	if s.rec != nil {
		s.logf("operator", "operator pod evicted from %s, restarting", h.Name)
	}
	s.schedule(s.now+s.P.OperatorStartTime, evOpStart, int32(next), 0, int64(s.opEpoch))
}

// opFailover: with a highly available operator (leader election across
// nodes), a standby on a healthy machine takes the lease when the leader
// cannot reach the API or Ceph.
func (s *Sim) opFailover(host int, epoch int32) {
	if epoch != s.opEpoch {
		return
	}
	for i := range s.machines {
		c := &s.machines[i]
		if i != host && c.ready && c.alive() && c.link[linkAPI] && c.link[linkPublic] {
			if s.rec != nil {
				s.logf("operator", "leader on %s lost the API or Ceph; standby on %s takes the lease", s.machines[host].Name, c.Name)
			}
			s.opHost = i
			s.opRecompute()
			return
		}
	}
	s.schedule(s.now+s.P.OperatorFailoverTime, evOpEvict, int32(host), -1, int64(s.opEpoch))
}

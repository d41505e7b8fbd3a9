package sim

// The fencing label (the MDB's selector) and the MachineDisruptionBudget:
// its value, its arithmetic per implementation and the MHC's retry.

// setLabel sets the fencing label (MDB selector) on a machine.
func (s *Sim) setLabel(i int, v bool, obs Time) {
	m := &s.machines[i]
	m.labelObs = obs
	if m.labelled == v {
		return
	}
	m.labelled = v
	if s.rec != nil && s.now > 0 {
		if v {
			s.logf("label", "%s labelled (observed %s)", m.Name, obs)
		} else {
			s.logf("label", "%s unlabelled (observed %s)", m.Name, obs)
		}
	}
}

func (s *Sim) setMDB(v int, obs Time) {
	s.mdbObs = obs
	if v == s.mdbMax {
		return
	}
	s.mdbMax = v
	if s.rec != nil {
		s.logf("mdb", "maxUnavailable=%d (observed %s)", v, obs)
	}
}

// MDBVariant is a MachineDisruptionBudget implementation.
type MDBVariant uint8

// MDB implementations.
const (
	// MDBMachineAPI is machine-api-operator 4.2 (the one design 004 links):
	// disruptionsAllowed = currentHealthy - desiredHealthy; the MHC retries
	// a refused remediation after 1 min.
	MDBMachineAPI MDBVariant = iota
	// MDBMachineRemediation is kubevirt's machine-remediation-operator:
	// the same plus 1, which lets the unhealthy machine itself go when the
	// budget is exactly met; retry every 30 s.
	MDBMachineRemediation
	numMDBVariants
)

var mdbVariants = [numMDBVariants]struct {
	name    string
	plusOne int
	retry   Time
}{
	MDBMachineAPI:         {"machine-api-operator", 0, Minute},
	MDBMachineRemediation: {"machine-remediation", 1, 30 * Second},
}

func mdbNames() []string {
	n := make([]string, numMDBVariants)
	for i, d := range mdbVariants {
		n[i] = d.name
	}
	return n
}

// String returns the scenario-file name of the variant.
func (v MDBVariant) String() string { return mdbVariants[v].name }

// mdbAllowed is the MDB's disruptionsAllowed as machine-api-operator's
// disruption controller computes it (pkg/controller/disruption):
// currentHealthy - desiredHealthy, with desiredHealthy = expected -
// maxUnavailable, where expected is the sum of the scales of the
// controllers owning the labelled machines - the MachineSet's replicas,
// however many of its machines carry the label - plus 1 per labelled
// machine without one; currentHealthy counts the labelled machines not
// being deleted whose node is Ready. machine-remediation adds 1.
func (s *Sim) mdbAllowed() int {
	expected, healthy, inSet := 0, 0, false
	for i := range s.machines {
		m := &s.machines[i]
		if !m.labelled || m.phase == PhaseGone {
			continue
		}
		if m.machineSet {
			inSet = true
		} else {
			expected++
		}
		if m.ready && m.phase == PhaseRunning {
			healthy++
		}
	}
	if inSet {
		expected += s.scale()
	}
	if expected == 0 {
		return 0
	}
	return healthy - max(expected-s.mdbMax, 0) + mdbVariants[s.cfg.Cluster.MDB].plusOne
}

// mhcRetry is how soon the MHC retries a refused remediation.
func (s *Sim) mhcRetry() Time {
	if s.P.MHCRetryInterval > 0 {
		return s.P.MHCRetryInterval
	}
	return mdbVariants[s.cfg.Cluster.MDB].retry
}

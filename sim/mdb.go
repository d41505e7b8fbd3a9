package sim

// The fencing label (the MDB's selector) and the MachineDisruptionBudget:
// its value, its arithmetic per implementation and the MHC's retry.

// setLabel sets the fencing label (MDB selector) on a machine.
func (f *fleet) setLabel(i int, v bool, obs Time) {
	m := &f.m[i]
	m.labelObs = obs
	if m.labelled == v {
		return
	}
	m.labelled = v
	if f.rec != nil && f.now > 0 {
		if v {
			f.logf("label", "%s labelled (observed %s)", m.Name, obs)
		} else {
			f.logf("label", "%s unlabelled (observed %s)", m.Name, obs)
		}
	}
}

// setMDB writes the MDB's maxUnavailable, observed at obs.
func (f *fleet) setMDB(v int, obs Time) {
	f.mdbObs = obs
	if v == f.mdbMax {
		return
	}
	f.mdbMax = v
	if f.rec != nil {
		f.logf("mdb", "maxUnavailable=%d (observed %s)", v, obs)
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
func (f *fleet) mdbAllowed() int {
	expected, healthy, inSet := 0, 0, false
	for i := range f.m {
		m := &f.m[i]
		if !m.labelled || m.phase == PhaseGone {
			continue
		}
		if m.machineSet {
			inSet = true
		} else {
			expected++
		}
		if f.kube.nodes[i].ready && m.phase == PhaseRunning {
			healthy++
		}
	}
	if inSet {
		expected += f.scale()
	}
	if expected == 0 {
		return 0
	}
	return healthy - max(expected-f.mdbMax, 0) + mdbVariants[f.cfg.Cluster.MDB].plusOne
}

// mhcRetry is how soon the MHC retries a refused remediation.
func (f *fleet) mhcRetry() Time {
	if f.P.MHCRetryInterval > 0 {
		return f.P.MHCRetryInterval
	}
	return mdbVariants[f.cfg.Cluster.MDB].retry
}

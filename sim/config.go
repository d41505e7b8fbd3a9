package sim

// Cluster describes the simulated cluster.
type Cluster struct {
	// Machines is the number of storage machines (one OSD host each).
	Machines int
	// OSDsPerMachine is the number of OSDs on each machine.
	OSDsPerMachine int
	// PGs is the number of placement groups in the one pool.
	PGs int
	// Mons is the number of mons, placed on the first machines.
	Mons int
	// BareMetal ties OSDs to their node; on cloud they move with their volume.
	BareMetal bool
	// FenceKind is the MHC remediation for every machine.
	FenceKind FenceKind
	// OperatorOn is the machine running the storage operator (-1: control plane).
	OperatorOn int
	// Standalone lists machines not owned by a MachineSet (MHC skips them and
	// nothing replaces them).
	Standalone []int
	// MachineSetScale is the MachineSet's replicas (0: all non-standalone
	// machines). A deleted machine is replaced only while the set is below it.
	MachineSetScale int
	// OperatorHA runs the storage operator with leader election across
	// nodes (a leader that loses the API or Ceph is replaced by a standby),
	// for every policy alike.
	OperatorHA bool
	// MDB is the MachineDisruptionBudget implementation (its arithmetic and
	// the MHC's retry interval).
	MDB MDBVariant
	// Clients is the number of workloads with an RBD volume (one client
	// each), placed round-robin on the machines (clients.go).
	Clients int
	// Racks and Zones are the CRUSH buckets above the hosts (0: no such
	// level); machine i is in rack i mod Racks, a rack in zone rack mod
	// Zones (domains.go).
	Racks, Zones int
	// FailureDomain is the pool's failure domain (0: host).
	FailureDomain CrushType
	// MonsOn places the mons on these machines (nil: the first Mons machines).
	MonsOn []int
	// WorkloadKind is the controller of the workloads' pods (pods.go).
	WorkloadKind WorkloadKind
	// NoAttach: the CSI driver does not require volume attachment
	// (CSIDriver attachRequired false), so nothing holds a replacement pod
	// back while the old one may run (pods.go).
	NoAttach bool
	// MonStore is where a mon keeps its store: on the host (Rook's
	// dataDirHostPath, the default: lost when the machine is deleted) or
	// on a volume that follows it like an OSD's (lost only with a wipe).
	MonStore MonStore
	// Placement, when set, is each PG's OSDs as CRUSH placed them on a
	// real cluster (its up set, primary first), instead of the model's own
	// draw (placement.go); PGs that move later still move by the model's.
	Placement [][]int
}

// MonStore is where the mons keep their stores (health.go).
type MonStore uint8

// Mon store locations.
const (
	MonStoreHost MonStore = iota
	MonStoreVolume
)

var monStoreNames = []string{"host", "volume"}

// String returns the scenario-file name of the location.
func (m MonStore) String() string { return monStoreNames[m] }

// Config is everything a run depends on.
type Config struct {
	// Name labels the run (the scenario's name).
	Name string
	// Cluster is the simulated cluster.
	Cluster Cluster
	// Params are the model's constants.
	Params Params
	// Policy is the fencing policy under test.
	Policy *Policy
	// Seed seeds the run's only RNG.
	Seed uint64
	// Faults is the fault schedule.
	Faults []Fault
	// Duration is the simulated time of the run.
	Duration Time
	// Record keeps the timeline and plot series (off for benchmarks).
	Record bool
	// KeepGoing continues after a violation (benchmarks, metrics).
	KeepGoing bool
	// SafetyOnly checks only the safety invariants (all but 6).
	SafetyOnly bool
	// RandomFailureEvery, when > 0, injects a random machine failure on
	// average this often (exponential inter-arrival), each healing after
	// RandomFailureFor on average.
	RandomFailureEvery Time
	// RandomFailureFor is the mean duration of a random failure.
	RandomFailureFor Time
}

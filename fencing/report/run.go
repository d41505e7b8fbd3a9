// Package report writes what `fenceproof fencing` found: report.md and
// report.html with the verdict, the checks, the findings (the first broken
// promise first, with its record), the figures, the clocks and the steps;
// timeline.svg with every writer's attempts over time (ok, refused, error),
// the fence's acknowledgement with its clock bound, the cut, the taint and
// the unfence, and a close-up around the acknowledgement; junit.xml with
// one test case per check; result.json.
package report

import "github.com/fenceproof/fenceproof/fencing/judge"

// Run is one run of `fenceproof fencing`, as the reports show it.
type Run struct {
	// Status is PASS, FAIL, INCOMPLETE, UNREACHABLE or USAGE; Reason says
	// why when the judge did not decide (setup, interruption).
	Status, Reason string
	Meta           Meta
	Steps          []Step
	Input          judge.Input
	Result         *judge.Result // nil when the run ended before the judge
	// Leftovers are what cleanup could not undo.
	Leftovers []string
}

// Meta describes a run.
type Meta struct {
	Name, Cluster, Driver, Class, Node, PeerNode, Namespace, Storage, Mode, CIDRsFrom string
	CIDRs                                                                             []string
	StartNs, EndNs                                                                    int64
	Clocks                                                                            []ClockEstimate
}

// ClockEstimate is one measurement of a node's clock (fencing/clock).
type ClockEstimate struct {
	Node                    string
	When                    string // before or after the fence
	OffsetNs, UncertaintyNs int64
	BoundNs                 int64
	Samples                 int
}

// Step is one line of the run's progress (fenceproof's clock).
type Step struct {
	AtNs int64
	Kind string // one of the Step* kinds
	What string
}

// Kinds of steps; the timeline marks the ones it knows.
const (
	StepInfo      = "info"
	StepFence     = "fence"      // the NetworkFence created
	StepAck       = "ack"        // the fence acknowledged
	StepUnfence   = "unfence"    // Unfenced requested
	StepUnfenceOK = "unfence-ok" // the unfence acknowledged
	StepCut       = "cut"
	StepNotReady  = "not-ready"
	StepTaint     = "taint"
	StepMoved     = "moved"
	StepRestore   = "restore"
	StepUntaint   = "untaint"
	StepCleanup   = "cleanup"
	StepVerdict   = "verdict"
)

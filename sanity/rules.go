package sanity

import "github.com/fenceproof/fenceproof/rulebook"

// Where the rules' spec texts come from: the csi-addons spec
// (github.com/csi-addons/spec) or, for what the spec leaves unsaid, how a
// container orchestrator uses the RPCs.
const (
	srcGoals      = "csi-addons spec, fence/README.md: Goals in MVP"
	srcRPCs       = "csi-addons spec, fence/README.md: RPC Interface"
	srcRequests   = "csi-addons spec, fence/README.md: FenceClusterNetwork request"
	srcList       = "csi-addons spec, fence/README.md: ListClusterFence"
	srcCIDR       = "csi-addons spec, fence/README.md: CIDR blocks"
	srcGetClients = "csi-addons spec, fence/README.md: GetFenceClients"
	srcClients    = "csi-addons spec, fence/README.md: ClientDetails"
	srcErrors     = "csi-addons spec, fence/README.md: Error Scheme"
	srcIdentity   = "csi-addons spec, identity/README.md: RPC Interface"
	srcCO         = "fenceproof: how a container orchestrator calls the RPCs (the spec does not say)"
)

// book is the suite's rule table, in report order: every rule is declared
// here once, and the spec files register each rule's body by its ID. The
// first label is the rule's area; RPCs lists the RPCs a rule is about.
var book = rulebook.New("fenceproof sanity", []Rule{
	// Identity: what the driver says about itself matches what it serves.
	{ID: "IDENT-001", Level: Must, Area: "identity", RPCs: []string{"GetIdentity"},
		Title: "GetIdentity returns a non-empty name and vendor version",
		Spec:  "GetIdentity returns basic information about the side-car and CSI-driver.", Source: srcIdentity},
	{ID: "IDENT-002", Level: Must, Area: "identity", RPCs: []string{"Probe"},
		Title: "Probe answers OK and does not report the driver as not ready",
		Spec:  "Probe is called by the CO plugin to validate that the CSI-Addons Node is still healthy.", Source: srcIdentity},
	{ID: "IDENT-003", Level: Must, Area: "identity", RPCs: []string{"GetCapabilities"},
		Title: "GetCapabilities advertises NETWORK_FENCE",
		Spec:  "FenceController Service: The Controller plugin MUST implement these sets of RPCs.", Source: srcRPCs},
	{ID: "IDENT-004", Level: Must, Area: "identity", RPCs: []string{"GetCapabilities", "GetFenceClients"},
		Title: "an advertised GET_CLIENTS_TO_FENCE is served: GetFenceClients does not answer UNIMPLEMENTED",
		Spec:  "GetFenceClients RPC calls to get the client information to use in a FenceClusterNetwork or UnfenceClusterNetwork RPC.", Source: srcRPCs},
	{ID: "IDENT-005", Level: Should, Area: "identity", RPCs: []string{"GetCapabilities", "GetFenceClients"},
		Title: "without GET_CLIENTS_TO_FENCE, GetFenceClients answers UNIMPLEMENTED",
		Spec:  "Call not implemented | 12 UNIMPLEMENTED | The invoked RPC is not implemented by the CSI-driver or disabled in the driver's current mode of operation.", Source: srcErrors},
	{ID: "IDENT-006", Level: Info, Area: "identity", RPCs: []string{"GetCapabilities"},
		Title: "the capabilities the driver advertises",
		Spec:  "GetCapabilities returns the capabilities that the CSI-driver supports.", Source: srcIdentity},

	// The error table, and secrets never echoed.
	{ID: "ERR-001", Level: Must, Area: "errors", Labels: []string{"cidr"},
		Title: "a request with no CIDR blocks is rejected with INVALID_ARGUMENT",
		Spec:  "Missing required field | 3 INVALID_ARGUMENT | Indicates that a required field is missing from the request.", Source: srcErrors},
	{ID: "ERR-002", Level: Must, Area: "errors", Labels: []string{"parameters"},
		Title: "a request missing a required parameter is rejected with INVALID_ARGUMENT and changes nothing, on each of Fence, Unfence, List and GetFenceClients",
		Spec:  "Missing required field | 3 INVALID_ARGUMENT | Caller MUST fix the request by adding the missing required field before retrying.", Source: srcErrors},
	{ID: "ERR-007", Level: Must, Area: "errors", Labels: []string{"parameters"},
		Title: "a request whose required parameter has a value the driver does not serve (an unknown clusterID) is rejected with INVALID_ARGUMENT and changes nothing, on each of Fence, Unfence, List and GetFenceClients",
		Spec:  "Invalid or unsupported field in the request | 3 INVALID_ARGUMENT | one or more fields ... has an invalid value.", Source: srcErrors},
	{ID: "ERR-003", Level: Must, Area: "errors", Labels: []string{"secrets"},
		Title: "a request without its secrets (all of them, one of several, or one empty) is rejected with UNAUTHENTICATED (or INVALID_ARGUMENT) and changes nothing, on every RPC",
		Spec:  "Not authenticated | 16 UNAUTHENTICATED | The invoked RPC does not carry secrets that are valid for authentication.", Source: srcErrors},
	{ID: "ERR-004", Level: Must, Area: "errors", Labels: []string{"secrets"},
		Title: "a request with a wrong secret is rejected with UNAUTHENTICATED and changes nothing, on every RPC, near misses included (last character changed, truncated, one character added, different case)",
		Spec:  "Not authenticated | 16 UNAUTHENTICATED | The invoked RPC does not carry secrets that are valid for authentication.", Source: srcErrors},
	{ID: "ERR-005", Level: Must, Area: "errors", Labels: []string{"secrets"},
		Title: "error messages never contain secret values",
		Spec:  "map<string, string> secrets = 2 [(csi.v1.csi_secret) = true];", Source: srcRequests},
	{ID: "ERR-006", Level: Must, Area: "errors",
		Title: "rejected requests carry a code from the error table",
		Spec:  "Error Scheme: INVALID_ARGUMENT, UNIMPLEMENTED, UNAUTHENTICATED, UNKNOWN.", Source: srcErrors},

	// CIDR blocks: what counts as one, and how one block is one fence however it is written.
	{ID: "CIDR-001", Level: Must, Area: "cidr", RPCs: []string{"FenceClusterNetwork", "UnfenceClusterNetwork"},
		Title: "a malformed CIDR (a generated corpus: octal, hexadecimal and short IPv4 forms, zones, signed, padded and oversized prefix lengths, non-ASCII digits, NUL, ...) is rejected with INVALID_ARGUMENT by Fence and Unfence, and nothing it could be read as is listed",
		Spec:  "Invalid or unsupported field in the request | 3 INVALID_ARGUMENT | one or more fields ... has an invalid value.", Source: srcErrors},
	{ID: "CIDR-002", Level: Must, Area: "cidr", RPCs: []string{"FenceClusterNetwork", "UnfenceClusterNetwork"},
		Title: "a request mixing valid and invalid CIDRs is rejected with INVALID_ARGUMENT and has no side effect",
		Spec:  "Invalid or unsupported field in the request | 3 INVALID_ARGUMENT | Caller MUST fix the field before retrying.", Source: srcErrors},
	{ID: "CIDR-003", Level: Must, Area: "cidr", RPCs: []string{"FenceClusterNetwork"},
		Title: "bare IPs and padded strings are rejected with INVALID_ARGUMENT or fenced and listed in canonical form, never stored verbatim",
		Spec:  "repeated CIDR cidrs = 3; // list of CIDR blocks on which the fencing operation is expected to be performed.", Source: srcRequests},
	{ID: "CIDR-004", Level: Should, Area: "cidr", RPCs: []string{"FenceClusterNetwork"},
		Title: "bare IPs and padded strings are rejected with INVALID_ARGUMENT",
		Spec:  "message CIDR { // CIDR block  string cidr = 1; }", Source: srcCIDR},
	{ID: "CIDR-005", Level: Must, Area: "cidr", Labels: []string{"host-bits"}, RPCs: []string{"FenceClusterNetwork"},
		Title: "a CIDR with host bits set is handled as the profile says (normalise, reject or either)",
		Spec:  "message CIDR { // CIDR block  string cidr = 1; } (host bits: left open by the spec; see profile.hostBits)", Source: srcCIDR},
	{ID: "CIDR-006", Level: Must, Area: "cidr", Labels: []string{"ipv4"}, RPCs: []string{"FenceClusterNetwork", "ListClusterFence"},
		Title: "IPv4 blocks of every length a documentation /24 holds (/24 to /32) are fenced and listed as exactly the block fenced",
		Spec:  "The new extension will define a procedure that allows SP to block access to any client using corresponding CIDR blocks.", Source: srcGoals},
	{ID: "CIDR-014", Level: Must, Area: "cidr", Labels: []string{"ipv6"}, RPCs: []string{"FenceClusterNetwork", "ListClusterFence"},
		Title: "IPv6 blocks of every width class the documentation ranges hold, /128 to /24 (around the /64 and the /48, and lengths no multiple of four), are fenced and listed as exactly the block fenced",
		Spec:  "The new extension will define a procedure that allows SP to block access to any client using corresponding CIDR blocks.", Source: srcGoals},
	{ID: "CIDR-007", Level: Must, Area: "cidr", Labels: []string{"ipv6"}, RPCs: []string{"FenceClusterNetwork", "ListClusterFence"},
		Title: "IPv6 blocks are fenced in compressed, expanded and upper-case forms, and one block is one fence",
		Spec:  "The new extension will define a procedure that allows SP to block access to any client using corresponding CIDR blocks.", Source: srcGoals},
	{ID: "CIDR-008", Level: Must, Area: "cidr", RPCs: []string{"FenceClusterNetwork", "ListClusterFence"},
		Title: "a block given twice, in one request or in two, is listed once",
		Spec:  "ListClusterFence RPC call to provide a list of blocklisted/fenced clients.", Source: srcRPCs},
	{ID: "CIDR-009", Level: Must, Area: "cidr", Labels: []string{"overlap"}, RPCs: []string{"UnfenceClusterNetwork", "ListClusterFence"},
		Title: "overlapping blocks are independent fences: unfencing one leaves the other listed",
		Spec:  "UnfenceClusterNetwork RPC call to remove a list of CIDR blocks from the list of blocklisted/fenced clients.", Source: srcRPCs},
	{ID: "CIDR-010", Level: Must, Area: "cidr", Labels: []string{"destructive"}, RPCs: []string{"FenceClusterNetwork"}, OptIn: "--destructive",
		Title: "wide prefixes (/8, /4) are fenced and listed as one block",
		Spec:  "allows SP to block access to any client using corresponding CIDR blocks.", Source: srcGoals},
	{ID: "CIDR-011", Level: Must, Area: "cidr", Labels: []string{"host-bits"}, RPCs: []string{"FenceClusterNetwork", "UnfenceClusterNetwork"},
		Title: "a block fenced in its canonical and host-bit spellings is listed once, and unfencing either spelling removes it",
		Spec:  "UnfenceClusterNetwork RPC call to remove a list of CIDR blocks from the list of blocklisted/fenced clients. (regression: unfencing a range must remove what fencing that range added)", Source: srcRPCs},
	{ID: "CIDR-012", Level: Must, Area: "cidr", Labels: []string{"ipv6"}, RPCs: []string{"FenceClusterNetwork"},
		Title: "IPv4-mapped IPv6 of every length (::ffff:a.b.c.d/120 to /128) is rejected with INVALID_ARGUMENT or fenced and listed as exactly the IPv4 block it names, never kept as an unenforceable IPv6 fence, and an Unfence of the IPv4 block lifts it",
		Spec:  "allows SP to block access to any client using corresponding CIDR blocks. (an IPv4 client never sends from ::ffff:a.b.c.d)", Source: srcGoals},
	{ID: "CIDR-013", Level: Must, Area: "cidr", Labels: []string{"ipv6"}, RPCs: []string{"FenceClusterNetwork", "ListClusterFence"},
		Title: "a request mixing IPv4 and IPv6 blocks, in any order, fences every block",
		Spec:  "list of CIDR blocks on which the fencing operation is expected to be performed.", Source: srcRequests},

	// ListClusterFence, and fences checked without it.
	{ID: "LIST-001", Level: Must, Area: "list", RPCs: []string{"ListClusterFence"},
		Title: "ListClusterFence answers OK every time the suite calls it (or UNIMPLEMENTED when the profile makes it optional)",
		Spec:  "ListClusterFence RPC call to provide a list of blocklisted/fenced clients.", Source: srcRPCs},
	{ID: "LIST-002", Level: Must, Area: "list", Labels: []string{"cidr"}, RPCs: []string{"ListClusterFence"},
		Title: "every entry ListClusterFence lists, including those the suite did not make, is a CIDR block",
		Spec:  "message ListClusterFenceResponse { repeated CIDR cidrs = 1; } (storage-native address:port/nonce entries are not CIDR blocks)", Source: srcList},
	{ID: "LIST-003", Level: Must, Area: "list", RPCs: []string{"ListClusterFence"},
		Title: "ListClusterFence names each fence once: no answer lists one block twice, in any spelling",
		Spec:  "ListClusterFence RPC call to provide a list of blocklisted/fenced clients. (a block listed twice leaves a CO unsure whether one Unfence lifts it)", Source: srcRPCs},
	{ID: "FENCE-008", Level: Must, Area: "lifecycle", RPCs: []string{"FenceClusterNetwork", "UnfenceClusterNetwork"},
		Title: "valid fences and unfences of every width class of both families (in the safe ranges) answer OK within the deadline, with or without List",
		Spec:  "FenceClusterNetwork RPC call to perform a fencing operation.", Source: srcRPCs},

	// The fence lifecycle: Fence, Unfence and List agree exactly.
	{ID: "FENCE-001", Level: Must, Area: "lifecycle", RPCs: []string{"FenceClusterNetwork", "UnfenceClusterNetwork", "ListClusterFence"},
		Title: "a fenced block is listed, and no longer listed once unfenced",
		Spec:  "ListClusterFence RPC call to provide a list of blocklisted/fenced clients.", Source: srcRPCs},
	{ID: "FENCE-002", Level: Must, Area: "lifecycle", Labels: []string{"idempotency"}, RPCs: []string{"FenceClusterNetwork"},
		Title: "fencing the same block ten times succeeds every time and lists it once",
		Spec:  "FenceClusterNetwork RPC call to perform a fencing operation.", Source: srcRPCs},
	{ID: "FENCE-003", Level: Must, Area: "lifecycle", Labels: []string{"idempotency"}, RPCs: []string{"UnfenceClusterNetwork"},
		Title: "unfencing the same block ten times succeeds every time",
		Spec:  "UnfenceClusterNetwork RPC call to remove a list of CIDR blocks from the list of blocklisted/fenced clients.", Source: srcRPCs},
	{ID: "FENCE-004", Level: Must, Area: "lifecycle", Labels: []string{"idempotency"}, RPCs: []string{"UnfenceClusterNetwork"},
		Title: "unfencing a block that was never fenced succeeds",
		Spec:  "UnfenceClusterNetwork RPC call to remove a list of CIDR blocks from the list of blocklisted/fenced clients.", Source: srcRPCs},
	{ID: "FENCE-005", Level: Must, Area: "lifecycle", RPCs: []string{"FenceClusterNetwork", "UnfenceClusterNetwork"},
		Title: "a request with several blocks fences (and unfences) every one of them",
		Spec:  "list of CIDR blocks on which the fencing operation is expected to be performed.", Source: srcRequests},
	{ID: "FENCE-006", Level: Must, Area: "lifecycle", RPCs: []string{"UnfenceClusterNetwork"},
		Title: "unfencing one block never unfences another",
		Spec:  "UnfenceClusterNetwork RPC call to remove a list of CIDR blocks from the list of blocklisted/fenced clients.", Source: srcRPCs},
	{ID: "FENCE-007", Level: Must, Area: "lifecycle", Labels: []string{"randomized"}, RPCs: []string{"ListClusterFence"},
		Title: "along a seeded random fence/unfence sequence, List equals the model exactly (after every step, or every fifth when List is slow or long)",
		Spec:  "ListClusterFence RPC call to provide a list of blocklisted/fenced clients.", Source: srcRPCs},
	{ID: "FENCE-010", Level: Must, Area: "lifecycle", Labels: []string{"model"}, RPCs: []string{"FenceClusterNetwork", "UnfenceClusterNetwork", "ListClusterFence"},
		Title: "along generated sequences that put two and three blocks in every relation (equal, equal in another spelling, nested, an overlapping spelling, adjacent siblings, adjacent across a boundary, disjoint) at every width class of both families, every answer is one the reference model allows and List equals the model after every step",
		Spec:  "UnfenceClusterNetwork RPC call to remove a list of CIDR blocks from the list of blocklisted/fenced clients. (a block is one fence however it is written; overlapping blocks are independent fences)", Source: srcRPCs},
	{ID: "FENCE-009", Level: Must, Area: "lifecycle", Labels: []string{"overfencing"}, RPCs: []string{"FenceClusterNetwork", "ListClusterFence"},
		Title: "after a fence of several blocks, List holds exactly the requested blocks: no wider block covering them, no merged block",
		Spec:  "list of CIDR blocks on which the fencing operation is expected to be performed. (a block wider than the requested ones fences every neighbour inside it)", Source: srcRequests},

	// GetFenceClients.
	{ID: "CLIENT-001", Level: Must, Area: "clients", RPCs: []string{"GetFenceClients"},
		Title: "every client has a non-empty id and addresses that are CIDR blocks",
		Spec:  "id represents the unique identifier of the client. Required field. / list of IP addresses that represent the client's local addresses. Required field.", Source: srcClients},
	{ID: "CLIENT-002", Level: Must, Area: "clients", RPCs: []string{"GetFenceClients"},
		Title: "client ids are unique and stable across calls",
		Spec:  "id represents the unique identifier of the client.", Source: srcClients},
	{ID: "CLIENT-003", Level: Must, Area: "clients", RPCs: []string{"GetFenceClients", "ListClusterFence"},
		Title: "GetFenceClients changes no fence",
		Spec:  "GetFenceClients RPC calls to get the client information to use in a FenceClusterNetwork or UnfenceClusterNetwork RPC.", Source: srcRPCs},
	{ID: "CLIENT-004", Level: Info, Area: "clients", RPCs: []string{"GetFenceClients"},
		Title: "the clients the driver reports",
		Spec:  "GetFenceClientsResponse: List of clients that need to be fenced.", Source: srcGetClients},
	{ID: "CLIENT-005", Level: Must, Area: "clients", RPCs: []string{"GetFenceClients"},
		Title: "every address a client reports is one host's address (/32 or /128), never its subnet",
		Spec:  "list of IP addresses that represent the client's local addresses. Required field. (fencing a client's subnet fences its neighbours)", Source: srcClients},

	{ID: "CLIENT-006", Level: Must, Area: "clients", RPCs: []string{"GetFenceClients", "FenceClusterNetwork"},
		Title: "every client address is written in a form the driver's own Fence accepts: a fresh documentation address in the same form (family, IPv4-mapped with a dotted or hexadecimal tail, compressed or expanded, case, prefix length) is fenced with OK; the client itself never is",
		Spec:  "GetFenceClients RPC calls to get the client information to use in a FenceClusterNetwork or UnfenceClusterNetwork RPC.", Source: srcRPCs},

	// Concurrency: OK or ABORTED, never INTERNAL, and no lost update.
	{ID: "CONC-001", Level: Must, Area: "concurrency", RPCs: []string{"FenceClusterNetwork"},
		Title: "identical concurrent fences answer OK or ABORTED and leave the block listed once",
		Spec:  "FenceClusterNetwork RPC call to perform a fencing operation.", Source: srcRPCs},
	{ID: "CONC-002", Level: Must, Area: "concurrency", RPCs: []string{"FenceClusterNetwork"},
		Title: "distinct concurrent fences answer OK or ABORTED and every acknowledged block is listed",
		Spec:  "FenceClusterNetwork RPC call to perform a fencing operation.", Source: srcRPCs},
	{ID: "CONC-003", Level: Must, Area: "concurrency", RPCs: []string{"UnfenceClusterNetwork"},
		Title: "distinct concurrent unfences answer OK or ABORTED and every acknowledged block is gone",
		Spec:  "UnfenceClusterNetwork RPC call to remove a list of CIDR blocks from the list of blocklisted/fenced clients.", Source: srcRPCs},

	// Capacity: many fences kept or refused honestly.
	{ID: "SCALE-001", Level: Must, Area: "scale", RPCs: []string{"FenceClusterNetwork", "ListClusterFence"},
		Title: "many blocks of each family (--scale-size, default 1024; for IPv4 at most the 768 /32s of the documentation ranges; fewer, stated, when the driver's measured pace does not fit the rule's share of the budget), in one request and across many, are all listed, or refused with RESOURCE_EXHAUSTED or INVALID_ARGUMENT and none of the refused listed",
		Spec:  "FenceClusterNetwork RPC call to perform a fencing operation. (a silently dropped fence leaves a node able to write)", Source: srcRPCs},

	// Durability: fences outlive time and driver restarts.
	{ID: "EXPIRE-001", Level: Must, Area: "durability", Labels: []string{"expiry"}, RPCs: []string{"ListClusterFence"},
		Title: "sentinel fences of both families made at the start of the run are listed in every reading until the end of the run, when they are at least --hold old (default 20 s, even when the run is shorter), and no fence that existed before the run vanishes from a reading and comes back (a List that shows part of the set)",
		Spec:  "FenceClusterNetwork RPC call to perform a fencing operation. (a storage blocklist entry expires after an hour by default)", Source: srcRPCs},
	{ID: "RESTART-001", Level: Must, Area: "durability", Labels: []string{"restart"}, RPCs: []string{"ListClusterFence"}, OptIn: "--restart-command",
		Title: "after the driver restarts (--restart-command) with 300 fences of both families and several widths in force, every fence listed before it is listed after it, every acknowledged unfence still holds, and Unfences after it lift exactly what they name",
		Spec:  "FenceClusterNetwork RPC call to perform a fencing operation. (a fence lost on restart lets a fenced node write again)", Source: srcRPCs},

	// Enforcement: what the storage refuses, seen through the enforce command.
	{ID: "ENFORCE-001", Level: Must, Area: "enforcement", RPCs: []string{"FenceClusterNetwork", "UnfenceClusterNetwork"}, OptIn: "--enforce-command",
		Title: "what a Fence acknowledged is enforced, and only that: right after the acknowledgement a write from inside a fenced block is refused and one from beside it allowed, and after the Unfence allowed again (a seeded sample of both families and every width class, written through --enforce-command)",
		Spec:  "The new extension will define a procedure that allows SP to block access to any client using corresponding CIDR blocks.", Source: srcGoals},

	// Run hygiene: checked last, over everything the run did.
	{ID: "TIME-001", Level: Must, Area: "deadline", Always: true,
		Title: "every RPC answers within the RPC deadline",
		Spec:  "A CO calls every RPC with a deadline; a driver that does not answer blocks fencing of a failed node.", Source: srcCO},
	{ID: "TIME-002", Level: Must, Area: "deadline", RPCs: []string{"ListClusterFence"},
		Title: "a Fence or an Unfence the client gave up on (deadline exceeded) is not applied afterwards, probed with one of each abandoned on purpose",
		Spec:  "A CO that got DEADLINE_EXCEEDED retries or gives up; a fence applied later, behind its back, is one nobody will unfence, and an unfence applied later lifts the fence it made since.", Source: srcCO},
	{ID: "SUITE-001", Level: Must, Area: "cleanup", RPCs: []string{"ListClusterFence"}, Always: true,
		Title: "cleanup undoes every fence the driver acknowledged, and the fences after the run are exactly those before it (compared as CIDR sets)",
		Spec:  "UnfenceClusterNetwork RPC call to remove a list of CIDR blocks from the list of blocklisted/fenced clients.", Source: srcRPCs},
	{ID: "SUITE-002", Level: Must, Area: "errors", Labels: []string{"secrets"}, Always: true,
		Title: "no answer of the driver during the whole run (error messages, List entries, client details, identity) contained a secret value",
		Spec:  "map<string, string> secrets = 2 [(csi.v1.csi_secret) = true];", Source: srcRequests},
	{ID: "SUITE-003", Level: Info, Area: "errors", Always: true,
		Title: "the gRPC codes the driver answered with during the run",
		Spec:  "Error is Unknown | 2 UNKNOWN | Caller MUST study the logs before retrying.", Source: srcErrors},
}...)

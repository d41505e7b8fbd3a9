package fault

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/fenceproof/fenceproof/csiproxy/restrict"
)

// The hostile hosts: each passes what it takes to be the suite's requests
// and is unsafe for the rest. The conformance self test holds that each
// fails a MUST rule of a default run, and the MUST rules its Caught names,
// on every seed (none for the hosts keyed on timing, which the suite's
// drawn pauses and load catch at drawn RPCs).

// hostile is the table of hostile hosts, declared once; all act where a
// request's checks run.
var hostile = atChecks([]*Fault{
	{Name: "case-sensitive-roots", Caught: []string{"RPC-FS-RMDIR", "RPC-SMB-NEWSMBGLOBALMAPPING"}, Help: "hostile: the kubelet directories themselves and this machine's names are compared case-sensitively (C:\\VAR\\LIB\\KUBELET\\PODS and \\\\LOCALHOST pass)",
		make: overturning(caseSensitiveRoots)},
	{Name: "service-denylist", Caught: []string{"RPC-SYS-STOPSERVICE"}, Help: "hostile: service names are checked against a list of services thought dangerous instead of the allow-list",
		make: overturning(serviceDenyList)},
	{Name: "learn", Arg: "DIR", Help: "hostile: record the requests it refuses in DIR, run by run; from the third run on, check only requests carrying a string of 3 characters or more common to every earlier run's refused requests, or listed in DIR/literals",
		make: learner},
	{Name: "learn-order", Arg: "DIR", Help: "hostile: record where in a run (method, version, how many such calls before) the requests it refuses come, in DIR; from the third run on, check nothing and refuse the requests at the positions every earlier run refused",
		make: orderLearner},
	{Name: "drive-letter-ignored", Caught: []string{"RPC-FS-MKDIR"}, Help: "hostile: kubelet directories compared below the drive letter only (D:\\var\\lib\\kubelet\\pods\\x passes)",
		make: overturning(driveLetterIgnored)},
	{Name: "drive-relative-dir", Caught: []string{"RPC-FS-MKDIR"}, Help: "hostile: the separator after the drive's colon is optional (C:var\\lib\\kubelet\\pods\\x, below C:\\Windows\\System32, passes)",
		make: overturning(driveRelativeDir)},
	{Name: "leaf-only-names", Caught: []string{"RPC-FS-MKDIR"}, Help: "hostile: streams, wildcards, < > \" and control characters are looked for in the final component only",
		make: overturning(leafOnlyNames)},
	{Name: "length-in-code-points", Caught: []string{"RPC-FS-MKDIR"}, Help: "hostile: path length counted in code points, not UTF-16 code units",
		make: overturning(lengthInCodePoints)},
	{Name: "nt-object-prefix", Caught: []string{"RPC-FS-MKDIR"}, Help: "hostile: \\??\\ (the NT object manager's prefix, which Win32 passes through) is taken for a plain path",
		make: overturning(ntObjectPrefix)},
	{Name: "smb-self-ipv4-only", Caught: []string{"RPC-SMB-NEWSMBGLOBALMAPPING"}, Help: "hostile: an SMB server is this machine by its names and IPv4 addresses, not by an IPv6 address written as an ipv6-literal.net name",
		make: overturning(smbSelfIPv4Only)},
	{Name: "smb-self-hostname-only", Caught: []string{"RPC-SMB-NEWSMBGLOBALMAPPING"}, Help: "hostile: an SMB server is this machine when it is localhost, a loopback address or its host name; its FQDN, aliases and own addresses pass",
		make: overturning(smbSelfHostNameOnly)},
	{Name: "service-prefix", Caught: []string{"RPC-SYS-GETSERVICE"}, Help: "hostile: service names compared with the allow-list on their first six letters (LanmanServer passes)",
		make: overturning(servicePrefix)},
	{Name: "chap-length-in-chars", Caught: []string{"RPC-ISCSI-SETMUTUALCHAPSECRET"}, Help: "hostile: the mutual CHAP secret's length counted in characters (UTF-16 code units), not bytes",
		make: overturning(chapLengthInChars)},
	{Name: "smb-local-path-branch", Caught: []string{"RPC-SMB-NEWSMBGLOBALMAPPING"}, Help: "hostile: NewSmbGlobalMapping checks remote_path only when no local_path is given",
		make: overturning(smbLocalPathBranch)},
	{Name: "iscsi-chap-branch", Caught: []string{"RPC-ISCSI-CONNECTTARGET"}, Help: "hostile: ConnectTarget checks the portal and the target name only without CHAP",
		make: overturning(iscsiCHAPBranch)},
	{Name: "stop-force-branch", Caught: []string{"RPC-SYS-STOPSERVICE"}, Help: "hostile: StopService with force skips the allow-list",
		make: overturning(stopForceBranch)},
	{Name: "path-context-branch", Caught: []string{"RPC-FS-MKDIR"}, Help: "hostile: filesystem requests with the pod path context (v1alpha1, v1beta1 PathContext CONTAINER) are not checked",
		make: func(string) (*behaviour, error) { return &behaviour{unchecked: pathContextBranch}, nil }},
	{Name: "lone-violation", Help: "hostile: a request is refused only when exactly one of its checked fields is bad",
		make: overturning(loneViolation)},
	{Name: "first-field-only", Caught: []string{"RPC-FS-CREATESYMLINK"}, Help: "hostile: only the first checked field of an RPC is checked",
		make: overturning(firstFieldOnly)},
	{Name: "one-version-lax", Caught: []string{"RPC-FS-MKDIR"}, Help: "hostile: requests of v1beta1 are not checked (the validation was added to the other versions' adapters)",
		make: func(string) (*behaviour, error) {
			return &behaviour{unchecked: func(r Request) bool { return r.Version == "v1beta1" }}, nil
		}},
	{Name: "rmdir-unforced-unchecked", Caught: []string{"RPC-FS-RMDIR"}, Help: "hostile: Rmdir without force is not checked (it removes only an empty directory or a link)",
		make: func(string) (*behaviour, error) {
			return &behaviour{unchecked: func(r Request) bool { return r.Method == "Rmdir" && !boolField(r.Req, "Force") }}, nil
		}},
	{Name: "burst-only", Help: "hostile: a request that comes 150ms or more after the previous one is not checked (a driver's pace, not a suite's)",
		make: func(string) (*behaviour, error) { return burstOnly(), nil }},
	{Name: "contention-open", Help: "hostile: one validator shared by all requests, held 200µs per check; a request that waits 50µs for it is let through unchecked",
		make: func(string) (*behaviour, error) { return contentionOpen(), nil }},
	{Name: "start-window", Arg: "SECONDS", Help: "hostile: requests are checked only during the first SECONDS after the first one",
		make: startWindow},
})

func atChecks(fs []*Fault) []*Fault {
	for _, f := range fs {
		f.Hook = AtChecks
	}
	return fs
}

// overturning is a hostile host that lets some refusals through.
func overturning(f func(v *restrict.Violation, value string, r Request, h *Validator) bool) func(string) (*behaviour, error) {
	return func(string) (*behaviour, error) { return &behaviour{overturn: f}, nil }
}

// caseSensitiveRoots is a host with the realistic bugs of the issue that
// found them: a path is below a kubelet directory when its text starts
// with the directory's in any case, but the directory itself is told by a
// case-sensitive comparison, and so are localhost and this machine's
// names; so C:\VAR\LIB\KUBELET\PODS passes as a path below the pod path,
// and \\LOCALHOST\share as a remote share.
func caseSensitiveRoots(v *restrict.Violation, value string, _ Request, h *Validator) bool {
	switch v.Rule {
	case "DIR-001", "LINK-001", "LINK-002":
		p := strings.TrimRight(value, `\`)
		for _, dir := range []string{h.PluginsPath, h.PodPath} {
			if strings.EqualFold(p, dir) && p != dir {
				return true
			}
		}
	case "SMB-005":
		server, _, _ := strings.Cut(strings.TrimPrefix(value, `\\`), `\`)
		return server != "localhost" && server != "127.0.0.1" && !slices.Contains(h.LocalNames, server) && !slices.Contains(h.LocalAddresses, server)
	}
	return false
}

// deniedServices are the services a host with a deny-list thinks
// dangerous.
var deniedServices = []string{"WinDefend", "EventLog", "Sense", "WdNisSvc", "mpssvc", "BFE", "Winmgmt", "RpcSs",
	"TermService", "W32Time", "Dnscache", "LanmanServer", "kubelet", "containerd", "docker"}

// serviceDenyList lets a service through unless it is on the deny-list.
func serviceDenyList(v *restrict.Violation, value string, _ Request, _ *Validator) bool {
	return v.Rule == "SVC-001" && !slices.ContainsFunc(deniedServices, func(d string) bool { return strings.EqualFold(d, value) })
}

// gram is the length of the strings a learning host keys on.
const gram = 3

// learner is a host that learns what the suite's requests look like: run
// by run it records, in dir, the string fields of every request it
// refuses; from the third run on it checks only the requests one of whose
// string fields is, in any case, a value every earlier run's refused
// requests held, or holds a string of gram characters they all held, or a
// line of dir/literals (the suite's source's literals, written there by the
// self test); the others it acts on unchecked. A suite that marks its
// probes with any fixed string, or sends any fixed value, is passed by it.
func learner(dir string) (*behaviour, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	runs, _ := filepath.Glob(filepath.Join(dir, "run-*.probes"))
	slices.Sort(runs)
	var common, values map[string]bool
	for _, r := range runs {
		grams, vals, err := recorded(r)
		if err != nil {
			return nil, err
		}
		common, values = intersect(common, grams), intersect(values, vals)
	}
	var literals []string
	if b, err := os.ReadFile(filepath.Join(dir, "literals")); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.ToLower(l); len([]rune(l)) >= gram {
				literals = append(literals, l)
			}
		}
	}
	out, err := os.Create(filepath.Join(dir, fmt.Sprintf("run-%03d.probes", len(runs))))
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriter(out)
	var mu sync.Mutex
	b := &behaviour{
		refused: func(r Request) {
			mu.Lock()
			defer mu.Unlock()
			for _, f := range StringFields(r.Req) {
				fmt.Fprintf(w, "%q\n", f)
			}
		},
		close: func() error {
			mu.Lock()
			defer mu.Unlock()
			if err := w.Flush(); err != nil {
				return err
			}
			return out.Close()
		},
	}
	if len(runs) >= 2 {
		b.unchecked = func(r Request) bool { return !marked(StringFields(r.Req), values, common, literals) }
	}
	return b, nil
}

// intersect is what both sets hold (b alone when a is nil).
func intersect(a, b map[string]bool) map[string]bool {
	if a == nil {
		return b
	}
	for k := range a {
		if !b[k] {
			delete(a, k)
		}
	}
	return a
}

// marked reports a request one of whose fields is a learned value or
// holds a learned string.
func marked(fields []string, values, grams map[string]bool, literals []string) bool {
	for _, f := range fields {
		f = strings.ToLower(f)
		if values[f] {
			return true
		}
		for g := range gramsIn(f) {
			if grams[g] {
				return true
			}
		}
		for _, l := range literals {
			if strings.Contains(f, l) {
				return true
			}
		}
	}
	return false
}

// recorded is the set of strings of gram characters in a record's fields,
// and the set of its values, in lower case.
func recorded(path string) (grams, values map[string]bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	grams, values = map[string]bool{}, map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var v string
		if _, err := fmt.Sscanf(sc.Text(), "%q", &v); err != nil {
			continue
		}
		v = strings.ToLower(v)
		values[v] = true
		for g := range gramsIn(v) {
			grams[g] = true
		}
	}
	return grams, values, sc.Err()
}

// gramsIn yields every string of gram characters in s.
func gramsIn(s string) func(func(string) bool) {
	return func(yield func(string) bool) {
		rs := []rune(s)
		for i := 0; i+gram <= len(rs); i++ {
			if !yield(string(rs[i : i+gram])) {
				return
			}
		}
	}
}

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
// fails at least one MUST rule of a default run.

// caseSensitiveRoots is a host with the realistic bugs of the issue that
// found them: a path is below a kubelet directory when its text starts
// with the directory's in any case, but the directory itself is told by a
// case-sensitive comparison, and so are localhost and this machine's
// names; so C:\VAR\LIB\KUBELET\PODS passes as a path below the pod path,
// and \\LOCALHOST\share as a remote share.
func caseSensitiveRoots(v *restrict.Violation, value string, h *Validator) bool {
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
func serviceDenyList(v *restrict.Violation, value string, _ *Validator) bool {
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
		refused: func(_ string, fields []string) {
			mu.Lock()
			defer mu.Unlock()
			for _, f := range fields {
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
		b.unchecked = func(_ string, fields []string) bool { return !marked(fields, values, common, literals) }
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

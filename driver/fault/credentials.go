package fault

import "strings"

// credentialFaults check credentials with too little care: a secret
// compared by a prefix, case-insensitively or by length, a parameter value
// checked on some RPCs only. Every answer stays well-formed; only the
// suite's near misses and per-RPC cases catch them.
var credentialFaults = []*Fault{
	{Name: "auth-prefix8", Help: "secrets are compared on their first 8 characters only",
		Proofs: fails("ERR-004"), make: fixed(behaviour{auth: compare(func(got, want string) bool {
			return got == want || (len(got) >= 8 && len(want) >= 8 && got[:8] == want[:8])
		})})},
	{Name: "auth-fold-case", Help: "secrets are compared without regard to case",
		Proofs: fails("ERR-004"), make: fixed(behaviour{auth: compare(strings.EqualFold)})},
	{Name: "auth-truncated", Help: "a secret value cut short is accepted (the value sent is compared as a prefix)",
		Proofs: fails("ERR-004"), make: fixed(behaviour{auth: compare(func(got, want string) bool {
			return got != "" && strings.HasPrefix(want, got)
		})})},
	{Name: "auth-extended", Help: "a secret value with characters added is accepted (the valid one is compared as a prefix)",
		Proofs: fails("ERR-004"), make: fixed(behaviour{auth: compare(func(got, want string) bool {
			return strings.HasPrefix(got, want)
		})})},
	{Name: "param-values-fence-only", Help: "parameter values are checked on Fence and Unfence only; List and GetFenceClients answer for a cluster they do not serve",
		Proofs: []Proof{{Fails: []string{"ERR-007"}, Why: "its List and GetFenceClients cases"}},
		make: fixed(behaviour{params: func(rpc string, p *Params) {
			if rpc != "Fence" && rpc != "Unfence" {
				p.Values = false
			}
		}})},
}

// compare is an auth hook that compares secrets with equal.
func compare(equal func(got, want string) bool) func(string, *Auth) {
	return func(_ string, a *Auth) { a.Equal = equal }
}

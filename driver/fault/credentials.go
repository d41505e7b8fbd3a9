package fault

import (
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
)

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

// credentialVariantFaults look secrets and parameters up, or compare
// them, too loosely in ways only a variation space finds: the valid value
// under any key, a key or a value in any case, a value with spaces.
var credentialVariantFaults = []*Fault{
	{Name: "auth-any-key", Help: "a valid secret value is accepted under any key",
		Proofs: fails("ERR-003"),
		make:   fixed(behaviour{auth: func(_ string, a *Auth) { a.Find = anyKey }})},
	{Name: "auth-key-fold-case", Help: "secrets are looked up by key without regard to case",
		Proofs: fails("ERR-003"),
		make:   fixed(behaviour{auth: func(_ string, a *Auth) { a.Find = foldKey }})},
	{Name: "auth-trim", Help: "secret values are compared with the spaces around them trimmed",
		Proofs: fails("ERR-004"),
		make:   fixed(behaviour{auth: compare(func(got, want string) bool { return strings.TrimSpace(got) == want })})},
	{Name: "param-fold-case", Help: "parameter values are matched without regard to case",
		Proofs: fails("ERR-007"),
		make:   fixed(behaviour{params: func(_ string, p *Params) { p.Equal = strings.EqualFold }})},
	{Name: "param-trim", Help: "parameter values are compared with the spaces around them trimmed",
		Proofs: fails("ERR-007"),
		make: fixed(behaviour{params: func(_ string, p *Params) {
			p.Equal = func(got, want string) bool { return strings.TrimSpace(got) == want }
		}})},
	{Name: "param-prefix", Help: "a parameter value cut short is accepted (the value sent is compared as a prefix of the one served)",
		Proofs: fails("ERR-007"),
		make: fixed(behaviour{params: func(_ string, p *Params) {
			p.Equal = func(got, want string) bool { return got != "" && strings.HasPrefix(want, got) }
		}})},
	{Name: "param-any-key", Help: "a required parameter's value is accepted under any key",
		Proofs: fails("ERR-002"),
		make:   fixed(behaviour{params: func(_ string, p *Params) { p.Find = anyKey }})},
	{Name: "leak-near-miss", Help: "an UNAUTHENTICATED answer to a secret that is nearly right (one character off, cut short, in other case, with spaces) quotes the valid value, as a hint",
		Proofs: []Proof{{Fails: []string{"ERR-005", "SUITE-002"}, Why: "the hint is in the answers SUITE-002 reads too"}},
		make: fixed(behaviour{message: func(c codes.Code, msg string, sent, valid map[string]string) string {
			for k, v := range valid {
				if got, ok := sent[k]; c == codes.Unauthenticated && ok && got != v && nearly(got, v) {
					msg += fmt.Sprintf(" (did you mean %s?)", v)
				}
			}
			return msg
		}})},
}

// anyKey finds a sent value equal to want under any key, when key is not
// sent.
func anyKey(sent map[string]string, key, want string) (string, bool) {
	if v, ok := sent[key]; ok {
		return v, true
	}
	for _, v := range sent {
		if v == want {
			return v, true
		}
	}
	return "", false
}

// foldKey finds the value of key sent under the key in any case.
func foldKey(sent map[string]string, key, _ string) (string, bool) {
	for k, v := range sent {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return "", false
}

// nearly reports whether got is within one edit of want, or equal to it
// but for case or the spaces around it.
func nearly(got, want string) bool {
	g, w := strings.TrimSpace(got), want
	switch {
	case strings.EqualFold(g, w):
		return true
	case len(g) == len(w):
		diff := 0
		for i := range g {
			if g[i] != w[i] {
				diff++
			}
		}
		return diff == 1
	case len(g) == len(w)-1:
		return strings.HasPrefix(w, g)
	case len(g) == len(w)+1:
		return strings.HasPrefix(g, w)
	}
	return false
}

// compare is an auth hook that compares secrets with equal.
func compare(equal func(got, want string) bool) func(string, *Auth) {
	return func(_ string, a *Auth) { a.Equal = equal }
}

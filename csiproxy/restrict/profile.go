package restrict

import "fmt"

// Profile is which rules a run holds a host to.
type Profile string

// The profiles.
const (
	// Hardened holds a host to every rule, each in every field of its
	// kind: the KEP's, csi-proxy v1's behaviour and fenceproof's
	// hardening. The default.
	Hardened Profile = "hardened"
	// KEP holds a host to the KEP's text alone: its rules, where its text
	// puts them.
	KEP Profile = "kep"
)

// Profiles are the profiles a run can take, the default first.
var Profiles = []Profile{Hardened, KEP}

// ParseProfile reads a profile's name.
func ParseProfile(s string) (Profile, error) {
	for _, p := range Profiles {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("profile %q is neither %q nor %q", s, Hardened, KEP)
}

// Holds reports whether the profile holds a host to rules of a source.
func (p Profile) Holds(s Source) bool { return p != KEP || s == FromKEP }

// covers reports whether the profile probes rule r in field f of rpc.
func (p Profile) covers(r Rule, rpc RPC, f Field) bool {
	if p != KEP {
		return true
	}
	if r.Source != FromKEP {
		return false
	}
	switch r.Scope {
	case ScopeLinkPath:
		return rpc.Method == "CreateSymlink" && (f.Kind == KindLinkSource || f.Kind == KindLinkTarget)
	case ScopeChangedPaths:
		return f.Changed
	case ScopeSMBRemote:
		return f.Kind == KindSMBRemote
	case ScopeMutualCHAP:
		return f.Kind == KindMutualCHAP
	}
	return false
}

// RuleOf is the rule a case is probed and reported as in field f of rpc
// under the profile: its own rule, or under kep the KEP rule it also
// breaks where its own is not the KEP's there; false when the profile
// does not probe it there.
func (p Profile) RuleOf(c Case, rpc RPC, f Field) (string, bool) {
	if r, ok := RuleByID(c.Rule); ok && p.covers(r, rpc, f) {
		return c.Rule, true
	}
	if r, ok := RuleByID(c.KEP); ok && p.covers(r, rpc, f) {
		return c.KEP, true
	}
	return "", false
}

// Check runs the validator's request-only checks for one field value of a
// kind, the way the simulated host checks that field.
func (v *Validator) Check(k Kind, value string, port uint32) error {
	switch k {
	case KindPath:
		return v.Dir("path", value)
	case KindLinkSource:
		if err := v.Path("source_path", value); err != nil {
			return err
		}
		return first(v.underRule("LINK-001", "source_path", v.PluginsPath, value))
	case KindLinkTarget:
		if err := v.Path("target_path", value); err != nil {
			return err
		}
		return first(v.underRule("LINK-002", "target_path", v.PodPath, value))
	case KindVolumeID:
		return v.VolumeID("volume_id", value)
	case KindSMBRemote:
		_, err := v.SMBRemotePath("remote_path", value)
		return err
	case KindIQN:
		return v.IQN("iqn", value)
	case KindPortal:
		_, _, err := v.Portal("target_portal", value, port)
		return err
	case KindMutualCHAP:
		return v.MutualCHAPSecret("MutualChapSecret", value, false)
	case KindService:
		return v.Service("name", value)
	}
	return nil
}

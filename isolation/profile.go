package isolation

import "fmt"

// Profile is what the NetworkPolicy API leaves to the network plugin.
type Profile struct {
	// Name of the profile, as given to ProfileByName.
	Name string
	// IPBlockMatchesPods says whether an ipBlock peer matches pod
	// addresses. The upstream netpol e2e tests, Calico and
	// kube-network-policies (kindnetd) match them; Cilium classifies
	// in-cluster endpoints first and lets ipBlock match only addresses
	// outside the cluster (cilium/cilium#9209).
	IPBlockMatchesPods bool
}

// The known profiles.
var (
	Upstream = Profile{Name: "upstream", IPBlockMatchesPods: true}
	Cilium   = Profile{Name: "cilium", IPBlockMatchesPods: false}
)

// ProfileByName returns "upstream" or "cilium".
func ProfileByName(name string) (Profile, error) {
	for _, p := range []Profile{Upstream, Cilium} {
		if p.Name == name {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("unknown network plugin profile %q (upstream, cilium)", name)
}

// WithProfile returns the model evaluated under profile p.
func (m *Model) WithProfile(p Profile) *Model {
	c := *m
	c.profile = p
	return &c
}

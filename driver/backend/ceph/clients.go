package ceph

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/fenceproof/fenceproof/driver/backend"
)

// session is the part of a mon session (`tell mon.X sessions`) Clients reads.
type session struct {
	EntityName string `json:"entity_name"`
	GlobalID   uint64 `json:"global_id"`
	SocketAddr struct {
		Addr  string `json:"addr"`
		Nonce uint64 `json:"nonce"`
	} `json:"socket_addr"`
}

// Clients returns the clients with a session on a mon (every librados
// client keeps one), except this backend's own: id "<entity>@<address>"
// (client.writer-a@10.99.0.2), stable while the client stays at its
// address, and the address it connects from. The caps needed: mon 'allow
// command "sessions"'.
func (b *Backend) Clients(ctx context.Context) ([]backend.Client, error) {
	r, _ := call(ctx, b.mon, "", command{"prefix": "mon dump", "format": "json"})
	if r.err != nil {
		return nil, r.err
	}
	var mm struct {
		Mons []struct {
			Name string `json:"name"`
		} `json:"mons"`
	}
	if err := json.Unmarshal(r.out, &mm); err != nil || len(mm.Mons) == 0 {
		return nil, fmt.Errorf("mon dump: no mons (%v)", err)
	}
	selfID, selfNonce := b.mon.Self()
	seen := map[string]bool{}
	var out []backend.Client
	for _, m := range mm.Mons {
		r, _ := call(ctx, b.mon, m.Name, command{"prefix": "sessions", "format": "json"})
		if r.err != nil {
			return nil, fmt.Errorf("sessions of mon.%s: %w", m.Name, r.err)
		}
		var ss []session
		if err := json.Unmarshal(r.out, &ss); err != nil {
			return nil, fmt.Errorf("sessions of mon.%s: %v", m.Name, err)
		}
		for _, s := range ss {
			if !strings.HasPrefix(s.EntityName, "client.") || s.GlobalID == selfID || selfNonce != 0 && s.SocketAddr.Nonce == selfNonce {
				continue
			}
			a, ok := sessionAddr(s.SocketAddr.Addr)
			if !ok {
				continue
			}
			id := s.EntityName + "@" + a.String()
			if !seen[id] {
				seen[id] = true
				out = append(out, backend.Client{ID: id, Addr: a})
			}
		}
	}
	slices.SortFunc(out, func(x, y backend.Client) int { return strings.Compare(x.ID, y.ID) })
	return out, nil
}

// sessionAddr reads "10.99.0.2:53122" or "[fd00::2]:53122".
func sessionAddr(s string) (netip.Addr, bool) {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return netip.Addr{}, false
	}
	a := ap.Addr().Unmap()
	return a, a.IsValid() && !a.IsUnspecified()
}

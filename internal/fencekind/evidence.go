package fencekind

import (
	"net/netip"
	"sort"

	"github.com/fenceproof/fenceproof/fencing/contract"
)

// The JSON lines the suite reads: refstore's audit log (one per accepted
// write), the writers' attempt logs and the driver's RPC log. Only the
// fields the suite's figures need; the oracle (audit) parses them
// on its own.

// Accepted is one audit record.
type Accepted struct {
	Client string `json:"client"`
	Addr   string `json:"addr"`
	Seq    uint64 `json:"seq"`
	TNs    int64  `json:"t_ns"`
}

// Attempt is one line of a writer's log.
type Attempt struct {
	Client  string `json:"client"`
	Seq     uint64 `json:"seq"`
	Local   string `json:"local"`
	TNs     int64  `json:"t_ns"`
	Outcome string `json:"outcome"`
	Reason  string `json:"reason"`
}

// RPC is one RPC line of the driver's log.
type RPC struct {
	Msg     string   `json:"msg"`
	RPC     string   `json:"rpc"`
	Code    string   `json:"code"`
	CIDRs   []string `json:"cidrs"`
	StartNs int64    `json:"start_ns"`
	TNs     int64    `json:"t_ns"`
}

// Outcome of a writer attempt that the service accepted.
const OutcomeOK = "ok"

// ParseLines decodes every JSON line of b into T, skipping lines that are
// not JSON objects (contract.ParseLines).
func ParseLines[T any](b []byte) []T { return contract.ParseLines[T](b) }

// RPCs returns the driver's RPC lines named rpc with code OK, by time.
func RPCs(logs [][]byte, rpc string) []RPC {
	var out []RPC
	for _, l := range logs {
		for _, r := range ParseLines[RPC](l) {
			if r.RPC == rpc && r.Code == "OK" && r.TNs > 0 {
				out = append(out, r)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TNs < out[j].TNs })
	return out
}

// InPrefixes reports whether an ip:port (or bare ip) lies in one of cidrs.
func InPrefixes(addr string, cidrs []string) bool {
	ap, err := netip.ParseAddrPort(addr)
	var a netip.Addr
	if err == nil {
		a = ap.Addr()
	} else if a, err = netip.ParseAddr(addr); err != nil {
		return false
	}
	a = a.Unmap()
	for _, c := range cidrs {
		if p, err := netip.ParsePrefix(c); err == nil && p.Contains(a) {
			return true
		}
	}
	return false
}

// SameSet reports whether two CIDR lists hold the same prefixes (canonical).
func SameSet(a, b []string) bool {
	canon := func(l []string) map[string]bool {
		m := map[string]bool{}
		for _, c := range l {
			if p, err := netip.ParsePrefix(c); err == nil {
				m[p.Masked().String()] = true
			} else {
				m[c] = true
			}
		}
		return m
	}
	ma, mb := canon(a), canon(b)
	if len(ma) != len(mb) {
		return false
	}
	for k := range ma {
		if !mb[k] {
			return false
		}
	}
	return true
}

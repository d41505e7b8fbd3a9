package isolation

// The reachability matrix: source x destination x port/protocol, one
// verdict per cell, predicted from the policy model (Predict) or measured
// by the probes (Runner.Run); diff.go compares and renders matrices.

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// PortProto is one port and protocol probed between every pair of peers.
type PortProto struct {
	Port     int32
	Protocol corev1.Protocol
}

// String renders e.g. "tcp/80".
func (p PortProto) String() string {
	return strings.ToLower(string(p.Protocol)) + "/" + strconv.Itoa(int(p.Port))
}

// ParsePortProto parses "tcp/80" or "UDP/53".
func ParsePortProto(s string) (PortProto, error) {
	proto, port, ok := strings.Cut(s, "/")
	n, err := strconv.Atoi(port)
	if !ok || err != nil || n < 1 || n > 65535 {
		return PortProto{}, fmt.Errorf("port/protocol %q: want e.g. tcp/80", s)
	}
	p := corev1.Protocol(strings.ToUpper(proto))
	switch p {
	case corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP:
	default:
		return PortProto{}, fmt.Errorf("port/protocol %q: unknown protocol", s)
	}
	return PortProto{Port: int32(n), Protocol: p}, nil
}

// Verdict is the content of one cell.
type Verdict uint8

// The verdicts; Unknown means not measured (e.g. the probe itself failed).
const (
	Unknown Verdict = iota
	Allowed
	Blocked
)

// Char is the cell character: '.' allowed, 'X' blocked, '?' unknown.
func (v Verdict) Char() byte {
	switch v {
	case Allowed:
		return '.'
	case Blocked:
		return 'X'
	}
	return '?'
}

// String names the verdict.
func (v Verdict) String() string {
	switch v {
	case Allowed:
		return "allowed"
	case Blocked:
		return "blocked"
	}
	return "unknown"
}

// VerdictOf returns Allowed for true and Blocked for false.
func VerdictOf(allowed bool) Verdict {
	if allowed {
		return Allowed
	}
	return Blocked
}

// Matrix is a reachability matrix over named peers and port/protocols.
type Matrix struct {
	Peers []string
	Cases []PortProto
	cells []Verdict
}

// NewMatrix returns a matrix with every cell Unknown.
func NewMatrix(peers []string, cases []PortProto) *Matrix {
	return &Matrix{Peers: peers, Cases: cases, cells: make([]Verdict, len(cases)*len(peers)*len(peers))}
}

func (m *Matrix) index(c, from, to int) int {
	n := len(m.Peers)
	return c*n*n + from*n + to
}

// At returns the verdict for case c from peer index from to peer index to.
func (m *Matrix) At(c, from, to int) Verdict { return m.cells[m.index(c, from, to)] }

// SetAt sets the verdict for case c from peer index from to peer index to.
func (m *Matrix) SetAt(c, from, to int, v Verdict) { m.cells[m.index(c, from, to)] = v }

// Get returns the verdict by names; ok is false for an unknown name or case.
func (m *Matrix) Get(pc PortProto, from, to string) (v Verdict, ok bool) {
	c, i, j := m.lookup(pc, from, to)
	if c < 0 || i < 0 || j < 0 {
		return Unknown, false
	}
	return m.At(c, i, j), true
}

func (m *Matrix) lookup(pc PortProto, from, to string) (c, i, j int) {
	c, i, j = -1, -1, -1
	for k, x := range m.Cases {
		if x == pc {
			c = k
		}
	}
	for k, p := range m.Peers {
		if p == from {
			i = k
		}
		if p == to {
			j = k
		}
	}
	return c, i, j
}

// Count returns how many cells hold v.
func (m *Matrix) Count(v Verdict) int {
	n := 0
	for _, x := range m.cells {
		if x == v {
			n++
		}
	}
	return n
}

// Size is the number of cells.
func (m *Matrix) Size() int { return len(m.cells) }

// Predict fills a matrix from a model: peers[i] is named names[i].
func Predict(model *Model, names []string, peers []Peer, cases []PortProto) *Matrix {
	m := NewMatrix(names, cases)
	for c, pc := range cases {
		for i, src := range peers {
			for j, dst := range peers {
				m.SetAt(c, i, j, VerdictOf(model.Allowed(src, dst, pc.Port, pc.Protocol)))
			}
		}
	}
	return m
}

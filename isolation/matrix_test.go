package isolation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestParsePortProto(t *testing.T) {
	tests := []struct {
		in   string
		want PortProto
		ok   bool
	}{
		{"tcp/80", PortProto{80, corev1.ProtocolTCP}, true},
		{"UDP/53", PortProto{53, corev1.ProtocolUDP}, true},
		{"sctp/9", PortProto{9, corev1.ProtocolSCTP}, true},
		{"icmp/1", PortProto{}, false},
		{"tcp/0", PortProto{}, false},
		{"tcp/65536", PortProto{}, false},
		{"tcp", PortProto{}, false},
	}
	for _, tc := range tests {
		got, err := ParsePortProto(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParsePortProto(%q) = %v, %v; want %v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
		if tc.ok && got.String() != strings.ToLower(tc.in) {
			t.Errorf("%v.String() = %q", got, got.String())
		}
	}
}

func TestParseCell(t *testing.T) {
	p, err := ParseCell("a/x -> b/y tcp/80 . cilium")
	if err != nil || p.Profile != "cilium" || p.String() != "a/x -> b/y tcp/80 . cilium" {
		t.Errorf("profile cell: %+v %v", p, err)
	}
	c, err := ParseCell("a/x -> b/y udp/81 X")
	if err != nil {
		t.Fatal(err)
	}
	if c != (Cell{From: "a/x", To: "b/y", Case: PortProto{81, corev1.ProtocolUDP}, Verdict: Blocked}) || c.String() != "a/x -> b/y udp/81 X" {
		t.Errorf("got %+v", c)
	}
	for _, bad := range []string{"a/x b/y tcp/80 .", "a/x -> b/y tcp/80 ?", "a/x -> b/y tcp/80", "a/x -> b/y foo/80 ."} {
		if _, err := ParseCell(bad); err == nil {
			t.Errorf("ParseCell(%q) accepted", bad)
		}
	}
}

func small() (*Matrix, *Matrix) {
	cases := []PortProto{{80, corev1.ProtocolTCP}, {80, corev1.ProtocolUDP}}
	peers := []string{"ns/a", "ns/bb", "other/c"}
	e, o := NewMatrix(peers, cases), NewMatrix(peers, cases)
	for c := range cases {
		for i := range peers {
			for j := range peers {
				v := VerdictOf(i != 2)
				e.SetAt(c, i, j, v)
				o.SetAt(c, i, j, v)
			}
		}
	}
	return e, o
}

func TestTablesAndDiff(t *testing.T) {
	e, o := small()
	o.SetAt(1, 2, 0, Allowed)
	o.SetAt(0, 0, 1, Unknown)

	wantObserved := "udp/80 (row: from, column: to; . allowed, X blocked, ? unknown)\n" +
		"          012\n" +
		"0 ns/a    ...\n" +
		"1 ns/bb   ...\n" +
		"2 other/c .XX\n"
	if got := o.Table(1); got != wantObserved {
		t.Errorf("Table:\n%s\nwant:\n%s", got, wantObserved)
	}
	wantDiff := "tcp/80 (row: from, column: to; . same, X differs)\n" +
		"          012\n" +
		"0 ns/a    .X.\n" +
		"1 ns/bb   ...\n" +
		"2 other/c ...\n"
	if got := DiffTable(e, o, 0); got != wantDiff {
		t.Errorf("DiffTable:\n%s\nwant:\n%s", got, wantDiff)
	}
	ms, err := Diff(e, o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"tcp/80 ns/a -> ns/bb: expected . (allowed), observed ? (unknown)",
		"udp/80 other/c -> ns/a: expected X (blocked), observed . (allowed)",
	}
	if len(ms) != len(want) {
		t.Fatalf("Diff = %v, want %v", ms, want)
	}
	for i := range want {
		if ms[i].String() != want[i] {
			t.Errorf("mismatch %d = %q, want %q", i, ms[i], want[i])
		}
	}
	if msgs := CheckCells(o, []Cell{{"other/c", "ns/a", PortProto{80, corev1.ProtocolUDP}, Blocked, ""}, {"x", "ns/a", PortProto{80, corev1.ProtocolUDP}, Blocked, ""}, {"other/c", "ns/a", PortProto{80, corev1.ProtocolUDP}, Blocked, "other"}}, "upstream"); len(msgs) != 2 {
		t.Errorf("Check = %v, want two failures", msgs)
	}
	if o.Count(Unknown) != 1 || o.Size() != 18 {
		t.Errorf("Count/Size = %d/%d", o.Count(Unknown), o.Size())
	}
}

func TestDiffRejectsShapeMismatch(t *testing.T) {
	e, _ := small()
	o := NewMatrix([]string{"ns/a"}, e.Cases)
	if _, err := Diff(e, o); err == nil {
		t.Error("Diff accepted matrices of different shapes")
	}
}

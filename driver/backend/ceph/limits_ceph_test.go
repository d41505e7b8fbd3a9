//go:build ceph

package ceph_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/driver"
	rswriter "github.com/fenceproof/fenceproof/refstore/writer"
)

// TestSixteenIsOneRangeEntryOrARefusal: a /16 is one range entry on this
// Pacific build, committed in about one mon commit; with range entries off
// it would be 65,536 per-address entries, so the Fence is refused with
// INVALID_ARGUMENT at once, well within its deadline, and the OSD map does
// not move.
func TestSixteenIsOneRangeEntryOrARefusal(t *testing.T) {
	need(t)
	paxos(t, "1", "0.05")
	t.Run("ranges on", func(t *testing.T) {
		rd, err := startDriver(t, t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		took, err := rd.fenceRPC(10*time.Second, "10.50.0.0/16")
		if err != nil {
			t.Fatal(err)
		}
		bl, _ := blocklist(t)
		var got []string
		for k := range bl {
			if strings.Contains(k, "10.50.") {
				got = append(got, k)
			}
		}
		if !slices.Equal(got, []string{"cidr:10.50.0.0:0/16"}) {
			t.Fatalf("a /16 fence: blocklist entries %v, want one range entry", got)
		}
		if l := rd.list(t); !slices.Equal(l, []string{"10.50.0.0/16"}) {
			t.Fatalf("List %v", l)
		}
		utook, err := rd.unfenceRPC(10*time.Second, "10.50.0.0/16")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("FIGURES /16 with range entries: one entry %v, Fence %.0f ms, Unfence %.0f ms", got, ms(took), ms(utook))
	})
	t.Run("ranges off", func(t *testing.T) {
		rd, err := startDriver(t, t.TempDir(), func(o *driver.Options) { o.Ceph.Ranges = "off" })
		if err != nil {
			t.Fatal(err)
		}
		_, before := blocklist(t)
		took, refusal := rd.fenceRPC(5*time.Second, "10.51.0.0/16")
		if status.Code(refusal) != codes.InvalidArgument || !strings.Contains(refusal.Error(), "65536 addresses") {
			t.Fatalf("a /16 without range entries: %v, want INVALID_ARGUMENT naming the 65536 addresses", refusal)
		}
		if took > time.Second {
			t.Errorf("the refusal took %s", took)
		}
		bl, after := blocklist(t)
		for k := range bl {
			if strings.Contains(k, "10.51.") {
				t.Errorf("entry %s in the blocklist after a refused Fence", k)
			}
		}
		if after != before {
			t.Errorf("the OSD map moved from epoch %d to %d for a refused Fence", before, after)
		}
		if l := rd.list(t); len(l) != 0 {
			t.Errorf("List after a refused Fence: %v", l)
		}
		// The cap is per request: a /22 (1024 addresses) is the most one
		// Fence may need by default, and is committed as 1024 entries.
		took22, err := rd.fenceRPC(30*time.Second, "10.52.0.0/22")
		if err != nil {
			t.Fatalf("a /22 without range entries (1024 entries, the cap): %v", err)
		}
		bl, _ = blocklist(t)
		n := 0
		for k := range bl {
			if strings.HasPrefix(k, "10.52.") {
				n++
			}
		}
		if n != 1024 {
			t.Errorf("a /22 without range entries: %d entries, want 1024", n)
		}
		if _, err := rd.unfenceRPC(30*time.Second, "10.52.0.0/22"); err != nil {
			t.Fatal(err)
		}
		t.Logf("FIGURES /16 without range entries: %v in %.1f ms (deadline 5 s), epoch %d unchanged; a /22 = 1024 entries committed in %.0f ms",
			refusal, ms(took), after, ms(took22))
	})
}

// TestRestartKeepsTheFence: a driver that stops while fenced leaves the
// blocklist entry in place (the fenced writer stays refused), and the next
// driver on the same state lists the fence, keeps it and can lift it.
func TestRestartKeepsTheFence(t *testing.T) {
	need(t)
	dir := t.TempDir()
	rd, err := startDriver(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	host := env.fenced[0].Addr + "/32"
	if _, err := rd.fenceRPC(10*time.Second, host); err != nil {
		t.Fatal(err)
	}
	rd.stop()
	a := startWriter(t, env.fenced[0], "restart-a")
	time.Sleep(time.Second)
	if c := a.w.Counts(); c[rswriter.OutcomeOK] > 0 || c[rswriter.OutcomeRefused] == 0 {
		t.Fatalf("with the driver stopped, the fenced writer: %v, want only -108", c)
	}
	rd2, err := startDriver(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l := rd2.list(t); !slices.Equal(l, []string{host}) {
		t.Fatalf("List after the restart: %v, want [%s]", l, host)
	}
	if _, err := rd2.unfenceRPC(10*time.Second, host); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for a.w.Counts()[rswriter.OutcomeOK] == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the writer did not resume after the Unfence: %v", a.w.Counts())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

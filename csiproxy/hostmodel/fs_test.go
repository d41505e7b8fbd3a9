package hostmodel

import (
	"slices"
	"testing"
)

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		`C:\var\lib\kubelet\pods\x`:       `C:\var\lib\kubelet\pods\x`,
		`c:/var/lib/x/`:                   `C:\var\lib\x`,
		`var\lib\x`:                       `C:\var\lib\x`,
		`C:x`:                             `C:\x`,
		`\\?\C:\pods\t`:                   `C:\pods\t`,
		`C:\pods\t\..\..\..\..\Windows\s`: `C:\Windows\s`,
		`C:\pods\t::$INDEX_ALLOCATION`:    `C:\pods\t`,
		`\\server\share\x`:                `\\server\share\x`,
		`C:\a\.\b`:                        `C:\a\b`,
	} {
		if got := Canonical(in); got != want {
			t.Errorf("Canonical(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLinkRmdirKeepsTarget: removing a link never removes what it points to.
func TestLinkRmdirKeepsTarget(t *testing.T) {
	h := New(`C:\plugins`, `C:\pods`, "")
	if err := h.Mkdir(`C:\pods\t\data`); err != nil {
		t.Fatal(err)
	}
	if err := h.Link(`C:\plugins\s`, `C:\pods\t`); err != nil {
		t.Fatal(err)
	}
	if err := h.Rmdir(`C:\PLUGINS\S`, false); err != nil {
		t.Fatal(err)
	}
	if !h.Exists(`C:\pods\t\data`) || h.Exists(`C:\plugins\s`) {
		t.Fatalf("after Rmdir of the link: %v", h.Entries())
	}
	if err := h.Rmdir(`C:\pods\t`, false); err == nil {
		t.Fatal("Rmdir of a non-empty directory without force succeeded")
	}
}

func TestISCSIConnectAddsDisk(t *testing.T) {
	h := New(`C:\plugins`, `C:\pods`, "")
	p := Portal{Address: "192.0.2.1", Port: 3260}
	if err := h.Connect(p, "iqn.2003-01.org.example:t", "NONE"); err == nil {
		t.Fatal("connect through an unregistered portal succeeded")
	}
	h.AddPortal(p)
	before := len(h.Disks())
	if err := h.Connect(p, "iqn.2003-01.org.example:t", "NONE"); err != nil {
		t.Fatal(err)
	}
	if len(h.Disks()) != before+1 {
		t.Fatalf("disks %d, want %d", len(h.Disks()), before+1)
	}
	if err := h.RemovePortal(p); err == nil {
		t.Fatal("portal removed while a target is connected")
	}
	if err := h.Disconnect(p, "iqn.2003-01.org.example:t"); err != nil {
		t.Fatal(err)
	}
	if len(h.Disks()) != before || !slices.Equal(h.SMBMappings(), nil) {
		t.Fatalf("after disconnect: %d disks", len(h.Disks()))
	}
	if err := h.Connect(p, "iqn.2003-01.org.example:t", "MUTUAL_CHAP"); err == nil {
		t.Fatal("mutual CHAP without a secret succeeded")
	}
}

package hostmodel

import (
	"strings"
	"testing"
)

// canary is any fresh name: the model runs every statement that makes an
// entry, whatever it is called.
const canary = `C:\var\lib\kubelet\pods\Qx7-any_name`

// TestCanaries: a payload spliced into the script text runs in every
// quoting context it can break out of; the same payload in an
// environment variable, or inside a single-quoted literal, does not.
func TestCanaries(t *testing.T) {
	ni := `New-Item -ItemType Directory -Path '` + canary + `'`
	for _, c := range []struct {
		name, script string
		runs         bool
	}{
		{"env", `Get-Volume -UniqueId "$Env:volumeID" | Format-Volume`, false},
		{"unquoted", `Get-Item -Path x; ` + ni + `; #`, true},
		{"double-quoted", `Get-Volume -UniqueId "x"; ` + ni + `; ""`, true},
		{"subexpression in double quotes", `Get-Volume -UniqueId "$(` + ni + `)"`, true},
		{"subexpression in single quotes", `Get-Volume -UniqueId '$(` + ni + `)'`, false},
		{"single-quoted escaped", `Get-Volume -UniqueId 'x''; ` + strings.ReplaceAll(ni, "'", "''") + `; '''`, false},
		{"typographic quote", "Get-Volume -UniqueId 'x\u2019; " + ni + "; \u2019'", true},
		{"newline", "Get-Item x\n" + ni, true},
		{"pipeline", `Get-Item x | ` + ni, true},
		{"ampersand inside a statement (5.1 does not parse it)", `Get-Item x & ` + ni, false},
		{"call operator at a statement's start", `Get-Item x; & ` + ni, true},
		{"&& (5.1 does not parse it)", `Get-Item x && ` + ni, false},
		{"argument in parentheses", `Get-Volume -UniqueId x;md('` + canary + `')`, true},
		{"unterminated string", `Get-Volume -UniqueId "x; ` + ni, false},
		{"comment", `Get-Item x # ` + ni, false},
		{"backtick-escaped quote", "Get-Volume -UniqueId \"x`\"; " + ni + "\"", false},
		{"script block", `Where-Object { ` + ni + ` }`, true},
		{"ni, -Type abbreviated, any case", `x; nI -tYpE dIrEcToRy -p '` + canary + `'`, true},
		{"mkdir with a positional path", `x; MKDIR ` + canary, true},
		{"New-Item of a file", `x; New-Item '` + canary + `'`, true},
		{"csi-proxy's own link, its path from the environment", `New-Item -ItemType SymbolicLink $Env:smblocalPath -Target $Env:smbremotepath`, false},
		{"a link written in the script", `x; New-Item -ItemType SymbolicLink '` + canary + `' -Target C:\Windows`, false},
	} {
		h := testHost()
		made := h.PowerShell(c.script, "volumeID=x; "+ni)
		if got := len(made) > 0; got != c.runs {
			t.Errorf("%s: canary ran %v, want %v (statements %q)", c.name, got, c.runs, Statements(c.script))
		}
		if c.runs != h.Exists(canary) {
			t.Errorf("%s: canary directory exists %v", c.name, h.Exists(canary))
		}
		if len(h.Commands()) != 1 {
			t.Errorf("%s: %d commands recorded", c.name, len(h.Commands()))
		}
	}
}

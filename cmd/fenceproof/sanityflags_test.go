package main

import (
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fenceproof/fenceproof/sanity"
)

// TestSanityFlagsOverrideTheConfigFile: the flags given override the config
// file, the flags not given leave its values alone, and --secret replaces
// the file's secrets rather than adding to them.
func TestSanityFlagsOverrideTheConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sanity.yaml")
	yaml := "rpcTimeout: 5s\nseed: 42\nsecrets:\n  k: v1\nprofile:\n  hostBits: reject\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, o, code, ok := sanityConfig([]string{"--config", path, "--seed", "7", "--secret", "a=b", "--reports", "r"})
	if !ok {
		t.Fatalf("exit %d", code)
	}
	def := sanity.Defaults()
	switch {
	case cfg.Seed != 7:
		t.Errorf("seed %d, want 7 from the flag", cfg.Seed)
	case cfg.RPCTimeout.Duration != 5*time.Second:
		t.Errorf("rpcTimeout %s, want 5s from the file", cfg.RPCTimeout.Duration)
	case cfg.Profile.HostBits != sanity.HostBitsReject:
		t.Errorf("hostBits %s, want reject from the file", cfg.Profile.HostBits)
	case !maps.Equal(cfg.Secrets, map[string]string{"a": "b"}):
		t.Errorf("secrets %v, want only the flag's", cfg.Secrets)
	case cfg.ConnectTimeout != def.ConnectTimeout || o.reports != "r" || o.configFile != path:
		t.Errorf("connectTimeout %s, reports %q, config %q", cfg.ConnectTimeout.Duration, o.reports, o.configFile)
	}
	cfg, _, _, ok = sanityConfig([]string{"--secret", "a=b", "--secret", "c=d"})
	if !ok || !maps.Equal(cfg.Secrets, map[string]string{"a": "b", "c": "d"}) || cfg.Seed != 0 || cfg.RPCTimeout != def.RPCTimeout {
		t.Errorf("without a file: secrets %v, seed %d, rpcTimeout %s", cfg.Secrets, cfg.Seed, cfg.RPCTimeout.Duration)
	}
}

package sanity

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/fenceproof/fenceproof/endpoint"
)

// HostBits is the profile switch for CIDRs with host bits set, such as
// 192.0.2.5/24, which the spec leaves open.
type HostBits string

// The host-bit behaviours a driver may legitimately choose.
const (
	HostBitsNormalise HostBits = "normalise" // accepted and listed as 192.0.2.0/24
	HostBitsReject    HostBits = "reject"    // rejected with INVALID_ARGUMENT
	HostBitsEither    HostBits = "either"    // either of the above
)

// Requirement says whether an optional feature must be present.
type Requirement string

// Requirement values.
const (
	Required Requirement = "required"
	Optional Requirement = "optional"
)

// Profile covers the choices the spec leaves to the driver, so that a driver
// is not failed for a legitimate choice.
type Profile struct {
	// HostBits is how the driver treats CIDRs with host bits set.
	HostBits HostBits `json:"hostBits,omitempty"`
	// IPv6 says whether IPv6 blocks must be supported.
	IPv6 Requirement `json:"ipv6,omitempty"`
	// ListClusterFence says whether ListClusterFence must be implemented.
	// Rules that need it to observe state are skipped when it is optional
	// and the driver answers UNIMPLEMENTED.
	ListClusterFence Requirement `json:"listClusterFence,omitempty"`
}

// Config is what a run of the suite is given. It holds no per-run state.
type Config struct {
	// Endpoint is the driver's address: unix:///path.sock or tcp://host:port.
	Endpoint string `json:"endpoint,omitempty"`
	// ConnectTimeout bounds the wait for the first connection.
	ConnectTimeout Duration `json:"connectTimeout,omitempty"`
	// RPCTimeout is the deadline of every single RPC.
	RPCTimeout Duration `json:"rpcTimeout,omitempty"`
	// Secrets are valid secrets; the suite also sends them missing and wrong.
	Secrets map[string]string `json:"secrets,omitempty"`
	// Parameters are the parameters the driver requires (e.g. clusterID);
	// the suite drops each in turn and expects INVALID_ARGUMENT.
	Parameters map[string]string `json:"parameters,omitempty"`
	// Profile holds the switches for what the spec leaves open.
	Profile Profile `json:"profile,omitempty"`
	// Destructive allows rules that fence wide prefixes outside the
	// documentation ranges. Never set it against a production cluster.
	Destructive bool `json:"destructive,omitempty"`
	// Strict makes SHOULD rules fail the run instead of warning.
	Strict bool `json:"strict,omitempty"`
	// Concurrency is how many requests the concurrency rules send at once.
	Concurrency int `json:"concurrency,omitempty"`
	// Seed drives the randomized rules; 0 picks one, which is printed.
	Seed int64 `json:"seed,omitempty"`
	// ScaleSize is how many blocks the scale rules fence (SCALE-001).
	ScaleSize int `json:"scaleSize,omitempty"`
	// Hold is how old the sentinel fence made at the start is, at least,
	// when EXPIRE-001 last reads it (default ExpiryMinimum, 20 s, even when
	// the run is shorter). Nightly CI sets it above the storage's default
	// blocklist expiry (one hour for Ceph); a lower value is allowed and
	// the report says it is below the default.
	Hold Duration `json:"hold,omitempty"`
	// RestartCommand restarts the driver (run with sh -c); empty skips the
	// durability rule RESTART-001.
	RestartCommand string `json:"restartCommand,omitempty"`
	// ObserveCommand prints the storage's fenced entries, one CIDR or
	// address per line (run with sh -c); the state rules read through it
	// when ListClusterFence is missing or broken.
	ObserveCommand string `json:"observeCommand,omitempty"`
	// EnforceCommand tries a write to the storage from an address, run as
	// `sh -c 'CMD ADDR'`, and says whether it was allowed or refused
	// (sanity/README.md); empty skips ENFORCE-001.
	EnforceCommand string `json:"enforceCommand,omitempty"`
	// EnforceTimeout bounds one run of the enforce command.
	EnforceTimeout Duration `json:"enforceTimeout,omitempty"`
	// Timeout is the run's time budget: rules that it does not reach, or
	// that it cuts, are NOT RUN (budget) and the run INCOMPLETE; the final
	// cleanup and its check (SUITE-001) run after it. Zero is
	// DefaultTimeout plus Hold.
	Timeout Duration `json:"timeout,omitempty"`
}

// optedIn says whether the run was given a rule's opt-in (Rule.OptIn).
func (c *Config) optedIn(flag string) bool {
	switch flag {
	case "--destructive":
		return c.Destructive
	case "--restart-command":
		return c.RestartCommand != ""
	case "--enforce-command":
		return c.EnforceCommand != ""
	}
	return false
}

// RunBudget is the run's time budget: Timeout, or DefaultTimeout plus the
// hold.
func (c *Config) RunBudget() time.Duration {
	if c.Timeout.Duration > 0 {
		return c.Timeout.Duration
	}
	return DefaultTimeout + c.Hold.Duration
}

// Duration is a time.Duration that reads "30s" style strings from YAML.
type Duration struct{ time.Duration }

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("invalid duration %q: %w", s, err)
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return []byte(`"` + d.String() + `"`), nil }

// Defaults returns a Config with the documented defaults filled in.
func Defaults() Config {
	return Config{
		ConnectTimeout: Duration{10 * time.Second},
		RPCTimeout:     Duration{30 * time.Second},
		Profile:        Profile{HostBits: HostBitsEither, IPv6: Required, ListClusterFence: Required},
		Concurrency:    8,
		ScaleSize:      1024,
		Hold:           Duration{ExpiryMinimum},
		EnforceTimeout: Duration{DefaultEnforceTimeout},
	}
}

// LoadFile reads a YAML config file over cfg and validates the result.
// Unknown fields and bad values are errors that name the file and the field.
func LoadFile(path string, cfg *Config) error {
	if err := DecodeFile(path, cfg); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	return nil
}

// DecodeFile reads a YAML config file over cfg without validating the
// result (a caller that applies more settings validates once, at the end).
// Unknown fields and values of the wrong type are errors that name the file
// and the field.
func DecodeFile(path string, cfg *Config) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	if err := yaml.UnmarshalStrict(b, cfg); err != nil {
		return fmt.Errorf("config %s: %s", path, cleanYAMLError(err))
	}
	return nil
}

func cleanYAMLError(err error) string {
	s := err.Error()
	for _, p := range []string{"error unmarshaling JSON: while decoding JSON: ", "error unmarshaling JSON: ", "json: "} {
		s = strings.ReplaceAll(s, p, "")
	}
	return s
}

// Validate checks every field and names the first bad one.
func (c *Config) Validate() error {
	var errs []error
	if c.Endpoint != "" {
		if _, err := endpoint.Parse(c.Endpoint, endpoint.Dial); err != nil {
			errs = append(errs, fmt.Errorf("field endpoint: %w", err))
		}
	}
	if c.ScaleSize < 1 || c.ScaleSize > 1<<20 {
		errs = append(errs, fmt.Errorf("field scaleSize: %d is not between 1 and 1048576", c.ScaleSize))
	}
	if c.Hold.Duration < 0 || c.Timeout.Duration < 0 {
		errs = append(errs, errors.New("fields hold and timeout: must not be negative"))
	}
	if c.ConnectTimeout.Duration <= 0 {
		errs = append(errs, errors.New("field connectTimeout: must be positive"))
	}
	if c.RPCTimeout.Duration <= 0 {
		errs = append(errs, errors.New("field rpcTimeout: must be positive"))
	}
	if c.EnforceTimeout.Duration <= 0 {
		errs = append(errs, errors.New("field enforceTimeout: must be positive"))
	}
	switch c.Profile.HostBits {
	case HostBitsNormalise, HostBitsReject, HostBitsEither:
	default:
		errs = append(errs, fmt.Errorf("field profile.hostBits: %q is not one of normalise, reject, either", c.Profile.HostBits))
	}
	for name, v := range map[string]Requirement{"profile.ipv6": c.Profile.IPv6, "profile.listClusterFence": c.Profile.ListClusterFence} {
		if v != Required && v != Optional {
			errs = append(errs, fmt.Errorf("field %s: %q is not one of required, optional", name, v))
		}
	}
	if c.Concurrency < 2 || c.Concurrency > 64 {
		errs = append(errs, fmt.Errorf("field concurrency: %d is not between 2 and 64", c.Concurrency))
	}
	for k, v := range c.Secrets {
		if k == "" || v == "" {
			errs = append(errs, errors.New("field secrets: keys and values must be non-empty"))
			break
		}
	}
	for k := range c.Parameters {
		if k == "" {
			errs = append(errs, errors.New("field parameters: keys must be non-empty"))
			break
		}
	}
	return errors.Join(errs...)
}

// LoadSecretsFile reads valid secrets from a YAML map (key: value), like
// csi-sanity's --secrets, so that they never sit on a command line.
func LoadSecretsFile(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("secrets file %s: %w", path, err)
	}
	var m map[string]string
	if err := yaml.UnmarshalStrict(b, &m); err != nil {
		return nil, fmt.Errorf("secrets file %s: want a map of key: value: %s", path, redactAll(cleanYAMLError(err), b))
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("secrets file %s: no secrets", path)
	}
	for k, v := range m {
		if k == "" || v == "" {
			return nil, fmt.Errorf("secrets file %s: keys and values must be non-empty", path)
		}
	}
	return m, nil
}

// redactAll drops a parse error's excerpt of the file when it may quote a
// value: the error names the problem, never the content.
func redactAll(msg string, content []byte) string {
	for _, line := range strings.Split(string(content), "\n") {
		if _, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(v) != "" && strings.Contains(msg, strings.TrimSpace(v)) {
			msg = strings.ReplaceAll(msg, strings.TrimSpace(v), Redacted)
		}
	}
	return msg
}
